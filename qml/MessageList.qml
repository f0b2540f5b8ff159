import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Messages of the open conversation in a centred column. Follows the newest
// text while a reply streams, unless the user scrolled up to read.
Item {
    id: root
    signal editRequested(real messageId, string text)
    signal suggestionPicked(string text)
    property alias listView: list

    ListView {
        id: list
        objectName: "messageList"
        anchors.fill: parent
        model: App.chat.messages
        clip: true
        spacing: 4
        boundsBehavior: Flickable.StopAtBounds
        cacheBuffer: 1200
        topMargin: 20
        bottomMargin: 20
        ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }

        // Stick to the bottom while the user has not scrolled away from it.
        property bool following: true
        onMovementEnded: following = atYEnd
        onContentHeightChanged: if (following) Qt.callLater(positionViewAtEnd)
        onCountChanged: { following = true; Qt.callLater(positionViewAtEnd) }

        Connections {
            target: App.chat
            function onCurrentChanged() { list.following = true; Qt.callLater(list.positionViewAtEnd) }
        }

        delegate: MessageDelegate {
            width: list.width
            columnWidth: Math.min(Theme.contentWidth, list.width - 48)
            onEditRequested: function(messageId, text) { root.editRequested(messageId, text) }
        }
    }

    IconButton {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 12
        visible: !list.following && list.count > 0 && !list.atYEnd
        iconName: "chevron"
        tip: qsTr("Jump to the newest message")
        background: Rectangle { radius: 16; color: Theme.surface; border.color: Theme.border }
        onClicked: { list.following = true; list.positionViewAtEnd() }
    }

    EmptyState {
        anchors.centerIn: parent
        width: Math.min(560, parent.width - 48)
        visible: list.count === 0
        onSuggestionPicked: function(text) { root.suggestionPicked(text) }
    }
}

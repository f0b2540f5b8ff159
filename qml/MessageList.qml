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

    // Opens at a message (a search result): scrolls it to the top and stops
    // following the newest text. Again once delegates have their real heights.
    function showMessage(messageId) {
        const model = App.chat.messages
        for (let row = 0; row < list.count; ++row) {
            if (model.get(row).messageId === messageId) {
                list.following = false
                list.positionViewAtIndex(row, ListView.Beginning)
                list.shownRow = row
                settle.restart()
                return true
            }
        }
        return false
    }
    Timer { id: settle; interval: 60; onTriggered: if (list.shownRow >= 0) list.positionViewAtIndex(list.shownRow, ListView.Beginning) }

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
        property int shownRow: -1   // the row showMessage scrolled to, until the user moves
        onMovementStarted: shownRow = -1
        onMovementEnded: following = atYEnd
        onContentHeightChanged: if (following) Qt.callLater(positionViewAtEnd)
        onCountChanged: { following = true; Qt.callLater(positionViewAtEnd) }

        Connections {
            target: App.chat
            function onCurrentChanged() { list.following = true; list.shownRow = -1; Qt.callLater(list.positionViewAtEnd) }
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

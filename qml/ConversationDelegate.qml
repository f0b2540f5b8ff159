import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// One conversation in the sidebar: title, a live marker while it generates
// (pulsing) or waits in the queue (its place), and a menu.
ItemDelegate {
    id: row
    objectName: "conversationRow"
    required property real conversationId
    required property string title
    required property string activity
    required property int queuePosition
    required property int index
    // While searching: the text around the match in a message, the match shown bold.
    required property string snippet
    required property int snippetMatchStart
    required property int snippetMatchLength
    property bool current: false
    property bool renaming: false

    signal activated()
    signal renameRequested()
    signal renameFinished(var title)
    signal deleteRequested()
    signal exportRequested(string format)

    implicitHeight: snippet.length > 0 ? Math.max(38, contentItem.implicitHeight + 12) : 38

    function escaped(t) { return t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;") }
    readonly property string snippetHtml: snippetMatchStart < 0 ? escaped(snippet)
        : escaped(snippet.slice(0, snippetMatchStart)) + "<b><font color=\"" + Theme.accent + "\">"
          + escaped(snippet.substr(snippetMatchStart, snippetMatchLength)) + "</font></b>"
          + escaped(snippet.slice(snippetMatchStart + snippetMatchLength))
    Accessible.name: row.activity === "waiting" ? qsTr("%1, waiting in the queue").arg(row.title)
                   : row.activity.length > 0 ? qsTr("%1, generating").arg(row.title) : row.title
    hoverEnabled: true
    leftPadding: 12
    rightPadding: 6
    onClicked: activated()
    // An ItemDelegate takes no focus by itself: every row is in the Tab order,
    // Up and Down move between rows (scrolling), Return opens the row (the
    // title editor takes its own Return).
    focusPolicy: Qt.StrongFocus
    Keys.onReturnPressed: activated()
    Keys.onEnterPressed: activated()
    Keys.onUpPressed: focusRow(index - 1)
    Keys.onDownPressed: focusRow(index + 1)
    onActiveFocusChanged: if (activeFocus && ListView.view) ListView.view.positionViewAtIndex(index, ListView.Contain)
    function focusRow(i) {
        const view = ListView.view
        if (!view || i < 0 || i >= view.count) return
        view.positionViewAtIndex(i, ListView.Contain)
        const item = view.itemAtIndex(i)
        if (item) item.forceActiveFocus(Qt.TabFocusReason)
    }
    onDoubleClicked: renameRequested()

    background: Item {
        Rectangle {
            anchors.fill: parent
            anchors.leftMargin: 8
            anchors.rightMargin: 8
            radius: Theme.smallRadius
            color: row.current ? Theme.selected : row.hovered ? Theme.hover : "transparent"
            FocusRing { shown: row.visualFocus; radius: Theme.smallRadius + 2 }
        }
    }

    contentItem: RowLayout {
        spacing: 8
        Item {
            Layout.leftMargin: 8
            implicitWidth: 8
            implicitHeight: 8
            Rectangle {
                id: dot
                anchors.centerIn: parent
                width: 8; height: 8; radius: 4
                visible: row.activity.length > 0
                color: row.activity === "waiting" ? Theme.warning : Theme.success
                SequentialAnimation on opacity {
                    running: row.activity === "decode" || row.activity === "prefill"
                    loops: Animation.Infinite
                    NumberAnimation { to: 0.3; duration: 600; easing.type: Easing.InOutQuad }
                    NumberAnimation { to: 1.0; duration: 600; easing.type: Easing.InOutQuad }
                    onStopped: dot.opacity = 1
                }
            }
        }
        ColumnLayout {
            visible: !row.renaming
            Layout.fillWidth: true
            spacing: 1
            Label {
                text: row.title
                elide: Text.ElideRight
                color: Theme.text
                font.weight: row.current ? Font.DemiBold : Font.Normal
                Layout.fillWidth: true
            }
            Label {
                objectName: "searchSnippet"
                visible: row.snippet.length > 0
                Layout.fillWidth: true
                text: row.snippetHtml
                textFormat: Text.StyledText
                wrapMode: Text.Wrap
                maximumLineCount: 2
                elide: Text.ElideRight
                color: Theme.muted
                font.pixelSize: Theme.smallSize
            }
        }
        Label {
            visible: !row.renaming && row.activity === "waiting"
            text: row.queuePosition > 0 ? qsTr("queued #%1").arg(row.queuePosition) : qsTr("queued")
            color: Theme.warning
            font.pixelSize: Theme.smallSize - 1
        }
        TextField {
            id: editor
            visible: row.renaming
            Layout.fillWidth: true
            text: row.title
            selectByMouse: true
            onVisibleChanged: if (visible) { text = row.title; forceActiveFocus(); selectAll() }
            Accessible.name: qsTr("Conversation title")
            onAccepted: row.renameFinished(text)
            Keys.onShortcutOverride: function(event) { event.accepted = event.key === Qt.Key_Escape }
            Keys.onEscapePressed: row.renameFinished(undefined)
            onActiveFocusChanged: if (!activeFocus && row.renaming) row.renameFinished(text)
        }
        IconButton {
            visible: !row.renaming && (row.hovered || menu.visible || row.current)
            opacity: row.hovered || menu.visible ? 1 : 0.6
            iconName: "more"
            iconSize: 16
            implicitWidth: 26
            implicitHeight: 26
            tip: qsTr("More")
            onClicked: menu.popup()
        }
    }

    Menu {
        id: menu
        MenuItem { text: qsTr("Rename"); onTriggered: row.renameRequested() }
        MenuItem { text: qsTr("Export as Markdown\u2026"); onTriggered: row.exportRequested("markdown") }
        MenuItem { text: qsTr("Export as JSON\u2026"); onTriggered: row.exportRequested("json") }
        MenuSeparator {}
        MenuItem { text: qsTr("Delete"); onTriggered: row.deleteRequested() }
    }
}

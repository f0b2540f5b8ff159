import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Short notices at the bottom (exported, imported, errors), and the undo
// offer after a conversation or a message is deleted.
Item {
    id: toast
    property string message
    property bool error: false
    property bool undo: false

    function show(text, isError) { message = text; error = isError; undo = false; hideTimer.restart() }
    function showUndo(text) { message = text; error = false; undo = true; hideTimer.restart() }

    implicitWidth: box.implicitWidth
    implicitHeight: box.implicitHeight
    visible: opacity > 0
    opacity: message.length > 0 ? 1 : 0
    Behavior on opacity { NumberAnimation { duration: 150 } }

    Timer { id: hideTimer; interval: toast.undo ? 8000 : 4500; onTriggered: toast.message = "" }

    Rectangle {
        id: box
        implicitWidth: Math.min(560, row.implicitWidth + 28)
        implicitHeight: row.implicitHeight + 16
        radius: Theme.radius
        color: Theme.dark ? "#e8eaed" : "#24292f"
        RowLayout {
            id: row
            anchors.fill: parent
            anchors.leftMargin: 14
            anchors.rightMargin: 8
            spacing: 12
            Label {
                text: toast.message
                color: toast.error ? (Theme.dark ? "#b3261e" : "#ffa198") : (Theme.dark ? "#1f2328" : "#ffffff")
                wrapMode: Text.Wrap
                Layout.maximumWidth: 440
            }
            AbstractButton {
                visible: toast.undo
                objectName: "undoButton"
                hoverEnabled: true
                padding: 6
                contentItem: Label { text: qsTr("Undo"); color: Theme.dark ? "#0b5cad" : "#79c0ff"; font.weight: Font.DemiBold }
                background: Rectangle { radius: 4; color: parent.hovered ? Qt.rgba(0.5, 0.5, 0.5, 0.2) : "transparent" }
                onClicked: { App.chat.undoRemove(); toast.message = "" }
            }
        }
    }
}

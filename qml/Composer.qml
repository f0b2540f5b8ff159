import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Where a message is written. Enter sends, Shift+Enter starts a new line,
// Esc stops the reply being written. Sending needs a loaded model and no
// reply already running in this conversation.
Item {
    id: root
    property alias text: input.text
    readonly property bool canSend: App.engine.ready && !App.chat.currentGenerating && input.text.trim().length > 0

    function focusInput() { input.forceActiveFocus() }
    function send() {
        if (!canSend) return
        if (App.chat.send(input.text)) input.text = ""
    }

    implicitHeight: frame.implicitHeight + hint.implicitHeight + 28

    Rectangle {
        id: frame
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 6
        width: Math.min(Theme.contentWidth, parent.width - 48)
        implicitHeight: Math.min(220, Math.max(52, input.implicitHeight + 18))
        radius: 14
        color: Theme.surface
        border.color: input.activeFocus ? Theme.accent : Theme.strongBorder
        border.width: input.activeFocus ? 1.5 : 1

        ScrollView {
            id: scroller
            anchors.left: parent.left
            anchors.right: sendButton.left
            anchors.top: parent.top
            anchors.bottom: parent.bottom
            anchors.leftMargin: 6
            anchors.rightMargin: 4
            TextArea {
                id: input
                objectName: "composerInput"
                wrapMode: TextEdit.Wrap
                selectByMouse: true
                color: Theme.text
                placeholderTextColor: Theme.faint
                font.pixelSize: Theme.baseSize
                verticalAlignment: TextEdit.AlignVCenter
                background: null
                placeholderText: App.engine.ready ? qsTr("Message %1\u2026").arg(App.engine.modelInfo.name || qsTr("the model"))
                               : App.engine.state === EngineHost.Loading ? qsTr("Waiting for the model to load\u2026")
                               : qsTr("Load a model to start chatting")
                Keys.onPressed: function(event) {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                            && !(event.modifiers & Qt.ShiftModifier)) {
                        event.accepted = true
                        root.send()
                    }
                }
            }
        }

        AbstractButton {
            id: sendButton
            objectName: App.chat.currentGenerating ? "stopButton" : "sendButton"
            anchors.right: parent.right
            anchors.bottom: parent.bottom
            anchors.margins: 9
            width: 34; height: 34
            hoverEnabled: true
            enabled: App.chat.currentGenerating || root.canSend
            Accessible.name: App.chat.currentGenerating ? qsTr("Stop") : qsTr("Send")
            onClicked: App.chat.currentGenerating ? App.chat.stop() : root.send()
            background: Rectangle {
                radius: 17
                color: !sendButton.enabled ? Theme.border
                     : App.chat.currentGenerating ? Theme.text
                     : sendButton.hovered ? Qt.lighter(Theme.accent, 1.1) : Theme.accent
            }
            contentItem: Item {
                Icon {
                    anchors.centerIn: parent
                    name: App.chat.currentGenerating ? "stop" : "send"
                    size: App.chat.currentGenerating ? 14 : 18
                    lineWidth: 2.2
                    color: App.chat.currentGenerating ? Theme.window : Theme.accentText
                }
            }
            ToolTip.visible: hovered
            ToolTip.delay: 600
            ToolTip.text: App.chat.currentGenerating ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
        }
    }

    Label {
        id: hint
        anchors.top: frame.bottom
        anchors.topMargin: 6
        anchors.horizontalCenter: parent.horizontalCenter
        color: Theme.faint
        font.pixelSize: Theme.smallSize - 1
        text: App.chat.currentGenerating ? qsTr("Esc stops this reply \u00b7 other conversations keep generating")
                                         : qsTr("Enter to send \u00b7 Shift+Enter for a new line")
    }
}

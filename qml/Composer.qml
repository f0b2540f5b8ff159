import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Where a message is written. Enter sends, Shift+Enter starts a new line,
// Esc stops the reply being written, Tab and Shift+Tab move the focus on (a
// keyboard user is not trapped here). Sending needs a loaded model and no
// reply already running in this conversation. Unsent text belongs to its
// conversation: it is kept (App.settings drafts) when another one opens, and
// comes back with it, also after a restart.
Item {
    id: root
    property alias text: input.text
    // A conversation on a remote engine needs no model loaded here.
    readonly property bool remote: App.chat.currentEngine.length > 0
    readonly property bool canSend: (App.engine.ready || remote) && !App.chat.currentGenerating && input.text.trim().length > 0
    // How long the cursor blinks after the last key or click (then it stays lit).
    property alias cursorRestMs: cursorRest.interval
    // The conversation whose draft the input holds.
    property real draftOwner: -1
    // A tool the reply must call ("" none, "required", a tool's name: AgentBar).
    property string forceTool: ""
    signal sent()

    function focusInput() { input.forceActiveFocus() }
    function send() {
        if (!canSend) return
        const text = input.text
        // Cleared first: sending may open a new conversation, which must not
        // inherit this text as its draft.
        input.text = ""
        const ok = root.forceTool.length > 0 ? App.chat.sendForcing(App.chat.currentId, text, root.forceTool)
                                              : App.chat.send(text)
        if (!ok) input.text = text
        else root.sent()
        saveDraft()
    }
    function saveDraft() {
        draftSaver.stop()
        if (draftOwner >= 0) App.settings.setDraft(draftOwner, input.text)
    }
    function switchDraft() {
        const id = App.chat.currentId
        if (id === draftOwner) return
        saveDraft()
        draftOwner = id
        input.text = App.settings.draft(id)
        input.cursorPosition = input.length
    }
    Component.onCompleted: switchDraft()
    Component.onDestruction: saveDraft()
    Connections {
        target: App.chat
        function onCurrentChanged() { root.switchDraft() }
    }
    Timer { id: draftSaver; interval: 400; onTriggered: root.saveDraft() }

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
                placeholderText: root.remote ? qsTr("Message the remote engine %1\u2026").arg(App.chat.currentEngine)
                               : App.engine.ready ? qsTr("Message %1\u2026").arg(App.engine.modelInfo.name || qsTr("the model"))
                               : App.engine.state === EngineHost.Loading ? qsTr("Waiting for the model to load\u2026")
                               : qsTr("Load a model to start chatting")
                Accessible.name: qsTr("Message")
                // A blinking cursor redraws the window twice a second for as
                // long as it blinks. As GTK does, it blinks for 10 s after the
                // last key or click, then stays lit without blinking (the
                // steady bar below), so an idle window draws nothing.
                property bool resting: false
                function wake() {
                    resting = false
                    if (activeFocus) { cursorVisible = true; cursorRest.restart() }
                }
                onActiveFocusChanged: wake()
                onCursorPositionChanged: wake()
                onRestingChanged: if (resting) cursorVisible = false
                Timer { id: cursorRest; interval: 10000; onTriggered: input.resting = true }
                Rectangle {
                    objectName: "restingCursor"
                    visible: input.resting && input.activeFocus
                    x: input.cursorRectangle.x
                    y: input.cursorRectangle.y
                    width: Math.max(1, input.cursorRectangle.width)
                    height: input.cursorRectangle.height
                    color: input.color
                }
                onTextChanged: {
                    wake()
                    if (App.chat.currentId === root.draftOwner) draftSaver.restart()
                }
                Keys.onTabPressed: function(event) { event.accepted = true; nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason) }
                Keys.onBacktabPressed: function(event) { event.accepted = true; nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason) }
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
                FocusRing { shown: sendButton.visualFocus; radius: 19 }
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
                                         : qsTr("Enter to send \u00b7 Shift+Enter for a new line \u00b7 Tab leaves the box")
    }
}

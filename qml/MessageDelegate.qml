import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// One message. User turns are bubbles on the right (edit and resend);
// replies are full-width, made of typed parts (Markdown text, code, thinking),
// with their state, usage and actions underneath. A turn with versions (edits,
// regenerations) has a "‹ 2/3 ›" switcher; a divider above a message says the
// model was not sent what comes before it (the context ran out).
Item {
    id: root
    required property real messageId
    required property string role
    required property string content
    required property var parts
    required property string state
    required property string error
    required property int promptTokens
    required property int completionTokens
    required property int cachedTokens
    required property real tokensPerSecond
    required property real timeToFirstTokenMs
    required property int draftTokens          // speculative decoding: drafts verified (0: none)
    required property int acceptedDraftTokens  // and kept
    required property string modelName        // replies: the model that wrote it ("" for older replies)
    required property string activity
    required property int queuePosition
    required property bool isLast
    required property bool saved      // false: the database has not taken this text yet
    required property int versionIndex
    required property int versionCount
    required property string finishReason
    required property bool contextStart
    required property var toolCalls   // the reply's tool calls (ToolCallCard)
    property real columnWidth: 800
    signal editRequested(real messageId, string text)

    readonly property bool isUser: role === "user"
    readonly property bool streaming: state === "streaming"
    readonly property bool hitTokenLimit: !isUser && state === "complete" && finishReason === "length"
    property bool editing: false
    function submitEdit() {
        if (editArea.text.trim().length === 0) return
        editing = false
        editRequested(messageId, editArea.text)
    }

    implicitHeight: column.implicitHeight + 16
    HoverHandler { id: hover }

    ColumnLayout {
        id: column
        width: root.columnWidth
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 8
        spacing: 6

        // ---- the context ran out above here ----------------------------
        RowLayout {
            objectName: "contextDivider"
            visible: root.contextStart
            Layout.fillWidth: true
            Layout.bottomMargin: 6
            spacing: 10
            Rectangle { Layout.fillWidth: true; height: 1; color: Theme.warning }
            Label {
                text: qsTr("Earlier messages are not sent to the model")
                color: Theme.warning
                font.pixelSize: Theme.smallSize
                font.weight: Font.DemiBold
                ToolTip.visible: dividerHover.hovered
                ToolTip.text: qsTr("The conversation no longer fits in the model's context. The policy in the conversation settings decides what is left out.")
                HoverHandler { id: dividerHover }
            }
            Rectangle { Layout.fillWidth: true; height: 1; color: Theme.warning }
        }

        // ---- user turn -------------------------------------------------
        RowLayout {
            visible: root.isUser && !root.editing
            Layout.alignment: Qt.AlignRight
            spacing: 6
            Row {
                Layout.alignment: Qt.AlignVCenter
                opacity: hover.hovered ? 1 : 0
                spacing: 0
                IconButton { iconName: "copy"; iconSize: 15; implicitWidth: 28; implicitHeight: 28; tip: qsTr("Copy"); onClicked: App.chat.copyText(root.content) }
                IconButton {
                    objectName: "editButton"
                    iconName: "pencil"; iconSize: 15; implicitWidth: 28; implicitHeight: 28
                    tip: qsTr("Edit and resend (the current text stays as a version)")
                    onClicked: { editArea.text = root.content; root.editing = true; editArea.forceActiveFocus() }
                }
                IconButton {
                    objectName: "deleteUserButton"
                    iconName: "trash"; iconSize: 15; implicitWidth: 28; implicitHeight: 28
                    tip: root.versionCount > 1 ? qsTr("Delete this version and the turns that followed it (undo in the notice below)")
                                               : qsTr("Delete message (undo in the notice below)")
                    enabled: !App.chat.currentGenerating
                    onClicked: App.chat.deleteMessage(root.messageId)
                }
            }
            VersionSwitcher { owner: root; visible: root.versionCount > 1 }
            Rectangle {
                Layout.maximumWidth: root.columnWidth * 0.8
                implicitWidth: userText.implicitWidth + 28
                implicitHeight: userText.implicitHeight + 20
                radius: 14
                color: Theme.userBubble
                TextEdit {
                    id: userText
                    x: 14; y: 10
                    width: Math.min(implicitWidth, root.columnWidth * 0.8 - 28)
                    text: root.isUser ? root.content : ""
                    textFormat: TextEdit.PlainText
                    wrapMode: TextEdit.Wrap
                    readOnly: true
                    selectByMouse: true
                    color: Theme.text
                    selectionColor: Theme.accent
                    font.pixelSize: Theme.baseSize
                }
            }
        }
        Rectangle {
            visible: root.editing
            Layout.fillWidth: true
            implicitHeight: editColumn.implicitHeight + 20
            radius: 12
            color: Theme.surface
            border.color: Theme.accent
            ColumnLayout {
                id: editColumn
                anchors.fill: parent
                anchors.margins: 10
                TextArea {
                    id: editArea
                    objectName: "editArea"
                    Layout.fillWidth: true
                    wrapMode: TextEdit.Wrap
                    selectByMouse: true
                    color: Theme.text
                    background: null
                    Accessible.name: qsTr("Edit message")
                    // Esc cancels the edit here; it does not stop a reply.
                    Keys.onShortcutOverride: function(event) { event.accepted = event.key === Qt.Key_Escape }
                    Keys.onEscapePressed: root.editing = false
                    // Ctrl+Enter submits, as in the peers; Enter alone is a new line.
                    Keys.onPressed: function(event) {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && (event.modifiers & Qt.ControlModifier)) {
                            event.accepted = true
                            root.submitEdit()
                        }
                    }
                    Keys.onTabPressed: function(event) { event.accepted = true; nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason) }
                    Keys.onBacktabPressed: function(event) { event.accepted = true; nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason) }
                }
                RowLayout {
                    Layout.alignment: Qt.AlignRight
                    Label { text: qsTr("Ctrl+Enter to resend"); color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
                    IconButton { text: qsTr("Cancel"); onClicked: root.editing = false }
                    IconButton {
                        objectName: "resendButton"
                        text: qsTr("Save and resend"); primary: true
                        enabled: editArea.text.trim().length > 0
                        onClicked: root.submitEdit()
                    }
                }
            }
        }

        // ---- assistant reply -------------------------------------------
        RowLayout {
            visible: !root.isUser
            spacing: 8
            Rectangle {
                width: 24; height: 24; radius: 12
                color: Theme.accentSoft
                Icon { anchors.centerIn: parent; name: "weir"; size: 15; color: Theme.accent; lineWidth: 2.2 }
            }
            Label {
                objectName: "replyModelName"
                text: root.modelName || qsTr("Assistant")
                font.weight: Font.DemiBold
                font.pixelSize: Theme.smallSize + 1
                color: Theme.text
            }
            Label {
                objectName: "notSavedLabel"
                visible: !root.saved
                text: qsTr("not saved")
                color: Theme.danger
                font.pixelSize: Theme.smallSize
                font.weight: Font.DemiBold
                ToolTip.visible: notSavedHover.hovered
                ToolTip.text: qsTr("Kept on screen; Weir saves it as soon as the database accepts writes again.")
                HoverHandler { id: notSavedHover }
            }
            Label {
                visible: root.streaming
                text: root.activity === "waiting"
                      ? (root.queuePosition > 0 ? qsTr("waiting in queue \u2014 #%1").arg(root.queuePosition) : qsTr("waiting for a free slot"))
                      : root.activity === "preparing" ? qsTr("preparing the prompt\u2026")
                      : root.activity === "prefill" ? qsTr("reading the prompt\u2026") : qsTr("writing\u2026")
                color: root.activity === "waiting" ? Theme.warning : Theme.muted
                font.pixelSize: Theme.smallSize
            }
        }

        Repeater {
            model: root.isUser ? null : root.parts
            delegate: Loader {
                required property string kind
                required property string text
                required property string language
                required property bool closed
                Layout.fillWidth: true
                Layout.leftMargin: 32
                sourceComponent: kind === "code" ? codeComponent : kind === "thinking" ? thinkingComponent
                               : kind === "quote" ? quoteComponent : textComponent
                Component {
                    id: textComponent
                    MarkdownText { markdown: parent ? parent.text : "" }
                }
                Component {
                    id: quoteComponent
                    QuoteBlock { text: parent ? parent.text : "" }
                }
                Component {
                    id: codeComponent
                    CodeBlock { code: parent ? parent.text : ""; language: parent ? parent.language : ""; complete: parent ? parent.closed : true }
                }
                Component {
                    id: thinkingComponent
                    ThinkingBlock { text: parent ? parent.text : ""; complete: parent ? parent.closed : true }
                }
            }
        }

        // The reply's tool calls, as cards.
        Repeater {
            model: root.isUser ? [] : root.toolCalls
            delegate: ToolCallCard {
                required property var modelData
                call: modelData
                Layout.fillWidth: true
                Layout.leftMargin: 32
            }
        }

        // Typing indicator before the first token.
        Row {
            visible: !root.isUser && root.streaming && root.content.length === 0
            Layout.leftMargin: 32
            spacing: 5
            Repeater {
                model: 3
                Rectangle {
                    required property int index
                    width: 7; height: 7; radius: 3.5
                    color: root.activity === "waiting" ? Theme.warning : Theme.faint
                    SequentialAnimation on opacity {
                        loops: Animation.Infinite
                        running: root.streaming && root.content.length === 0
                        PauseAnimation { duration: index * 160 }
                        NumberAnimation { to: 0.25; duration: 420 }
                        NumberAnimation { to: 1; duration: 420 }
                        PauseAnimation { duration: (2 - index) * 160 }
                    }
                }
            }
        }

        // Errors and interruptions, in place.
        Rectangle {
            visible: !root.isUser && (root.state === "failed" || root.state === "interrupted")
            Layout.fillWidth: true
            Layout.leftMargin: 32
            implicitHeight: notice.implicitHeight + 16
            radius: Theme.smallRadius
            color: root.state === "failed" ? Theme.dangerSoft : Theme.warningSoft
            RowLayout {
                id: notice
                anchors.fill: parent
                anchors.margins: 8
                spacing: 8
                Icon { name: "warning"; size: 16; color: root.state === "failed" ? Theme.danger : Theme.warning }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.text
                    text: root.state === "failed" ? qsTr("The engine could not answer: %1").arg(root.error || qsTr("unknown error"))
                                                  : qsTr("Interrupted: Weir closed while this reply was being written. The text above is what was saved.")
                }
                IconButton {
                    visible: root.isLast
                    text: qsTr("Retry")
                    iconName: "refresh"
                    enabled: (App.engine.ready || App.chat.currentEngine.length > 0) && !App.chat.currentGenerating
                    onClicked: App.chat.regenerate()
                }
            }
        }

        // Stopped at Max tokens, by the user or by a reload (which fails the
        // reply): say so, and offer to write on.
        RowLayout {
            objectName: "tokenLimitNotice"
            visible: root.hitTokenLimit || (root.isLast && (root.state === "cancelled" || root.state === "failed") && root.content.length > 0)
            Layout.leftMargin: 32
            spacing: 8
            Icon { visible: root.hitTokenLimit; name: "info"; size: 15; color: Theme.muted }
            Label {
                visible: root.hitTokenLimit
                text: qsTr("Stopped at the token limit")
                color: Theme.muted
                font.pixelSize: Theme.smallSize
            }
            IconButton {
                objectName: "continueButton"
                visible: root.isLast
                text: qsTr("Continue")
                iconName: "send"
                enabled: (App.engine.ready || App.chat.currentEngine.length > 0) && !App.chat.currentGenerating
                onClicked: App.chat.continueReply(root.messageId)
            }
        }

        // Usage and actions. A Flow, so that in a narrow window the figures
        // go to the next line instead of widening the whole column (a row's
        // width cannot go below its parts', and the column then pushes the
        // text and code past the window's edge).
        Flow {
            objectName: "replyFooter"
            visible: !root.isUser && !root.streaming
            Layout.leftMargin: 26
            Layout.fillWidth: true
            spacing: 2
            opacity: hover.hovered || root.isLast || root.versionCount > 1 ? 1 : 0
            VersionSwitcher { owner: root; visible: root.versionCount > 1 }
            IconButton { iconName: "copy"; iconSize: 15; implicitWidth: 28; implicitHeight: 28; tip: qsTr("Copy reply"); onClicked: App.chat.copyText(root.content) }
            IconButton {
                objectName: "regenerateButton"
                iconName: "refresh"; iconSize: 15; implicitWidth: 28; implicitHeight: 28
                tip: qsTr("Regenerate (this reply stays as a version)")
                enabled: (App.engine.ready || App.chat.currentEngine.length > 0) && !App.chat.currentGenerating
                onClicked: App.chat.regenerateMessage(root.messageId)
            }
            IconButton {
                objectName: "deleteReplyButton"
                iconName: "trash"; iconSize: 15; implicitWidth: 28; implicitHeight: 28
                tip: root.versionCount > 1 ? qsTr("Delete this version and the turns that followed it (undo in the notice below)")
                                           : qsTr("Delete message (undo in the notice below)")
                enabled: !App.chat.currentGenerating
                onClicked: App.chat.deleteMessage(root.messageId)
            }
            Label {
                objectName: "replyStats"
                width: Math.min(implicitWidth, parent.width)
                height: Math.max(28, implicitHeight)
                leftPadding: 6
                verticalAlignment: Text.AlignVCenter
                wrapMode: Text.Wrap
                color: Theme.faint
                font.pixelSize: Theme.smallSize
                text: {
                    const bits = []
                    if (root.state === "cancelled") bits.push(qsTr("stopped"))
                    if (root.completionTokens > 0) bits.push(Theme.count(root.completionTokens, qsTr("%1 token"), qsTr("%1 tokens")))
                    if (root.tokensPerSecond > 0) bits.push(qsTr("%1 tok/s").arg(root.tokensPerSecond.toFixed(1)))
                    if (root.timeToFirstTokenMs > 0) bits.push(qsTr("%1 s to first token").arg((root.timeToFirstTokenMs / 1000).toFixed(2)))
                    if (root.promptTokens > 0) bits.push(root.cachedTokens > 0 ? qsTr("prompt %1 (%2 cached)").arg(root.promptTokens).arg(root.cachedTokens)
                                                                             : qsTr("prompt %1").arg(root.promptTokens))
                    return bits.join("  \u00b7  ")
                }
            }
            Label {
                // Apart from the line above so that only this part explains itself on hover.
                objectName: "draftsLabel"
                visible: root.draftTokens > 0
                width: Math.min(implicitWidth, parent.width)
                height: Math.max(28, implicitHeight)
                leftPadding: 4
                verticalAlignment: Text.AlignVCenter
                wrapMode: Text.Wrap
                color: Theme.faint
                font.pixelSize: Theme.smallSize
                text: qsTr("\u00b7  drafts %1/%2 kept (%3%)").arg(root.acceptedDraftTokens).arg(root.draftTokens)
                          .arg(Math.round(100 * root.acceptedDraftTokens / Math.max(1, root.draftTokens)))
                HoverHandler { id: draftsHover }
                ToolTip {
                    // Wrapped to a few lines: it opens over the reply's last lines.
                    objectName: "draftsTip"
                    visible: draftsHover.hovered
                    width: Math.min(implicitWidth, 340)
                    x: (parent.width - width) / 2
                    text: qsTr("Speculative decoding: tokens guessed from earlier text and checked by the model in one pass. Each kept draft saved a decoding step; the reply is the same either way.")
                }
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The chat page: header (title, what the reply is doing, model, settings),
// the streaming message list, the composer, and the per-conversation settings
// panel on the right.
Rectangle {
    id: view
    color: Theme.window
    property alias composer: composer
    property alias messageList: messages
    property bool settingsOpen: false
    readonly property bool onRemote: App.chat.currentEngine.length > 0
    signal navigateRequested(string page)

    function focusComposer() { composer.focusInput() }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            // Header
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: 52
                color: Theme.window
                Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: Theme.border }
                RowLayout {
                    anchors.fill: parent
                    anchors.leftMargin: 20
                    anchors.rightMargin: 12
                    spacing: 10
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Layout.minimumWidth: 48     // the title elides; the chips keep their size
                        Layout.preferredWidth: 240
                        Label {
                            objectName: "chatTitle"
                            text: App.chat.currentId > 0 ? App.chat.currentTitle : qsTr("New conversation")
                            font.pixelSize: Theme.baseSize + 2
                            font.weight: Font.DemiBold
                            color: Theme.text
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: {
                                const a = App.chat.currentActivity
                                if (a === "waiting") return qsTr("Waiting for a free slot")
                                if (a === "preparing") return qsTr("Preparing the prompt\u2026")
                                if (a === "prefill") return qsTr("Reading the prompt\u2026")
                                if (a === "decode") return qsTr("Writing\u2026")
                                const n = App.chat.generatingCount
                                return n > 0 ? Theme.count(n, qsTr("%1 conversation generating"), qsTr("%1 conversations generating")) : ""
                            }
                            visible: text.length > 0
                            color: App.chat.currentActivity === "waiting" ? Theme.warning : Theme.muted
                            font.pixelSize: Theme.smallSize
                        }
                    }
                    Label {
                        objectName: "contextUsage"
                        Layout.alignment: Qt.AlignVCenter
                        // "89 / 192 tokens"; for a remote engine whose server does not list its
                        // context, the tokens used and "context not reported by NAME".
                        visible: App.chat.currentId > 0 && App.chat.contextText.length > 0
                        readonly property real share: App.chat.contextTokens > 0 ? App.chat.contextUsed / App.chat.contextTokens : 0
                        text: App.chat.contextText
                        color: share >= 0.9 ? Theme.danger : share >= 0.75 ? Theme.warning : Theme.muted
                        font.pixelSize: Theme.smallSize
                        Accessible.name: App.chat.contextTokens > 0
                                         ? qsTr("Context used: %1 of %2 tokens").arg(App.chat.contextUsed).arg(App.chat.contextTokens)
                                         : qsTr("Context used: %1").arg(App.chat.contextText)
                        ToolTip.visible: contextHover.hovered
                        ToolTip.text: App.chat.contextNote.length > 0
                                      ? qsTr("How many tokens this conversation uses (its latest reply and what it was sent); the server does not list its model's context length.")
                                      : qsTr("How much of the model's context this conversation uses (its latest reply and what it was sent).")
                        HoverHandler { id: contextHover }
                    }
                    // Narrow: the title keeps the room; the pool monitor is one click away in the sidebar.
                    // A conversation on a remote engine: the local pools and model say nothing
                    // about it (the chooser names its engine, each reply its model).
                    PoolGauge { objectName: "headerPoolGauge"; visible: view.width >= 640 && !view.onRemote; Layout.alignment: Qt.AlignVCenter; onClicked: view.navigateRequested("monitor") }
                    ConversationEngineChooser { objectName: "engineChooser"; Layout.alignment: Qt.AlignVCenter }
                    EndpointChip { Layout.alignment: Qt.AlignVCenter }
                    ModelChip { visible: !view.onRemote; Layout.alignment: Qt.AlignVCenter; onClicked: view.navigateRequested("model") }
                    IconButton {
                        objectName: "conversationSettingsButton"
                        iconName: "sliders"
                        checkable: true
                        checked: view.settingsOpen
                        highlighted: view.settingsOpen
                        enabled: App.chat.currentId > 0
                        tip: qsTr("Conversation settings")
                        onClicked: view.settingsOpen = !view.settingsOpen
                    }
                }
            }

            // The default model is a base model: say why its replies look odd.
            Banner {
                objectName: "baseModelNotice"
                property bool dismissedFor: false
                Layout.fillWidth: true
                info: true
                text: App.engine.ready && App.engine.modelInfo.baseModel && !dismissedFor
                      ? qsTr("%1 is a base model: it continues text rather than following instructions, so replies often repeat or ramble. For chat, open an instruction-tuned GGUF (usually named “-it”).")
                        .arg(App.engine.modelInfo.name || App.engine.modelInfo.fileName)
                      : ""
                actionText: qsTr("Models")
                onAction: view.navigateRequested("model")
                onDismissed: dismissedFor = true
            }

            LoadingCard {
                Layout.fillWidth: true
                Layout.maximumWidth: Theme.contentWidth
                Layout.alignment: Qt.AlignHCenter
                Layout.topMargin: 12
                Layout.leftMargin: 24
                Layout.rightMargin: 24
            }

            // Messages
            MessageList {
                id: messages
                Layout.fillWidth: true
                Layout.fillHeight: true
                onEditRequested: function(messageId, text) { App.chat.editAndResend(messageId, text) }
                onSuggestionPicked: function(text) { composer.text = text; composer.focusInput() }
            }

            AgentBar {
                id: agentBar
                objectName: "agentBar"
                visible: App.chat.toolsAvailable
                Layout.fillWidth: true
            }

            Composer {
                id: composer
                Layout.fillWidth: true
                forceTool: agentBar.forceTool
                onSent: agentBar.forceTool = ""
            }
        }

        // Wide: the settings panel's column beside the chat. Narrow: none; the
        // panel lies over the chat instead of squeezing it.
        Item {
            visible: settingsPanel.visible && !view.narrow
            Layout.preferredWidth: settingsPanel.width
            Layout.fillHeight: true
        }
    }

    readonly property bool narrow: width < 720
    ConversationSettingsPanel {
        id: settingsPanel
        visible: view.settingsOpen && App.chat.currentId > 0
        width: view.narrow ? Math.min(320, view.width - 32) : 320
        height: view.height
        x: view.width - width
        z: 2
        onCloseRequested: view.settingsOpen = false
    }
}

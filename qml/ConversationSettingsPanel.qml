import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Per-conversation settings: system prompt, sampling, and what to do when the
// context is full. Changes are saved
// as they are made (the prompt a moment after the last keystroke, and at once
// when another conversation opens) and apply to the next reply. Esc in the
// prompt leaves the box; it does not stop the reply being written.
Rectangle {
    id: panel
    objectName: "conversationSettingsPanel"
    color: Theme.sidebar
    signal closeRequested()

    property var values: App.chat.currentSettings
    function save(key, value) {
        const v = {}
        v[key] = value
        App.chat.setSettings(v)
    }

    // Settings of this conversation (the prompt as typed) kept as a named preset.
    function saveAsPreset(name) {
        if (promptSaver.running) savePrompt()   // typed but not yet saved; otherwise the stored prompt is current
        const problem = App.settings.presets.save(name, App.chat.currentSettings)
        if (problem.length > 0) { App.chat.notice(problem, true); return }
        presetCombo.currentIndex = presetCombo.find(name.trim())
        presetName.text = ""
        App.chat.notice(qsTr("Saved the preset \u201c%1\u201d").arg(name.trim()), false)
    }
    function applyPreset(name) {
        const p = App.settings.presets.preset(name)
        if (Object.keys(p).length === 0) return
        promptSaver.stop()
        App.chat.setSettings(p)
        systemPrompt.text = App.chat.currentSettings.systemPrompt
        App.chat.notice(qsTr("Applied the preset \u201c%1\u201d").arg(name), false)
    }

    // The conversation the prompt box holds the text of.
    property real promptOwner: -1
    function savePrompt() {
        promptSaver.stop()
        if (promptOwner > 0) App.chat.setSettingsOf(promptOwner, { systemPrompt: systemPrompt.text })
    }
    function showPromptOf(id) {
        if (id === promptOwner) return
        if (promptSaver.running) savePrompt()
        promptOwner = id
        systemPrompt.text = App.chat.currentSettings.systemPrompt
        systemPrompt.cursorPosition = systemPrompt.length  // typing goes on at the end
    }
    Connections {
        target: App.chat
        function onCurrentChanged() { panel.showPromptOf(App.chat.currentId) }
    }
    Component.onCompleted: showPromptOf(App.chat.currentId)
    Component.onDestruction: if (promptSaver.running) savePrompt()
    Timer { id: promptSaver; interval: 300; onTriggered: panel.savePrompt() }

    Rectangle { width: 1; height: parent.height; color: Theme.border }

    ScrollView {
        anchors.fill: parent
        anchors.leftMargin: 1
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 14

            RowLayout {
                Layout.fillWidth: true
                Layout.margins: 16
                Layout.bottomMargin: 0
                Label { text: qsTr("Conversation settings"); font.weight: Font.DemiBold; color: Theme.text; Layout.fillWidth: true }
                IconButton { iconName: "close"; tip: qsTr("Close settings"); onClicked: panel.closeRequested() }
            }

            // Presets: apply one to this conversation, or keep this one's settings as one.
            SettingLabel { text: qsTr("Preset") }
            RowLayout {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                spacing: 6
                ComboBox {
                    id: presetCombo
                    objectName: "presetCombo"
                    Layout.fillWidth: true
                    model: App.settings.presets.names
                    displayText: count === 0 ? qsTr("No presets yet") : currentIndex < 0 ? qsTr("Choose a preset") : currentText
                    enabled: count > 0
                    currentIndex: -1
                    Accessible.name: qsTr("Preset")
                }
                IconButton {
                    objectName: "applyPresetButton"
                    text: qsTr("Apply")
                    enabled: presetCombo.currentIndex >= 0
                    onClicked: panel.applyPreset(presetCombo.currentText)
                }
                IconButton {
                    iconName: "trash"
                    tip: qsTr("Delete this preset")
                    enabled: presetCombo.currentIndex >= 0
                    onClicked: { App.settings.presets.remove(presetCombo.currentText); presetCombo.currentIndex = -1 }
                }
            }
            RowLayout {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                spacing: 6
                TextField {
                    id: presetName
                    objectName: "presetNameField"
                    Layout.fillWidth: true
                    placeholderText: qsTr("Name for a new preset")
                    selectByMouse: true
                    Accessible.name: qsTr("Preset name")
                    onAccepted: panel.saveAsPreset(text)
                }
                IconButton {
                    objectName: "savePresetButton"
                    text: qsTr("Save as preset")
                    enabled: presetName.text.trim().length > 0
                    onClicked: panel.saveAsPreset(presetName.text)
                }
            }

            SettingLabel { text: qsTr("System prompt") }
            Rectangle {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                implicitHeight: 120
                radius: Theme.smallRadius
                color: Theme.surface
                border.color: systemPrompt.activeFocus ? Theme.accent : Theme.border
                ScrollView {
                    anchors.fill: parent
                    TextArea {
                        id: systemPrompt
                        objectName: "systemPromptInput"
                        wrapMode: TextEdit.Wrap
                        selectByMouse: true
                        color: Theme.text
                        placeholderText: qsTr("You are a helpful assistant.")
                        placeholderTextColor: Theme.faint
                        background: null
                        Accessible.name: qsTr("System prompt")
                        onTextChanged: if (App.chat.currentId === panel.promptOwner
                                           && text !== panel.values.systemPrompt) promptSaver.restart()
                        // Esc belongs to the box here (the window's Esc stops a reply).
                        Keys.onShortcutOverride: function(event) { event.accepted = event.key === Qt.Key_Escape }
                        Keys.onEscapePressed: { panel.savePrompt(); panel.forceActiveFocus() }
                        Keys.onTabPressed: function(event) { event.accepted = true; nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason) }
                        Keys.onBacktabPressed: function(event) { event.accepted = true; nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason) }
                    }
                }
            }

            SliderSetting {
                label: qsTr("Temperature"); from: 0; to: 2; stepSize: 0.05
                value: panel.values.temperature
                hint: value <= 0 ? qsTr("greedy") : ""
                onMoved: function(v) { panel.save("temperature", v) }
            }
            SliderSetting {
                label: qsTr("Top-p"); from: 0.05; to: 1; stepSize: 0.01
                value: panel.values.topP
                hint: value >= 1 ? qsTr("off") : ""
                onMoved: function(v) { panel.save("topP", v) }
            }
            SpinSetting {
                label: qsTr("Top-k"); from: 0; to: 1000
                value: panel.values.topK
                hint: value <= 0 ? qsTr("off") : ""
                onEdited: function(v) { panel.save("topK", v) }
            }
            SliderSetting {
                objectName: "minPSetting"
                label: qsTr("Min-p"); from: 0; to: 0.5; stepSize: 0.01
                value: panel.values.minP
                hint: value <= 0 ? qsTr("off") : ""
                onMoved: function(v) { panel.save("minP", v) }
            }
            SliderSetting {
                objectName: "repeatPenaltySetting"
                label: qsTr("Repeat penalty"); from: 1; to: 2; stepSize: 0.01
                value: panel.values.repeatPenalty
                hint: value <= 1 ? qsTr("off") : ""
                onMoved: function(v) { panel.save("repeatPenalty", v) }
            }
            SpinSetting {
                label: qsTr("Max tokens"); from: 1; to: 32768; stepSize: 64
                value: panel.values.maxTokens
                onEdited: function(v) { panel.save("maxTokens", v) }
            }
            ColumnLayout {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                spacing: 4
                RowLayout {
                    Label { text: qsTr("Seed"); color: Theme.text; Layout.fillWidth: true }
                    CheckBox {
                        id: randomSeed
                        text: qsTr("random")
                        Accessible.name: qsTr("Random seed")
                        checked: panel.values.seed < 0
                        onToggled: panel.save("seed", checked ? -1 : 42)
                    }
                }
                TextField {
                    Layout.fillWidth: true
                    enabled: !randomSeed.checked
                    text: panel.values.seed < 0 ? "" : String(panel.values.seed)
                    placeholderText: qsTr("a new seed for every reply")
                    validator: RegularExpressionValidator { regularExpression: /[0-9]{1,18}/ }
                    Accessible.name: qsTr("Seed")
                    onTextEdited: if (text.length > 0 && acceptableInput) panel.save("seed", Number(text))
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.faint
                    font.pixelSize: Theme.smallSize - 1
                    text: qsTr("The same seed and settings give the same reply.")
                }
            }

            // What happens when the conversation outgrows the model's context.
            ColumnLayout {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                spacing: 4
                Label { text: qsTr("When the context is full"); color: Theme.text }
                ComboBox {
                    id: contextPolicy
                    objectName: "contextPolicyBox"
                    Layout.fillWidth: true
                    Accessible.name: qsTr("When the context is full")
                    readonly property var names: ["", "stop", "dropOldest", "rollingWindow"]
                    readonly property var labels: [qsTr("Stop with a message"), qsTr("Drop the oldest turns"), qsTr("Rolling window")]
                    model: [qsTr("Default (%1)").arg(labels[Math.max(0, names.indexOf(App.chat.defaultContextPolicy) - 1)])].concat(labels)
                    currentIndex: Math.max(0, names.indexOf(panel.values.contextPolicy || ""))
                    onActivated: function(index) { panel.save("contextPolicy", names[index]) }
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.faint
                    font.pixelSize: Theme.smallSize - 1
                    text: {
                        const p = contextPolicy.names[contextPolicy.currentIndex] || App.chat.defaultContextPolicy
                        if (p === "stop") return qsTr("The next reply is refused with a message saying how much is over.")
                        if (p === "rollingWindow") return qsTr("The system prompt and the latest turns that fit are sent; the cut moves with every turn.")
                        return qsTr("The system prompt is kept; the oldest turns are dropped, enough to free half the context, so the cut moves rarely.")
                    }
                }
                IconButton {
                    objectName: "contextPolicyDefaultButton"
                    visible: contextPolicy.currentIndex > 0 && contextPolicy.names[contextPolicy.currentIndex] !== App.chat.defaultContextPolicy
                    text: qsTr("Use for new conversations")
                    onClicked: App.chat.defaultContextPolicy = contextPolicy.names[contextPolicy.currentIndex]
                }
            }

            RowLayout {
                Layout.leftMargin: 12
                Layout.rightMargin: 16
                Layout.bottomMargin: 16
                IconButton {
                    text: qsTr("Reset to defaults")
                    iconName: "undo"
                    onClicked: {
                        const d = App.chat.defaultSettings()
                        delete d.systemPrompt   // the prompt is kept
                        App.chat.setSettings(d)
                    }
                }
            }
        }
    }

    component SettingLabel: Label {
        Layout.leftMargin: 16
        Layout.rightMargin: 16
        Layout.bottomMargin: -8
        color: Theme.text
    }

    component SliderSetting: ColumnLayout {
        id: ss
        property string label
        property string hint
        property alias from: slider.from
        property alias to: slider.to
        property alias stepSize: slider.stepSize
        property real value
        signal moved(real v)
        Layout.fillWidth: true
        Layout.leftMargin: 16
        Layout.rightMargin: 16
        spacing: 0
        RowLayout {
            Label { text: ss.label; color: Theme.text; Layout.fillWidth: true }
            Label { text: ss.hint; color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
            Label { text: slider.value.toFixed(2); color: Theme.muted; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize }
        }
        Slider {
            id: slider
            Layout.fillWidth: true
            Accessible.name: ss.label
            value: ss.value
            onMoved: delay.restart()
            Timer { id: delay; interval: 250; onTriggered: ss.moved(Math.round(slider.value * 100) / 100) }
        }
    }

    component SpinSetting: RowLayout {
        id: sp
        property string label
        property string hint
        property alias from: spin.from
        property alias to: spin.to
        property alias stepSize: spin.stepSize
        property int value
        signal edited(int v)
        Layout.fillWidth: true
        Layout.leftMargin: 16
        Layout.rightMargin: 16
        Label { text: sp.label; color: Theme.text; Layout.fillWidth: true }
        Label { text: sp.hint; color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
        SpinBox {
            id: spin
            editable: true
            Accessible.name: sp.label
            value: sp.value
            implicitWidth: 120
            onValueModified: sp.edited(value)
        }
    }
}

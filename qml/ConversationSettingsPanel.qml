import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Per-conversation settings: system prompt and sampling. Changes are saved
// as they are made and apply to the next reply.
Rectangle {
    id: panel
    objectName: "conversationSettingsPanel"
    color: Theme.sidebar
    signal closeRequested()

    property var values: App.chat.currentSettings
    function save(key, value) {
        const v = Object.assign({}, App.chat.currentSettings)
        v[key] = value
        App.chat.setSettings(v)
    }

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
                IconButton { iconName: "close"; tip: qsTr("Close"); onClicked: panel.closeRequested() }
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
                        text: panel.values.systemPrompt
                        wrapMode: TextEdit.Wrap
                        selectByMouse: true
                        color: Theme.text
                        placeholderText: qsTr("You are a helpful assistant.")
                        placeholderTextColor: Theme.faint
                        background: null
                        onEditingFinished: if (text !== panel.values.systemPrompt) panel.save("systemPrompt", text)
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
                    onEditingFinished: if (text.length > 0) panel.save("seed", Number(text))
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.faint
                    font.pixelSize: Theme.smallSize - 1
                    text: qsTr("The same seed and settings give the same reply.")
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
                        d.systemPrompt = panel.values.systemPrompt
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
            value: sp.value
            implicitWidth: 120
            onValueModified: sp.edited(value)
        }
    }
}

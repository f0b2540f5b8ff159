import QtQuick
import QtTest
import Weir

// The conversation settings panel: min-p and repeat penalty are shown from
// the conversation's settings; "Save as preset" keeps them under a name and
// "Apply" puts a preset back onto the conversation.
Item {
    id: root
    width: 340; height: 900

    TestCase {
        name: "ConversationSettings"
        when: windowShown

        Component { id: panelComponent; ConversationSettingsPanel { width: 320; height: 900 } }

        function test_samplingAndPresets() {
            const id = App.chat.newConversation()
            App.chat.setSettings({ systemPrompt: "Answer in French.", minP: 0.2, repeatPenalty: 1.3, temperature: 0.4 })
            const panel = createTemporaryObject(panelComponent, root)
            compare(findChild(panel, "minPSetting").value, 0.2)
            compare(findChild(panel, "repeatPenaltySetting").value, 1.3)

            const name = findChild(panel, "presetNameField")
            name.text = "French"
            mouseClick(findChild(panel, "savePresetButton"))
            verify(App.settings.presets.contains("French"))
            compare(App.settings.presets.preset("French").repeatPenalty, 1.3)
            compare(name.text, "")
            const combo = findChild(panel, "presetCombo")
            compare(combo.currentText, "French")

            App.chat.setSettings({ systemPrompt: "", minP: 0, repeatPenalty: 1, temperature: 1.5 })
            compare(findChild(panel, "repeatPenaltySetting").value, 1)
            mouseClick(findChild(panel, "applyPresetButton"))
            compare(App.chat.currentSettings.systemPrompt, "Answer in French.")
            compare(App.chat.currentSettings.minP, 0.2)
            compare(App.chat.currentSettings.repeatPenalty, 1.3)
            compare(App.chat.currentSettings.temperature, 0.4)
            compare(findChild(panel, "systemPromptInput").text, "Answer in French.")
            App.settings.presets.remove("French")
            App.chat.remove(id)
        }
    }
}

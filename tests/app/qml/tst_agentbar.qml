import QtQuick
import QtTest
import Weir

// AgentBar: the tool forced for the next message belongs to the conversation
// it was chosen in; opening another conversation drops it, so a message sent
// there is not forced (and does not turn that conversation's tools on).
Item {
    id: root
    width: 800; height: 100

    TestCase {
        name: "AgentBar"
        when: windowShown

        Component { id: barComponent; AgentBar { width: 780 } }

        function test_forcedToolStaysWithItsConversation() {
            const first = App.chat.newConversation()
            App.chat.sendTo(first, "hello")   // not empty, so a new conversation is another one
            tryVerify(function() { return !App.chat.isGenerating(first) }, 10000)
            const second = App.chat.newConversation()
            App.chat.select(first)
            const bar = createTemporaryObject(barComponent, root)
            bar.forceTool = "calculator"

            // Changes to the same conversation keep the choice.
            App.chat.setSettings({ temperature: 0.5 })
            App.chat.select(first)
            compare(bar.forceTool, "calculator")

            App.chat.select(second)
            compare(bar.forceTool, "")
            App.chat.select(first)
            compare(bar.forceTool, "")   // dropped, not parked

            bar.forceTool = "required"
            App.chat.select(second)
            compare(bar.forceTool, "")
        }
    }
}

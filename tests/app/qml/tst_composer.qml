import QtQuick
import QtTest
import Weir

// Composer: Enter sends (and clears), Shift+Enter adds a line, nothing is
// sent while a reply runs in the conversation; the cursor rests when idle.
Item {
    id: root
    width: 800; height: 300

    TestCase {
        name: "Composer"
        when: windowShown

        Component { id: composerComponent; Composer { width: 780 } }

        function initTestCase() { tryVerify(() => App.engine.ready, 10000) }

        function test_enterSendsShiftEnterBreaksLine() {
            App.chat.newConversation()
            const composer = createTemporaryObject(composerComponent, root)
            const input = findChild(composer, "composerInput")
            input.forceActiveFocus()
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_X)
            compare(input.text, "hi\nx")
            compare(App.chat.messages.count, 0)

            keyClick(Qt.Key_Return)
            compare(input.text, "")
            compare(App.chat.messages.count, 2)
            compare(App.chat.messages.get(0).content, "hi\nx")
            verify(App.chat.currentGenerating)
            verify(!composer.canSend)

            // While the reply runs, Enter does not send.
            keyClick(Qt.Key_Y)
            keyClick(Qt.Key_Return)
            compare(App.chat.messages.count, 2)
            tryVerify(() => !App.chat.currentGenerating, 10000)
            verify(composer.canSend)
            keyClick(Qt.Key_Return)
            compare(App.chat.messages.count, 4)
            tryVerify(() => !App.chat.currentGenerating, 10000)
        }

        // The cursor stops blinking (nothing redraws) a while after the last
        // key, and shows steady; a key wakes the blink.
        function test_cursorRestsWhenIdle() {
            const composer = createTemporaryObject(composerComponent, root, { cursorRestMs: 50 })
            const input = findChild(composer, "composerInput")
            const steady = findChild(composer, "restingCursor")
            input.forceActiveFocus()
            verify(input.cursorVisible)
            verify(!steady.visible)
            tryVerify(function() { return !input.cursorVisible })
            verify(steady.visible)
            keyClick(Qt.Key_A)
            verify(input.cursorVisible)
            verify(!steady.visible)
            input.text = ""
        }

        function test_emptyTextIsNotSent() {
            App.chat.newConversation()
            const composer = createTemporaryObject(composerComponent, root)
            const input = findChild(composer, "composerInput")
            input.forceActiveFocus()
            keyClick(Qt.Key_Space)
            keyClick(Qt.Key_Return)
            compare(App.chat.messages.count, 0)
            verify(!composer.canSend)
        }
    }
}

import QtQuick
import QtTest
import Weir

// CodeBlock: the language label, the copy button's feedback, and appending
// streamed code to what is shown.
Item {
    id: root
    width: 600; height: 400

    TestCase {
        name: "CodeBlock"
        when: windowShown

        Component { id: blockComponent; CodeBlock { width: 500 } }
        Component { id: metricsComponent; FontMetrics {} }

        // Narrow and wide letters take the same room only in a fixed-pitch font.
        function isMonospace(font) {
            const metrics = createTemporaryObject(metricsComponent, root, { font: font })
            return metrics.advanceWidth("iiiiiiii") === metrics.advanceWidth("WWWWWWWW")
        }

        function test_codeIsMonospace() {
            const block = createTemporaryObject(blockComponent, root, { code: "int x = 1;", language: "cpp" })
            const body = findChild(block, "codeBody")
            verify(isMonospace(body.font), "code block font resolves to " + body.font.family)
            verify(!isMonospace(findChild(block, "codeLanguage").font))  // the check can fail
        }

        function test_labelCopyAndStreaming() {
            const block = createTemporaryObject(blockComponent, root, { code: "def f():", language: "py", complete: false })
            verify(block)
            const label = findChild(block, "codeLanguage")
            compare(label.text, "Python")
            block.code = "def f():\n    return 1"
            const body = findChild(block, "codeBody")
            compare(body.text, "def f():\n    return 1")   // appended to what was shown
            block.code = "something else"
            compare(body.text, "something else")          // replaced when it does not continue

            waitForRendering(block)
            const copy = findChild(block, "copyCodeButton")
            compare(copy.text, "Copy")
            mouseClick(copy)
            compare(copy.text, "Copied")
        }

        function test_longLineScrollsInsideTheBlock() {
            const longLine = "const veryLongName = [" + "1234567890, ".repeat(40) + "];"
            const block = createTemporaryObject(blockComponent, root, { code: "short\n" + longLine, language: "js" })
            waitForRendering(block)
            const body = findChild(block, "codeBody")
            const scroller = findChild(block, "codeScroller")
            compare(body.lineCount, 2)                      // not wrapped
            compare(block.width, 500)                       // the block keeps its width
            verify(scroller.width < 500)
            verify(scroller.contentWidth > 2 * scroller.width)
            verify(findChild(block, "codeScrollBar").visible)
            scroller.contentX = scroller.contentWidth - scroller.width   // the end of the line can be reached
            verify(body.mapToItem(block, body.width, 0).x <= block.width)

            const plain = createTemporaryObject(blockComponent, root, { code: "short", language: "js" })
            waitForRendering(plain)
            verify(!findChild(plain, "codeScrollBar").visible)
        }

        function test_unknownLanguageKeepsItsName() {
            const block = createTemporaryObject(blockComponent, root, { code: "fn main() {}", language: "rust" })
            compare(findChild(block, "codeLanguage").text, "Rust")
            const plain = createTemporaryObject(blockComponent, root, { code: "x", language: "" })
            compare(findChild(plain, "codeLanguage").text, "Code")
        }
    }
}

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

        function test_unknownLanguageKeepsItsName() {
            const block = createTemporaryObject(blockComponent, root, { code: "fn main() {}", language: "rust" })
            compare(findChild(block, "codeLanguage").text, "Rust")
            const plain = createTemporaryObject(blockComponent, root, { code: "x", language: "" })
            compare(findChild(plain, "codeLanguage").text, "Code")
        }
    }
}

import QtQuick
import QtTest
import Weir

// MarkdownText and QuoteBlock as a reply shows them: single line breaks kept,
// room between blocks, and a quote with its bar.
Item {
    id: root
    width: 600; height: 400

    TestCase {
        name: "MarkdownText"
        when: windowShown

        Component { id: textComponent; MarkdownText { width: 500 } }
        Component { id: quoteComponent; QuoteBlock { width: 500 } }

        function test_singleLineBreaksAreKept() {
            const text = createTemporaryObject(textComponent, root, { markdown: "Roses are red\nviolets are blue" })
            compare(text.lineCount, 2)
            text.markdown = "one line\n\nand a paragraph"
            compare(text.lineCount, 2)
        }

        // Room between blocks: taller than the same Markdown as Qt lays it out.
        Component { id: plainComponent; TextEdit { width: 500; textFormat: TextEdit.MarkdownText } }
        function test_blocksHaveRoom() {
            const md = "first\n\nsecond\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nlast"
            const text = createTemporaryObject(textComponent, root, { markdown: md })
            const plain = createTemporaryObject(plainComponent, root, { text: md, font: text.font })
            verify(text.implicitHeight > plain.implicitHeight + 20, text.implicitHeight + " vs " + plain.implicitHeight)
        }

        function test_quoteHasABar() {
            const quote = createTemporaryObject(quoteComponent, root, { text: "quoted\nsecond line" })
            waitForRendering(quote)
            const bar = findChild(quote, "quoteBar")
            const body = findChild(quote, "quoteText")
            verify(bar.visible)
            verify(bar.width >= 2)
            verify(bar.height >= body.height)
            verify(body.x > bar.width)
            compare(body.lineCount, 2)
        }
    }
}

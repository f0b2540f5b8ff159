import QtQuick
import Weir

// A block quote of a reply: a bar on the left and the quoted Markdown beside it.
Item {
    id: quote
    property string text: ""
    implicitHeight: body.implicitHeight + 4

    Rectangle {
        objectName: "quoteBar"
        width: 3
        height: parent.height
        radius: 1.5
        color: Theme.strongBorder
    }
    MarkdownText {
        id: body
        objectName: "quoteText"
        x: 14
        y: 2
        width: parent.width - x
        markdown: quote.text
        color: Theme.muted
    }
}

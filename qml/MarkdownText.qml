import QtQuick
import Weir

// A text part of a reply, rendered from Markdown (selectable, links open).
// Single newlines stay line breaks; tables have one border and a header row,
// blocks have room between them, code spans use the fixed-pitch family
// (MarkdownStyler turns the Markdown into styled rich text).
TextEdit {
    id: edit
    property string markdown: ""
    text: { styler.revision; return styler.html(markdown) }
    textFormat: TextEdit.RichText
    wrapMode: TextEdit.Wrap
    readOnly: true
    selectByMouse: true
    color: Theme.text
    selectionColor: Theme.accent
    selectedTextColor: Theme.accentText
    font.pixelSize: Theme.baseSize
    onLinkActivated: function(link) { Qt.openUrlExternally(link) }
    HoverHandler { cursorShape: edit.hoveredLink.length > 0 ? Qt.PointingHandCursor : Qt.IBeamCursor }

    MarkdownStyler {
        id: styler
        objectName: "markdownStyler"
        borderColor: Theme.strongBorder
        headerBackground: "transparent"   // TextEdit would shade the header's text, not its cells
        codeBackground: Theme.inlineCode
        monospaceFamily: Theme.monoFamily
        blockSpacing: Math.round(Theme.baseSize * 0.75)
        fontPixelSize: edit.font.pixelSize   // the HTML carries the size: zoom applies through it
    }
}

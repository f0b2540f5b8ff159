import QtQuick
import Weir

// A text part of a reply, rendered as Markdown (selectable, links open).
TextEdit {
    id: edit
    textFormat: TextEdit.MarkdownText
    wrapMode: TextEdit.Wrap
    readOnly: true
    selectByMouse: true
    color: Theme.text
    selectionColor: Theme.accent
    selectedTextColor: Theme.accentText
    font.pixelSize: Theme.baseSize
    onLinkActivated: function(link) { Qt.openUrlExternally(link) }
    HoverHandler { cursorShape: edit.hoveredLink.length > 0 ? Qt.PointingHandCursor : Qt.IBeamCursor }
}

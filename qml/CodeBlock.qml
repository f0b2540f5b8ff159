import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// A fenced code block: language label, copy button, highlighted monospace
// text. While the reply streams, new text is appended to the document rather
// than replacing it, so only the last lines are highlighted again. Lines are
// not wrapped: a long one scrolls sideways inside the block (scroll bar or a
// horizontal wheel), the message around it keeps its width.
Rectangle {
    id: block
    property string code: ""
    property string language: ""
    property bool complete: true

    implicitHeight: header.height + scroller.height + 20
    radius: Theme.radius
    color: Theme.codeBackground
    border.color: Theme.border
    clip: true

    onCodeChanged: body.sync()

    Rectangle {
        id: header
        width: parent.width
        height: 34
        color: Theme.codeHeader
        radius: Theme.radius
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: parent.radius; color: parent.color }
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: Theme.border }
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 14
            anchors.rightMargin: 6
            Label {
                objectName: "codeLanguage"
                text: highlighter.displayName
                color: Theme.muted
                font.pixelSize: Theme.smallSize
                font.weight: Font.DemiBold
                Layout.fillWidth: true
            }
            IconButton {
                id: copyButton
                property bool copied: false
                objectName: "copyCodeButton"
                iconName: copied ? "check" : "copy"
                text: copied ? qsTr("Copied") : qsTr("Copy")
                iconSize: 14
                implicitHeight: 26
                onClicked: { App.chat.copyText(block.code); copied = true; copiedTimer.restart() }
                Timer { id: copiedTimer; interval: 1500; onTriggered: copyButton.copied = false }
            }
        }
    }

    Flickable {
        id: scroller
        objectName: "codeScroller"
        readonly property bool overflows: contentWidth > width + 0.5
        x: 14
        y: header.height + 10
        width: parent.width - 28
        height: body.implicitHeight + (overflows ? 14 : 0)
        contentWidth: body.width
        contentHeight: body.implicitHeight
        flickableDirection: Flickable.HorizontalFlick
        boundsBehavior: Flickable.StopAtBounds
        // Dragging selects text; scrolling is the bar's and the wheel's.
        interactive: false
        clip: true
        ScrollBar.horizontal: ScrollBar {
            objectName: "codeScrollBar"
            policy: scroller.overflows ? ScrollBar.AlwaysOn : ScrollBar.AlwaysOff
        }
        WheelHandler {
            target: null
            orientation: Qt.Horizontal
            onWheel: function(event) {
                const most = Math.max(0, scroller.contentWidth - scroller.width)
                scroller.contentX = Math.max(0, Math.min(most, scroller.contentX - event.angleDelta.x / 2))
            }
        }

        TextEdit {
            id: body
            objectName: "codeBody"
            width: Math.max(implicitWidth, scroller.width)
            textFormat: TextEdit.PlainText
            wrapMode: TextEdit.NoWrap
            readOnly: true
            selectByMouse: true
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
            font.family: Theme.monoFamily
            font.pixelSize: Theme.smallSize + 0.5

            property string shown: ""
            function sync() {
                const next = block.code
                if (next === shown) return
                if (shown.length > 0 && next.startsWith(shown)) insert(length, next.substring(shown.length))
                else text = next
                shown = next
            }
            Component.onCompleted: sync()
        }
    }

    CodeHighlighter {
        id: highlighter
        document: body.textDocument
        language: block.language
        dark: Theme.dark
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The model's thinking (<think> ... </think>): folded once it is complete.
ColumnLayout {
    id: root
    property string text: ""
    property bool complete: true
    property bool expanded: !complete
    spacing: 4

    AbstractButton {
        id: toggle
        hoverEnabled: true
        onClicked: root.expanded = !root.expanded
        contentItem: RowLayout {
            spacing: 6
            Icon { name: "chevron"; size: 14; color: Theme.muted; rotation: root.expanded ? 0 : -90 }
            Label {
                text: root.complete ? qsTr("Thought") : qsTr("Thinking\u2026")
                color: Theme.muted
                font.pixelSize: Theme.smallSize
                font.italic: true
            }
        }
        background: null
    }
    Rectangle {
        visible: root.expanded
        Layout.fillWidth: true
        implicitHeight: thought.implicitHeight + 8
        color: "transparent"
        Rectangle { width: 2; height: parent.height; color: Theme.border }
        Label {
            id: thought
            x: 12
            width: parent.width - 12
            text: root.text
            wrapMode: Text.Wrap
            color: Theme.muted
            font.pixelSize: Theme.smallSize + 1
        }
    }
}

import QtQuick
import Weir

// The ring around a control that has the keyboard focus (its visualFocus):
// put inside the control's background, sized to it.
Rectangle {
    property bool shown: false
    objectName: "focusRing"
    anchors.fill: parent
    anchors.margins: -2
    color: "transparent"
    border.width: 2
    border.color: Theme.accent
    visible: shown
}

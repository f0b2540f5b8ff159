import QtQuick
import QtQuick.Controls
import Weir

// An on/off switch drawn as a pill in the app's colours (Fusion's own is a
// square box that looks out of place next to the rounded controls).
Switch {
    id: control
    padding: 2
    spacing: text.length > 0 ? 8 : 0
    // The label's implicit width already holds the pill (its left padding).
    implicitWidth: (text.length > 0 ? contentItem.implicitWidth : indicator.implicitWidth) + leftPadding + rightPadding
    implicitHeight: Math.max(indicator.implicitHeight, contentItem.implicitHeight) + topPadding + bottomPadding
    indicator: Rectangle {
        implicitWidth: 40
        implicitHeight: 22
        x: control.leftPadding
        y: control.topPadding + (control.availableHeight - height) / 2
        radius: height / 2
        color: control.checked ? Theme.accent : Theme.strongBorder
        opacity: control.enabled ? 1 : 0.45
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.text
        Rectangle {
            x: control.checked ? parent.width - width - 3 : 3
            y: 3
            width: parent.height - 6
            height: width
            radius: width / 2
            color: "#ffffff"
            Behavior on x { NumberAnimation { duration: 120; easing.type: Easing.OutCubic } }
        }
    }
    // The label, when the switch has one, to the right of the pill.
    contentItem: Label {
        leftPadding: control.indicator.width + control.spacing
        text: control.text
        visible: control.text.length > 0
        color: Theme.text
        font: control.font
        verticalAlignment: Text.AlignVCenter
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// A flat button with a line icon, optional text and a tooltip.
AbstractButton {
    id: control
    property string iconName: ""
    property string tip: ""
    property color iconColor: enabled ? (highlighted ? Theme.accent : Theme.muted) : Theme.faint
    property real iconSize: 18
    property bool primary: false
    property bool danger: false
    property bool highlighted: false

    implicitHeight: 32
    implicitWidth: text.length > 0 ? contentRow.implicitWidth + 20 : 32
    hoverEnabled: true
    focusPolicy: Qt.TabFocus
    Accessible.name: tip || text

    contentItem: Item {
        RowLayout {
            id: contentRow
            anchors.centerIn: parent
            spacing: 6
            Icon {
                visible: control.iconName.length > 0
                name: control.iconName
                size: control.iconSize
                color: control.primary && control.enabled ? Theme.accentText : control.danger ? Theme.danger : control.iconColor
            }
            Label {
                visible: control.text.length > 0
                text: control.text
                color: !control.enabled ? Theme.faint : control.primary ? Theme.accentText
                     : control.danger ? Theme.danger : Theme.text
                font.pixelSize: Theme.smallSize + 1
                font.weight: control.primary && control.enabled ? Font.DemiBold : Font.Normal
            }
        }
    }

    background: Rectangle {
        radius: Theme.smallRadius
        // A disabled primary button is an outline with faint text: filled
        // grey with white bold text read as enabled in the dark theme.
        color: control.primary ? (control.enabled ? (control.down ? Qt.darker(Theme.accent, 1.15) : control.hovered ? Qt.lighter(Theme.accent, 1.08) : Theme.accent) : "transparent")
             : control.down ? Theme.selected : control.hovered || control.checked ? Theme.hover : "transparent"
        border.width: control.primary && !control.enabled ? 1 : 0
        border.color: Theme.border
        FocusRing { shown: control.visualFocus; radius: Theme.smallRadius + 2 }
    }

    ToolTip.visible: tip.length > 0 && hovered
    ToolTip.delay: 600
    ToolTip.text: tip
}

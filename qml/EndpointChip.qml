import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The endpoint toggle in the chat header: shows whether the model is being
// served and opens a popup with the switch and the URL to copy.
AbstractButton {
    id: chip
    objectName: "endpointChip"
    hoverEnabled: true
    implicitHeight: 30
    implicitWidth: row.implicitWidth + 20
    readonly property var ep: App.endpoint
    onClicked: popup.opened ? popup.close() : popup.open()
    // Space clicks a button; Return and Enter do too on a chip, as on a link.
    Keys.onReturnPressed: chip.clicked()
    Keys.onEnterPressed: chip.clicked()
    Accessible.name: qsTr("OpenAI-compatible endpoint")

    contentItem: Item {
        RowLayout {
            id: row
            anchors.centerIn: parent
            spacing: 6
            Icon { name: "plug"; size: 15; color: chip.ep.listening ? Theme.success : Theme.muted }
            Label {
                text: chip.ep.listening ? qsTr("API on") : qsTr("API")
                color: chip.ep.listening ? Theme.text : Theme.muted
                font.pixelSize: Theme.smallSize
            }
            Rectangle {
                visible: chip.ep.enabled && !chip.ep.listening && chip.ep.error.length > 0
                width: 8; height: 8; radius: 4
                color: Theme.danger
            }
            Label {
                visible: chip.ep.activeSessions > 0
                text: chip.ep.activeSessions
                color: Theme.accent
                font.pixelSize: Theme.smallSize
                font.weight: Font.DemiBold
            }
        }
    }
    background: Rectangle {
        radius: 15
        color: chip.hovered || popup.opened ? Theme.hover : "transparent"
        border.color: chip.ep.listening ? Theme.success : Theme.border
        FocusRing { shown: chip.visualFocus; radius: 17 }
    }
    ToolTip.visible: hovered && !popup.opened
    ToolTip.delay: 600
    ToolTip.text: ep.listening ? ep.url : qsTr("Serve this model as an OpenAI-compatible endpoint")

    Popup {
        id: popup
        objectName: "endpointPopup"
        y: chip.height + 6
        x: chip.width - width
        width: 380
        padding: 16
        focus: true  // so Esc closes it
        closePolicy: Popup.CloseOnEscape | Popup.CloseOnPressOutsideParent
        background: Rectangle { radius: Theme.radius; color: Theme.surface; border.color: Theme.border }
        contentItem: EndpointPanel { compact: true }
    }
}

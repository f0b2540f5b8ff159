import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The model in use, or what is happening to it (loading, failed). Opens the
// model page.
AbstractButton {
    id: chip
    objectName: "modelChip"
    hoverEnabled: true
    implicitHeight: 30
    implicitWidth: row.implicitWidth + 20
    readonly property int state: App.engine.state
    // Space clicks a button; Return and Enter do too on a chip, as on a link.
    Keys.onReturnPressed: chip.clicked()
    Keys.onEnterPressed: chip.clicked()

    contentItem: Item {
        RowLayout {
            id: row
            anchors.centerIn: parent
            spacing: 6
            Rectangle {
                width: 8; height: 8; radius: 4
                color: chip.state === EngineHost.Ready ? Theme.success
                     : chip.state === EngineHost.Loading ? Theme.warning
                     : chip.state === EngineHost.Failed ? Theme.danger : Theme.faint
            }
            Label {
                text: chip.state === EngineHost.Ready ? (App.engine.modelInfo.name || App.engine.modelInfo.fileName)
                    : chip.state === EngineHost.Loading ? qsTr("Loading\u2026")
                    : chip.state === EngineHost.Failed ? qsTr("Model failed to load")
                    : qsTr("No model")
                color: Theme.text
                font.pixelSize: Theme.smallSize
                elide: Text.ElideRight
                Layout.maximumWidth: 220
            }
            Label {
                visible: chip.state === EngineHost.Ready && (App.engine.modelInfo.quantization || "").length > 0
                text: App.engine.modelInfo.quantization || ""
                color: Theme.faint
                font.pixelSize: Theme.smallSize - 1
            }
        }
    }
    Accessible.name: qsTr("Model: %1").arg(App.engine.modelInfo.name || App.engine.modelInfo.fileName || qsTr("none"))
    background: Rectangle {
        radius: 15
        color: chip.hovered ? Theme.hover : "transparent"
        border.color: Theme.border
        FocusRing { shown: chip.visualFocus; radius: 17 }
    }
}

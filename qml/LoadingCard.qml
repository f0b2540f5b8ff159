import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Model loading progress (with cancel), or the reason loading failed, in place.
Rectangle {
    id: card
    visible: App.engine.state === EngineHost.Loading || App.engine.state === EngineHost.Failed
             || (App.engine.state === EngineHost.NoModel && App.engine.errorString.length > 0)
    implicitHeight: column.implicitHeight + 28
    radius: Theme.radius
    readonly property bool failed: App.engine.state === EngineHost.Failed
    color: failed ? Theme.dangerSoft : Theme.surface
    border.color: failed ? Theme.danger : Theme.border

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 14
        spacing: 8
        RowLayout {
            spacing: 8
            Icon { name: card.failed ? "warning" : "chip"; size: 18; color: card.failed ? Theme.danger : Theme.accent }
            Label {
                Layout.fillWidth: true
                font.weight: Font.DemiBold
                color: card.failed ? Theme.danger : Theme.text
                elide: Text.ElideMiddle
                text: App.engine.state === EngineHost.Loading
                      ? qsTr("Loading %1 (%2)\u2026").arg(App.engine.modelPath.split("/").pop()).arg(App.formatBytes(App.engine.loadingFileSize))
                      : card.failed ? qsTr("Could not load %1").arg(App.engine.modelPath.split("/").pop())
                      : qsTr("Loading stopped")
            }
            IconButton {
                objectName: "cancelLoadButton"
                visible: App.engine.state === EngineHost.Loading
                text: qsTr("Cancel")
                onClicked: App.engine.cancelLoad()
            }
            IconButton {
                visible: App.engine.state !== EngineHost.Loading && App.engine.modelPath.length > 0
                text: qsTr("Try again")
                iconName: "refresh"
                onClicked: App.loadModel(App.engine.modelPath)
            }
        }
        ProgressBar {
            visible: App.engine.state === EngineHost.Loading
            Layout.fillWidth: true
            indeterminate: true
        }
        Label {
            visible: App.engine.state === EngineHost.Loading
            text: qsTr("%1 s \u2014 reading weights and sizing the KV pools. The app stays usable meanwhile.").arg(App.engine.loadingSeconds.toFixed(1))
            color: Theme.muted
            font.pixelSize: Theme.smallSize
        }
        Label {
            visible: App.engine.state !== EngineHost.Loading
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: App.engine.errorString
            color: Theme.text
            font.family: card.failed ? Theme.monoFamily : Qt.application.font.family
            font.pixelSize: Theme.smallSize
        }
    }
}

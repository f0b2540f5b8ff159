import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// What an empty conversation shows: what the app is, and a few prompts.
ColumnLayout {
    id: root
    signal suggestionPicked(string text)
    spacing: 14

    Icon { Layout.alignment: Qt.AlignHCenter; name: "weir"; size: 44; lineWidth: 1.6; color: Theme.accent }
    Label {
        Layout.alignment: Qt.AlignHCenter
        text: App.engine.ready ? qsTr("Ask %1 anything").arg(App.engine.modelInfo.name || qsTr("the model"))
                               : App.engine.state === EngineHost.Loading ? qsTr("Loading the model\u2026")
                               : qsTr("Load a model to start")
        font.pixelSize: Theme.titleSize + 4
        font.weight: Font.DemiBold
        color: Theme.text
    }
    Label {
        Layout.fillWidth: true
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        color: Theme.muted
        text: qsTr("Conversations generate side by side: start one, switch, start another. "
                   + "The pool monitor shows what they hold in the KV cache.")
    }
    GridLayout {
        Layout.fillWidth: true
        Layout.topMargin: 6
        columns: 2
        columnSpacing: 8
        rowSpacing: 8
        Repeater {
            model: [qsTr("Explain continuous batching in two paragraphs"),
                    qsTr("Write a Python function that merges two sorted lists"),
                    qsTr("Give me three names for a river-side café"),
                    qsTr("What is a sliding-window attention layer?")]
            delegate: AbstractButton {
                id: chip
                required property string modelData
                Layout.fillWidth: true
                Layout.preferredWidth: 1
                hoverEnabled: true
                padding: 12
                Accessible.name: qsTr("Suggestion: %1").arg(chip.modelData)
                contentItem: Label { text: chip.modelData; color: Theme.text; font.pixelSize: Theme.smallSize + 1; wrapMode: Text.Wrap }
                background: Rectangle {
                    radius: Theme.radius
                    color: chip.hovered ? Theme.hover : Theme.surface
                    border.color: Theme.border
                    FocusRing { shown: chip.visualFocus; radius: Theme.radius + 2 }
                }
                onClicked: root.suggestionPicked(modelData)
            }
        }
    }
}

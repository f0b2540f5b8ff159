import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The window pool's concurrency-aware floor, term by term, and what to do
// when the configured pool is below it.
Rectangle {
    id: panel
    objectName: "sizingPanel"
    property SizingAdvisor advisor
    signal useFloor()
    signal useMaxRunning(int n)
    signal useFullFloor()
    signal useFullPool(var tokens)

    readonly property bool warning: advisor.windowBelowFloor || advisor.problems.length > 0
    implicitHeight: column.implicitHeight + 32
    radius: Theme.radius
    color: warning ? Theme.dangerSoft : Theme.surface
    border.color: warning ? Theme.danger : Theme.border

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 16
        spacing: 10

        RowLayout {
            spacing: 8
            Icon { name: panel.warning ? "warning" : "database"; size: 18; color: panel.warning ? Theme.danger : Theme.muted }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                font.weight: Font.DemiBold
                color: panel.warning ? Theme.danger : Theme.text
                text: !panel.advisor.hasModel ? qsTr("Pool sizing is checked once a model is loaded")
                    : !panel.advisor.applicable ? qsTr("This model has no sliding-window layers: only the full pool is used")
                    : panel.advisor.refusal.length > 0 ? panel.advisor.refusal
                    : panel.warning ? qsTr("These settings would not start the engine")
                    : qsTr("Window pool floor for %1 running requests: %2 tokens (%3)")
                        .arg(panel.advisor.maxRunning).arg(App.formatNumber(panel.advisor.windowFloor))
                        .arg(App.formatBytes(panel.advisor.windowFloor * panel.advisor.windowBytesPerToken))
            }
        }
        Label {
            visible: panel.advisor.windowBelowFloor
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.text
            text: qsTr("Below the floor, running requests can run out of window pages mid-reply. Weir refuses to start "
                       + "an engine configured like this.")
        }

        // The floor, term by term.
        GridLayout {
            visible: panel.advisor.applicable
            Layout.fillWidth: true
            columns: 3
            columnSpacing: 24
            rowSpacing: 3
            Repeater {
                model: panel.advisor.windowTerms
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 0
                    text: modelData.label
                    color: modelData.part ? Theme.muted : Theme.text
                    leftPadding: modelData.part ? 14 : 0
                    font.pixelSize: Theme.smallSize
                }
            }
            Repeater {
                model: panel.advisor.windowTerms
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 1
                    text: modelData.formula
                    color: Theme.faint
                    font.family: Theme.monoFamily
                    font.pixelSize: Theme.smallSize - 1
                }
            }
            Repeater {
                model: panel.advisor.windowTerms
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 2
                    Layout.alignment: Qt.AlignRight
                    text: App.formatNumber(modelData.tokens)
                    color: modelData.part ? Theme.muted : Theme.text
                    font.family: Theme.monoFamily
                    font.pixelSize: Theme.smallSize
                }
            }
            Rectangle { Layout.row: 7; Layout.column: 0; Layout.columnSpan: 3; Layout.fillWidth: true; height: 1; color: Theme.border }
            Label { Layout.row: 8; Layout.column: 0; text: qsTr("Floor, rounded up to a page"); font.weight: Font.DemiBold; color: Theme.text; font.pixelSize: Theme.smallSize }
            Label { Layout.row: 8; Layout.column: 1; text: qsTr("ceil_P(sum of the three above)"); color: Theme.faint; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize - 1 }
            Label { Layout.row: 8; Layout.column: 2; Layout.alignment: Qt.AlignRight; text: App.formatNumber(panel.advisor.windowFloor); font.weight: Font.DemiBold; color: panel.warning ? Theme.danger : Theme.text; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize }
        }
        Label {
            visible: panel.advisor.applicable
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.faint
            font.pixelSize: Theme.smallSize - 1
            text: qsTr("Per request: the window rounded up to pages, a page for the release boundary, the tokens written since the last release and the next decode page. Room for cached shared prefixes comes on top.")
        }

        RowLayout {
            visible: panel.advisor.windowBelowFloor
            spacing: 8
            IconButton {
                objectName: "useFloorButton"
                primary: true
                text: qsTr("Use the floor: %1 tokens").arg(App.formatNumber(panel.advisor.windowFloor))
                onClicked: panel.useFloor()
            }
            IconButton {
                objectName: "useMaxRunningButton"
                visible: panel.advisor.largestMaxRunning >= 1
                text: qsTr("Set max running to %1").arg(panel.advisor.largestMaxRunning)
                background: Rectangle { radius: Theme.smallRadius; color: parent.hovered ? Theme.hover : Theme.surface; border.color: Theme.strongBorder }
                onClicked: panel.useMaxRunning(panel.advisor.largestMaxRunning)
            }
            Label {
                visible: panel.advisor.largestMaxRunning < 1
                text: qsTr("This pool cannot serve even one request.")
                color: Theme.danger
            }
        }

        // The engine's own answer, with its weir-cli flags, for those who want them.
        Label {
            objectName: "engineRefusal"
            visible: panel.advisor.problems.length > 0
            Layout.fillWidth: true
            text: qsTr("Details: %1").arg(panel.advisor.problems.replace(/\n\s*/g, "; "))
            wrapMode: Text.Wrap
            color: Theme.muted
            font.family: Theme.monoFamily
            font.pixelSize: Theme.smallSize - 2
        }

        RowLayout {
            visible: panel.advisor.fullBelowFloor
            spacing: 8
            Icon { name: "warning"; size: 16; color: Theme.danger }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.danger
                text: qsTr("The full pool (%1 tokens) cannot hold one request of the longest allowed context: it needs %2.")
                      .arg(App.formatNumber(panel.advisor.effectiveFullTokens)).arg(App.formatNumber(panel.advisor.fullFloor))
            }
            IconButton { text: qsTr("Use %1").arg(App.formatNumber(panel.advisor.fullFloor)); onClicked: panel.useFullFloor() }
        }
        // The pools do not fit where they would live: offer the largest full pool that does.
        RowLayout {
            visible: panel.advisor.memoryProblem.length > 0 && panel.advisor.largestFittingFullPool > 0
            spacing: 8
            Icon { name: "warning"; size: 16; color: Theme.danger }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.danger
                // Results only: reading an input here would evaluate its binding, which
                // recomputes the results this text depends on (a binding loop).
                text: qsTr("A full pool of %1 tokens (%2) fits.")
                      .arg(App.formatNumber(panel.advisor.largestFittingFullPool))
                      .arg(App.formatBytes(panel.advisor.largestFittingFullPool * panel.advisor.fullBytesPerToken))
            }
            IconButton {
                objectName: "useFittingPoolButton"
                text: qsTr("Use %1").arg(App.formatNumber(panel.advisor.largestFittingFullPool))
                onClicked: panel.useFullPool(panel.advisor.largestFittingFullPool)
            }
        }
    }
}

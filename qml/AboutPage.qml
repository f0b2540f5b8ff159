import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// What this build is: versions, the syntax highlighter in use, where data lives.
Rectangle {
    id: page
    objectName: "aboutPage"
    color: Theme.window

    ColumnLayout {
        width: Math.min(700, parent.width - 48)
        x: (parent.width - width) / 2
        y: 24
        spacing: 16

        RowLayout {
            spacing: 12
            Icon { name: "weir"; size: 40; color: Theme.accent; lineWidth: 1.6 }
            PageHeader { title: qsTr("Weir %1").arg(App.version); subtitle: qsTr("A desktop LLM workstation: several conversations at once on one local model.") }
        }
        Card {
            Layout.fillWidth: true
            GridLayout {
                columns: 2
                columnSpacing: 24
                rowSpacing: 8
                Label { text: qsTr("Syntax highlighting"); color: Theme.muted }
                Label { objectName: "highlighterName"; text: App.highlighterName; color: Theme.text; wrapMode: Text.Wrap; Layout.fillWidth: true }
                Label { text: qsTr("Qt"); color: Theme.muted }
                Label { text: App.qtVersion; color: Theme.text }
                Label { text: qsTr("CPU"); color: Theme.muted }
                Label {
                    objectName: "cpuLine"
                    text: qsTr("%1 threads \u00b7 %2 \u00b7 kernels: %3").arg(App.settings.hardwareThreads)
                          .arg(App.settings.cpuFeatures || qsTr("baseline")).arg(App.settings.cpuKernels)
                    color: Theme.text; wrapMode: Text.Wrap; Layout.fillWidth: true
                }
                Label { text: qsTr("Conversations"); color: Theme.muted }
                Label { text: App.databasePath; color: Theme.text; wrapMode: Text.WrapAnywhere; Layout.fillWidth: true }
                Label { text: qsTr("Log file"); color: Theme.muted }
                Label {
                    objectName: "logFileLink"
                    // A link: opens the log in the desktop's text viewer.
                    text: "<a href=\"%1\">%2</a>".arg(App.pathToUrl(App.logFilePath)).arg(App.logFilePath)
                    textFormat: Text.StyledText
                    linkColor: Theme.accent
                    color: Theme.text
                    wrapMode: Text.WrapAnywhere
                    Layout.fillWidth: true
                    onLinkActivated: link => Qt.openUrlExternally(link)
                    HoverHandler { cursorShape: parent.hoveredLink ? Qt.PointingHandCursor : Qt.ArrowCursor }
                }
                Label { text: qsTr("Theme"); color: Theme.muted }
                Label {
                    objectName: "aboutTheme"
                    // Chosen in the settings, or followed from the desktop.
                    text: App.settings.theme === "dark" ? qsTr("dark (chosen in the settings)")
                        : App.settings.theme === "light" ? qsTr("light (chosen in the settings)")
                        : Theme.dark ? qsTr("dark (from the system palette)") : qsTr("light (from the system palette)")
                    color: Theme.text
                }
            }
        }
        Card {
            Layout.fillWidth: true
            GridLayout {
                columns: 2
                columnSpacing: 24
                rowSpacing: 6
                Repeater {
                    model: [["Ctrl+N", qsTr("New conversation")], ["Ctrl+F", qsTr("Search conversations")],
                            ["Esc", qsTr("Stop the reply being written")], ["Ctrl+,", qsTr("Engine settings")],
                            ["Enter", qsTr("Send")], ["Shift+Enter", qsTr("New line")]]
                    delegate: RowLayout {
                        required property var modelData
                        Layout.columnSpan: 1
                        spacing: 10
                        Rectangle {
                            implicitWidth: keyLabel.implicitWidth + 12; implicitHeight: keyLabel.implicitHeight + 6
                            radius: 4; color: Theme.raised; border.color: Theme.border
                            Label { id: keyLabel; anchors.centerIn: parent; text: modelData[0]; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize - 1; color: Theme.text }
                        }
                        Label { text: modelData[1]; color: Theme.muted }
                    }
                }
            }
        }
        RowLayout {
            IconButton { text: qsTr("Import conversation (JSON)\u2026"); iconName: "import"; onClicked: importDialog.start() }
        }
    }
    ImportDialog { id: importDialog }
}

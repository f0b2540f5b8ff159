import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Weir

// The tools agent conversations may use: each with its approval policy
// (ask / always / never), the workspace folder of the file tools, the shell
// switch, and the MCP servers (stdio: a command started with the login
// PATH), each with an enable switch, its status and its log.
Rectangle {
    id: page
    objectName: "toolsPage"
    color: Theme.window

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(Theme.contentWidth, parent.width - 48)
            x: (parent.width - width) / 2
            spacing: 14

            Item { implicitHeight: 12 }
            Label { text: qsTr("Tools"); font.pixelSize: Theme.titleSize; font.bold: true; color: Theme.text }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.muted
                text: qsTr("Switch tools on for a conversation with the Tools switch above its message box. The model then "
                           + "sees these tools; each call shows as a card. \u201cAsk\u201d waits for your Approve; writing a file "
                           + "and shell commands always ask.")
            }

            // Workspace folder and shell.
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: wsColumn.implicitHeight + 24
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                ColumnLayout {
                    id: wsColumn
                    anchors.fill: parent
                    anchors.margins: 12
                    spacing: 8
                    Label { text: qsTr("Workspace folder"); font.bold: true; color: Theme.text }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: folderField
                            objectName: "workspaceFolderField"
                            Accessible.name: qsTr("Workspace folder")
                            Layout.fillWidth: true
                            placeholderText: qsTr("No folder: the file tools refuse every call")
                            text: App.tools ? App.tools.workspaceFolder : ""
                            onEditingFinished: App.tools.workspaceFolder = text
                        }
                        Button { text: qsTr("Choose\u2026"); Accessible.name: qsTr("Choose the workspace folder"); onClicked: folderDialog.open() }
                    }
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        color: Theme.faint
                        font.pixelSize: Theme.smallSize
                        text: qsTr("list_files, read_file, search_files and write_file see only this folder: absolute paths, "
                                   + "\u201c..\u201d and symlinks that lead out of it are refused.")
                    }
                    RowLayout {
                        ToggleSwitch {
                            objectName: "shellSwitch"
                            Accessible.name: qsTr("Allow shell commands")
                            checked: App.tools ? App.tools.shellEnabled : false
                            onToggled: App.tools.shellEnabled = checked
                        }
                        Label {
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            color: Theme.text
                            text: qsTr("Shell commands (run_shell): every run is approved by you, stopped after 30 s, output capped at 16 KiB")
                        }
                    }
                }
            }

            // Tools and their policies.
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: toolColumn.implicitHeight + 24
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                ColumnLayout {
                    id: toolColumn
                    anchors.fill: parent
                    anchors.margins: 12
                    spacing: 6
                    Label { text: qsTr("Tools and approval"); font.bold: true; color: Theme.text }
                    Repeater {
                        model: App.tools ? App.tools.tools : []
                        delegate: RowLayout {
                            required property var modelData
                            Layout.fillWidth: true
                            spacing: 10
                            ColumnLayout {
                                Layout.fillWidth: true
                                spacing: 0
                                Label {
                                    text: modelData.name + (modelData.source !== "built-in" ? "  \u00b7  " + modelData.source : "")
                                    font.family: Theme.monoFamily
                                    color: Theme.text
                                }
                                Label {
                                    Layout.fillWidth: true
                                    text: modelData.description
                                    color: Theme.muted
                                    font.pixelSize: Theme.smallSize
                                    elide: Text.ElideRight
                                }
                            }
                            ComboBox {
                                objectName: "policy_" + modelData.name
                                Accessible.name: qsTr("Approval for %1").arg(modelData.name)
                                model: [qsTr("Ask"), qsTr("Always"), qsTr("Never")]
                                currentIndex: ["ask", "always", "never"].indexOf(modelData.policy)
                                onActivated: function(i) { App.tools.setPolicy(modelData.name, ["ask", "always", "never"][i]) }
                                ToolTip.visible: hovered && modelData.asksAlways
                                ToolTip.text: qsTr("Asks on every run whatever the policy: it changes things outside Weir")
                            }
                        }
                    }
                }
            }

            // MCP servers.
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: mcpColumn.implicitHeight + 24
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                ColumnLayout {
                    id: mcpColumn
                    anchors.fill: parent
                    anchors.margins: 12
                    spacing: 8
                    Label { text: qsTr("MCP servers"); font.bold: true; color: Theme.text }
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        color: Theme.faint
                        font.pixelSize: Theme.smallSize
                        text: App.tools && App.tools.loginPath.length > 0
                              ? qsTr("Started over stdio with your login shell's PATH: %1").arg(App.tools.loginPath)
                              : qsTr("Started over stdio with your login shell's PATH (so npx and uvx are found), or reached at a streamable HTTP URL.")
                    }
                    Repeater {
                        model: App.tools ? App.tools.servers : []
                        delegate: ColumnLayout {
                            id: serverRow
                            required property var modelData
                            property bool showLog: false
                            Layout.fillWidth: true
                            spacing: 4
                            RowLayout {
                                Layout.fillWidth: true
                                ToggleSwitch {
                                    objectName: "mcpSwitch_" + serverRow.modelData.name
                                    Accessible.name: qsTr("Use the MCP server %1").arg(serverRow.modelData.name)
                                    checked: serverRow.modelData.enabled
                                    onToggled: App.tools.setServerEnabled(serverRow.modelData.name, checked)
                                }
                                ColumnLayout {
                                    Layout.fillWidth: true
                                    spacing: 0
                                    Label { text: serverRow.modelData.name; font.bold: true; color: Theme.text }
                                    Label {
                                        Layout.fillWidth: true
                                        text: serverRow.modelData.command
                                        font.family: Theme.monoFamily
                                        font.pixelSize: Theme.smallSize
                                        color: Theme.muted
                                        elide: Text.ElideMiddle
                                    }
                                }
                                Label {
                                    objectName: "mcpStatus_" + serverRow.modelData.name
                                    text: serverRow.modelData.status
                                    color: serverRow.modelData.state === "ready" ? Theme.success
                                         : serverRow.modelData.state === "failed" ? Theme.danger : Theme.muted
                                    font.pixelSize: Theme.smallSize
                                    Layout.maximumWidth: 260
                                    elide: Text.ElideRight
                                }
                                Button { text: serverRow.showLog ? qsTr("Hide log") : qsTr("Log"); Accessible.name: text; onClicked: serverRow.showLog = !serverRow.showLog }
                                Button { text: qsTr("Remove"); Accessible.name: qsTr("Remove the MCP server %1").arg(serverRow.modelData.name); onClicked: App.tools.removeServer(serverRow.modelData.name) }
                            }
                            Rectangle {
                                visible: serverRow.showLog
                                Layout.fillWidth: true
                                implicitHeight: Math.min(200, logText.implicitHeight + 10)
                                color: Theme.codeBackground
                                radius: 4
                                clip: true
                                Label {
                                    id: logText
                                    x: 6; y: 5
                                    width: parent.width - 12
                                    text: serverRow.modelData.log.length > 0 ? serverRow.modelData.log : qsTr("(nothing on stderr yet)")
                                    font.family: Theme.monoFamily
                                    font.pixelSize: Theme.smallSize
                                    wrapMode: Text.WrapAnywhere
                                    textFormat: Text.PlainText
                                    color: Theme.muted
                                }
                            }
                        }
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: serverName
                            placeholderText: qsTr("Name")
                            Accessible.name: qsTr("New MCP server's name")
                            Layout.preferredWidth: 140
                        }
                        TextField {
                            id: serverCommand
                            Accessible.name: qsTr("New MCP server's command")
                            Layout.fillWidth: true
                            placeholderText: qsTr("Command (npx -y @modelcontextprotocol/server-filesystem ~/notes) or http://host:port/mcp")
                        }
                        Button {
                            text: qsTr("Add server")
                            Accessible.name: text
                            enabled: serverName.text.trim().length > 0 && serverCommand.text.trim().length > 0
                            onClicked: {
                                const problem = App.tools.addServer(serverName.text, serverCommand.text)
                                addProblem.text = problem
                                if (problem.length === 0) { serverName.text = ""; serverCommand.text = "" }
                            }
                        }
                    }
                    Label { id: addProblem; visible: text.length > 0; color: Theme.danger; Layout.fillWidth: true; wrapMode: Text.Wrap }
                }
            }
            Item { implicitHeight: 24 }
        }
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("Workspace folder for the file tools")
        onAccepted: App.tools.workspaceFolder = App.urlToPath(selectedFolder)
    }
}

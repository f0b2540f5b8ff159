import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// One tool call of a reply: the tool's name, its state, the arguments and,
// once it ran, the result and how long it took. A call waiting for the
// user (policy "ask", or a tool that writes) shows Approve and Deny.
Rectangle {
    id: root
    property var call: ({})
    readonly property string state: call.state || ""
    readonly property bool pending: state === "pending"
    readonly property string server: { App.tools.tools; return App.tools.serverOf(call.name || "") }
    // Open while it matters (waiting, failed) and for short results; a long one is a click away.
    property bool expanded: pending || state === "failed" || (call.result || "").length <= 400

    implicitHeight: content.implicitHeight + 16
    radius: Theme.smallRadius
    color: Theme.raised
    border.color: pending ? Theme.warning : state === "failed" ? Theme.danger : Theme.border
    border.width: 1

    function stateText() {
        switch (root.state) {
        case "pending": return qsTr("waiting for your approval")
        case "approved": return qsTr("approved")
        case "running": return qsTr("running\u2026")
        case "done": return qsTr("done in %1 ms").arg(Math.round(call.durationMs || 0))
        case "failed": return qsTr("failed after %1 ms").arg(Math.round(call.durationMs || 0))
        case "denied": return qsTr("denied")
        }
        return root.state
    }

    ColumnLayout {
        id: content
        anchors.fill: parent
        anchors.margins: 8
        spacing: 6

        AbstractButton {
            Layout.fillWidth: true
            onClicked: root.expanded = !root.expanded
            Accessible.name: root.server.length > 0
                             ? qsTr("Tool call %1 from %2, %3").arg(root.call.name || "").arg(root.server).arg(root.stateText())
                             : qsTr("Tool call %1, %2").arg(root.call.name || "").arg(root.stateText())
            background: null
            contentItem: RowLayout {
                spacing: 8
                Icon { name: "chevron"; size: 14; color: Theme.muted; rotation: root.expanded ? 0 : -90 }
                Label {
                    text: qsTr("Tool: %1").arg(root.call.name || "")
                    font.family: Theme.monoFamily
                    font.bold: true
                    color: Theme.text
                }
                // Which MCP server ran it (built-in tools have none).
                Label {
                    objectName: "toolServer"
                    visible: root.server.length > 0
                    text: qsTr("from %1").arg(root.server)
                    color: Theme.muted
                    font.pixelSize: Theme.smallSize
                }
                Label {
                    Layout.fillWidth: true
                    text: root.stateText()
                    color: root.state === "failed" || root.state === "denied" ? Theme.danger
                         : root.pending ? Theme.warning : root.state === "done" ? Theme.success : Theme.muted
                    font.pixelSize: Theme.smallSize
                    elide: Text.ElideRight
                }
            }
        }

        Label {
            visible: root.expanded
            Layout.fillWidth: true
            text: root.call.arguments || "{}"
            font.family: Theme.monoFamily
            font.pixelSize: Theme.smallSize
            wrapMode: Text.WrapAnywhere
            color: Theme.muted
            textFormat: Text.PlainText
        }

        Rectangle {
            visible: root.expanded && (root.call.result || "").length > 0
            Layout.fillWidth: true
            implicitHeight: result.implicitHeight + 10
            radius: 4
            color: Theme.codeBackground
            Label {
                id: result
                x: 6; y: 5
                width: parent.width - 12
                text: (root.call.result || "").length > 4000 ? root.call.result.substring(0, 4000) + "\u2026" : (root.call.result || "")
                font.family: Theme.monoFamily
                font.pixelSize: Theme.smallSize
                wrapMode: Text.WrapAnywhere
                textFormat: Text.PlainText
                color: root.state === "failed" ? Theme.danger : Theme.text
            }
        }

        RowLayout {
            visible: root.pending
            spacing: 8
            Button {
                objectName: "approveToolCall"
                text: qsTr("Approve")
                Accessible.name: qsTr("Approve the call of %1").arg(root.call.name || "")
                highlighted: true
                onClicked: App.chat.approveToolCall(root.call.id)
            }
            Button {
                objectName: "denyToolCall"
                text: qsTr("Deny")
                Accessible.name: qsTr("Deny the call of %1").arg(root.call.name || "")
                onClicked: App.chat.denyToolCall(root.call.id)
            }
        }
    }
}

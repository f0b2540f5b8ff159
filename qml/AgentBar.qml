import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Above the message box: whether this conversation offers the tools to the
// model, and for the next message only, a tool the reply must call (a tiny
// model rarely calls one on its own): "Any tool" or one by name.
Item {
    id: root
    // "" (the model decides), "required" or a tool's name; reset after each send.
    property string forceTool: ""
    // The conversation the tool was chosen in: the choice is for its next
    // message only, so opening another conversation drops it (else that
    // conversation's message would be forced, and its tools turned on).
    property real forceFor: 0
    onForceToolChanged: forceFor = App.chat.currentId
    Connections {
        target: App.chat
        function onCurrentChanged() { if (App.chat.currentId !== root.forceFor) root.forceTool = "" }
    }
    implicitHeight: row.implicitHeight + 4

    RowLayout {
        id: row
        anchors.horizontalCenter: parent.horizontalCenter
        width: Math.min(Theme.contentWidth, parent.width - 48)
        spacing: 8
        ToggleSwitch {
            id: toolsSwitch
            objectName: "toolsSwitch"
            text: qsTr("Tools")
            Accessible.name: qsTr("Offer the tools to the model in this conversation")
            checked: App.chat.currentToolsEnabled
            onToggled: {
                const id = App.chat.currentId > 0 ? App.chat.currentId : App.chat.newConversation()
                App.chat.setToolsEnabled(id, checked)
            }
        }
        Label {
            visible: toolsSwitch.checked
            text: qsTr("Call:")
            color: Theme.muted
            font.pixelSize: Theme.smallSize
        }
        ComboBox {
            id: forceBox
            objectName: "forceToolBox"
            visible: toolsSwitch.checked
            Layout.preferredWidth: 200
            Accessible.name: qsTr("Tool the next reply must call")
            readonly property var names: {
                const out = ["", "required"]
                for (const t of (App.tools ? App.tools.tools : [])) if (t.policy !== "never") out.push(t.name)
                return out
            }
            model: names.map(function(n) { return n === "" ? qsTr("as the model decides") : n === "required" ? qsTr("any tool (forced)") : n + qsTr(" (forced)") })
            currentIndex: Math.max(0, names.indexOf(root.forceTool))
            onActivated: function(i) { root.forceTool = names[i] }
            ToolTip.visible: hovered
            ToolTip.text: qsTr("For the next message: the reply must call this tool, with arguments valid for its schema")
        }
        Item { Layout.fillWidth: true }
        Label {
            visible: toolsSwitch.checked
            text: qsTr("up to %1 steps").arg(App.chat.maxAgentSteps)
            color: Theme.faint
            font.pixelSize: Theme.smallSize
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The OpenAI-compatible endpoint: the switch, the URL with a copy button,
// what it is doing, and (unless compact) port, API key and network access.
// Used in the engine settings page and in the chat header's popup.
ColumnLayout {
    id: panel
    property bool compact: false
    readonly property var ep: App.endpoint
    spacing: 10

    RowLayout {
        Layout.fillWidth: true
        spacing: 10
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 1
            Label { text: qsTr("OpenAI-compatible endpoint"); font.weight: Font.DemiBold; color: Theme.text }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.faint
                font.pixelSize: Theme.smallSize - 1
                text: qsTr("Scripts, editors and agents use this model through the same engine as your conversations.")
            }
        }
        ToggleSwitch {
            objectName: panel.compact ? "endpointSwitchCompact" : "endpointSwitch"
            checked: panel.ep.enabled
            enabled: panel.ep.available
            onToggled: panel.ep.enabled = checked
            Accessible.name: qsTr("Serve the model over HTTP")
        }
    }

    // URL and copy button, while listening.
    Rectangle {
        Layout.fillWidth: true
        visible: panel.ep.listening
        implicitHeight: 36
        radius: Theme.smallRadius
        color: Theme.codeBackground
        border.color: Theme.border
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 10
            anchors.rightMargin: 4
            spacing: 6
            Rectangle { width: 8; height: 8; radius: 4; color: Theme.success }
            Label {
                objectName: "endpointUrl"
                text: panel.ep.url
                font.family: Theme.monoFamily
                color: Theme.text
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            IconButton {
                id: copyButton
                objectName: "endpointCopyButton"
                iconName: copied.running ? "check" : "copy"
                tip: qsTr("Copy the URL")
                onClicked: { panel.ep.copyUrl(); copied.restart() }
                Timer { id: copied; interval: 1500 }
            }
        }
    }
    Label {
        visible: panel.ep.listening
        color: Theme.muted
        font.pixelSize: Theme.smallSize
        text: panel.ep.activeSessions > 0
              ? Theme.count(panel.ep.activeSessions, qsTr("%1 API request running now"), qsTr("%1 API requests running now")) + " \u00b7 " + qsTr("%1 served").arg(panel.ep.sessionsServed)
              : qsTr("Idle") + " \u00b7 " + Theme.count(panel.ep.sessionsServed, qsTr("%1 request served"), qsTr("%1 requests served"))
    }
    Label {
        objectName: "endpointError"
        Layout.fillWidth: true
        visible: text.length > 0
        wrapMode: Text.Wrap
        text: panel.ep.error
        color: panel.ep.waitingForModel ? Theme.muted : Theme.danger
        font.pixelSize: Theme.smallSize
    }
    Label {
        objectName: "endpointWarning"
        Layout.fillWidth: true
        visible: text.length > 0
        wrapMode: Text.Wrap
        text: panel.ep.warning
        color: Theme.warning
        font.pixelSize: Theme.smallSize
    }

    GridLayout {
        visible: !panel.compact
        Layout.fillWidth: true
        columns: 2
        columnSpacing: 12
        rowSpacing: 8
        Label { text: qsTr("Port"); color: Theme.text }
        SpinBox {
            objectName: "endpointPortField"
            Accessible.name: qsTr("Port")
            from: 0; to: 65535; editable: true
            value: panel.ep.port
            implicitWidth: 160
            // A port is a number, not a quantity: no thousands separator.
            textFromValue: function(v) { return String(v) }
            valueFromText: function(t) { return parseInt(t) || 0 }
            onValueModified: panel.ep.port = value
        }
        Label { text: qsTr("API key"); color: Theme.text }
        TextField {
            objectName: "endpointKeyField"
            Accessible.name: qsTr("API key")
            Accessible.description: qsTr("API key")  // what a password field is called
            Layout.fillWidth: true
            placeholderText: qsTr("none: any local program may call it")
            echoMode: TextInput.PasswordEchoOnEdit
            text: panel.ep.apiKey
            onEditingFinished: panel.ep.apiKey = text
        }
        Label { text: qsTr("Web pages"); color: Theme.text }
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 2
            TextField {
                objectName: "endpointCorsField"
                Layout.fillWidth: true
                placeholderText: qsTr("none: no web page may call it (e.g. https://app.example, or *)")
                text: panel.ep.corsOrigins
                onEditingFinished: panel.ep.corsOrigins = text
                Accessible.name: qsTr("Web page origins allowed to call the endpoint")
            }
            Label {
                objectName: "endpointCorsError"
                Layout.fillWidth: true
                visible: text.length > 0
                wrapMode: Text.Wrap
                text: panel.ep.corsError
                color: Theme.danger
                font.pixelSize: Theme.smallSize
            }
        }
        Label { text: qsTr("Network"); color: Theme.text }
        CheckBox {
            objectName: "endpointNetworkBox"
            Accessible.name: text
            text: qsTr("Accept connections from other computers")
            checked: panel.ep.allowNetwork
            onToggled: panel.ep.allowNetwork = checked
        }
    }
    Label {
        visible: !panel.compact && panel.ep.allowNetwork && !panel.ep.listening
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        color: Theme.warning
        font.pixelSize: Theme.smallSize
        text: qsTr("Every network interface will be bound: anyone who can reach this computer can use the model. Set an API key.")
    }
}

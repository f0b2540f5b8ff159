import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Remote engines: OpenAI-compatible servers on other machines (vLLM, SGLang,
// llama.cpp's server, Ollama, another Weir). The list, a form to add or edit
// one, a connection test that lists the server's models to choose from, and
// where the API keys are kept. The form keeps what was typed until a save
// succeeds, so a refused address or a failed test loses nothing.
Rectangle {
    id: page
    objectName: "remoteEnginesPage"
    color: Theme.window

    readonly property var remote: App.remote
    // "" while adding; the endpoint's saved name while editing it.
    property string editing: ""
    property string chosenModel: ""
    property string formError: ""

    function resetForm() {
        editing = ""
        chosenModel = ""
        formError = ""
        nameField.text = ""
        urlField.text = ""
        keyField.text = ""
        remote.resetTest()
    }
    function startEdit(name) {
        const e = remote.endpoint(name)
        if (!e.name) return
        remote.resetTest()
        editing = e.name
        chosenModel = e.model
        formError = ""
        nameField.text = e.name
        urlField.text = e.baseUrl
        keyField.text = ""
        nameField.forceActiveFocus()
    }
    function save() {
        formError = editing.length > 0
                ? remote.editEndpoint(editing, nameField.text, urlField.text, chosenModel, keyField.text.length > 0, keyField.text)
                : remote.addEndpoint(nameField.text, urlField.text, keyField.text, chosenModel)
        if (formError.length === 0) resetForm()
    }
    function test() {
        formError = ""
        remote.testConnection(urlField.text, keyField.text, editing)
    }

    // A listed model replaces a choice the server does not have.
    Connections {
        target: page.remote
        function onTestChanged() {
            const list = page.remote.testModels
            if (list.length === 0) return
            for (let i = 0; i < list.length; ++i) if (list[i].id === page.chosenModel) return
            page.chosenModel = list[0].id
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(1000, parent.width - 48)
            x: (parent.width - width) / 2
            spacing: 16

            PageHeader {
                Layout.topMargin: 24
                title: qsTr("Remote engines")
                subtitle: qsTr("Models served by other machines through an OpenAI-compatible API: vLLM, SGLang, llama.cpp's server, Ollama or another Weir.")
            }

            Label {
                objectName: "remoteLoadProblem"
                Layout.fillWidth: true
                visible: text.length > 0
                text: page.remote.loadProblem
                color: Theme.danger
                wrapMode: Text.Wrap
            }

            // The saved endpoints.
            Card {
                Layout.fillWidth: true
                ColumnLayout {
                    width: parent.width
                    spacing: 10
                    Label { text: qsTr("Endpoints"); font.weight: Font.DemiBold; color: Theme.text }
                    Label {
                        objectName: "remoteEmptyList"
                        visible: page.remote.endpoints.length === 0
                        text: qsTr("None yet. Add one below.")
                        color: Theme.faint
                    }
                    Repeater {
                        model: page.remote.endpoints
                        delegate: RowLayout {
                            id: row
                            required property var modelData
                            required property int index
                            objectName: "remoteEndpointRow_" + index
                            Layout.fillWidth: true
                            spacing: 12
                            Icon { name: "globe"; size: 18; color: Theme.muted }
                            ColumnLayout {
                                Layout.fillWidth: true
                                spacing: 1
                                Label { text: row.modelData.name; color: Theme.text; font.weight: Font.DemiBold; elide: Text.ElideRight; Layout.fillWidth: true }
                                Label {
                                    Layout.fillWidth: true
                                    elide: Text.ElideMiddle
                                    text: row.modelData.baseUrl + " \u00b7 " + (row.modelData.model.length > 0 ? row.modelData.model : qsTr("no model chosen"))
                                    color: row.modelData.model.length > 0 ? Theme.muted : Theme.warning
                                    font.pixelSize: Theme.smallSize
                                }
                            }
                            IconButton {
                                objectName: "remoteEditButton_" + row.index
                                iconName: "pencil"
                                tip: qsTr("Edit %1").arg(row.modelData.name)
                                onClicked: page.startEdit(row.modelData.name)
                            }
                            IconButton {
                                objectName: "remoteRemoveButton_" + row.index
                                iconName: "trash"
                                danger: true
                                tip: qsTr("Remove %1").arg(row.modelData.name)
                                onClicked: {
                                    const why = page.remote.removeEndpoint(row.modelData.name)
                                    if (why.length > 0) page.formError = why
                                    else if (page.editing === row.modelData.name) page.resetForm()
                                }
                            }
                        }
                    }
                    Label {
                        objectName: "remoteKeyStorage"
                        Layout.fillWidth: true
                        Layout.topMargin: 4
                        text: page.remote.keyStorage
                        color: page.remote.keysInKeyring ? Theme.faint : Theme.warning
                        font.pixelSize: Theme.smallSize - 1
                        wrapMode: Text.Wrap
                    }
                    // A key the keyring refused after the form was accepted (it answers later).
                    Label {
                        objectName: "remoteKeyProblem"
                        Layout.fillWidth: true
                        visible: text.length > 0
                        text: page.remote.keyProblem
                        color: Theme.danger
                        font.pixelSize: Theme.smallSize
                        wrapMode: Text.Wrap
                    }
                }
            }

            // Add or edit one.
            Card {
                objectName: "remoteForm"
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                ColumnLayout {
                    width: parent.width
                    spacing: 10
                    Label {
                        text: page.editing.length > 0 ? qsTr("Edit \u201c%1\u201d").arg(page.editing) : qsTr("Add a remote engine")
                        font.weight: Font.DemiBold
                        color: Theme.text
                    }
                    GridLayout {
                        Layout.fillWidth: true
                        columns: 2
                        columnSpacing: 12
                        rowSpacing: 8
                        Label { text: qsTr("Name"); color: Theme.text }
                        TextField {
                            id: nameField
                            objectName: "remoteNameField"
                            onTextEdited: page.formError = ""
                            Layout.fillWidth: true
                            placeholderText: qsTr("e.g. GPU box")
                            Accessible.name: qsTr("Name")
                        }
                        Label { text: qsTr("Base URL"); color: Theme.text }
                        TextField {
                            id: urlField
                            objectName: "remoteUrlField"
                            onTextEdited: page.formError = ""
                            Layout.fillWidth: true
                            placeholderText: "http://gpu-box:8000/v1"
                            font.family: Theme.monoFamily
                            inputMethodHints: Qt.ImhUrlCharactersOnly | Qt.ImhNoAutoUppercase
                            Accessible.name: qsTr("Base URL")
                        }
                        Label { text: qsTr("API key"); color: Theme.text }
                        TextField {
                            id: keyField
                            objectName: "remoteKeyField"
                            onTextEdited: page.formError = ""
                            Layout.fillWidth: true
                            echoMode: TextInput.PasswordEchoOnEdit
                            placeholderText: page.editing.length > 0 ? qsTr("leave empty to keep the saved key")
                                                                     : qsTr("none, if the server needs no key")
                            Accessible.name: qsTr("API key")
                            Accessible.description: qsTr("API key")
                        }
                        Label { text: qsTr("Model"); color: Theme.text }
                        RowLayout {
                            Layout.fillWidth: true
                            spacing: 8
                            ComboBox {
                                id: modelBox
                                objectName: "remoteModelBox"
                                visible: page.remote.testModels.length > 0
                                Layout.fillWidth: true
                                model: page.remote.testModels
                                textRole: "label"
                                valueRole: "id"
                                // Follows both the list and the choice (indexOfValue would not
                                // be told when the list changes).
                                currentIndex: {
                                    const list = page.remote.testModels
                                    for (let i = 0; i < list.length; ++i) if (list[i].id === page.chosenModel) return i
                                    return -1
                                }
                                onActivated: page.chosenModel = currentValue
                                Accessible.name: qsTr("Model")
                            }
                            Label {
                                visible: !modelBox.visible
                                Layout.fillWidth: true
                                text: page.chosenModel.length > 0 ? page.chosenModel
                                                                  : qsTr("Test the connection to list the server's models")
                                color: page.chosenModel.length > 0 ? Theme.text : Theme.faint
                                elide: Text.ElideRight
                            }
                            IconButton {
                                objectName: "remoteTestButton"
                                text: qsTr("Test connection")
                                iconName: "refresh"
                                enabled: urlField.text.trim().length > 0 && page.remote.testState !== "testing"
                                background: Rectangle { radius: Theme.smallRadius; color: parent.hovered ? Theme.hover : Theme.surface; border.color: Theme.border }
                                onClicked: page.test()
                            }
                        }
                    }
                    Label {
                        objectName: "remoteTestMessage"
                        Layout.fillWidth: true
                        visible: text.length > 0
                        text: page.remote.testMessage
                        wrapMode: Text.Wrap
                        font.pixelSize: Theme.smallSize
                        color: page.remote.testState === "failed" ? Theme.danger
                             : page.remote.testState === "ok" ? Theme.success : Theme.muted
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 8
                        Label {
                            objectName: "remoteFormError"
                            Layout.fillWidth: true
                            text: page.formError
                            color: Theme.danger
                            wrapMode: Text.Wrap
                            font.pixelSize: Theme.smallSize
                        }
                        IconButton {
                            objectName: "remoteCancelButton"
                            visible: page.editing.length > 0
                            text: qsTr("Cancel")
                            onClicked: page.resetForm()
                        }
                        IconButton {
                            objectName: "remoteSaveButton"
                            text: page.editing.length > 0 ? qsTr("Save") : qsTr("Add")
                            iconName: page.editing.length > 0 ? "check" : "plus"
                            primary: true
                            enabled: nameField.text.trim().length > 0 && urlField.text.trim().length > 0
                            onClicked: page.save()
                        }
                    }
                }
            }
        }
    }
}

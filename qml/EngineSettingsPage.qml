import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Engine settings. Edits are a draft checked live against the KV pools'
// concurrency-aware floors; nothing reaches the engine until Apply, which
// reloads the model with the new settings.
Rectangle {
    id: page
    objectName: "engineSettingsPage"
    color: Theme.window

    property var saved: App.settings.engine
    property var draft: Object.assign({}, saved)
    readonly property bool dirty: JSON.stringify(draft) !== JSON.stringify(saved)
    readonly property bool blocked: advisor.problems.length > 0

    function set(key, value) {
        const d = Object.assign({}, draft)
        d[key] = value
        draft = d
    }
    // Lets tests and the sizing buttons change a draft value.
    function setDraft(key, value) { set(key, value) }

    onSavedChanged: draft = Object.assign({}, saved)

    SizingAdvisor {
        id: advisor
        objectName: "sizingAdvisor"
        threads: page.draft.threads
        maxRunning: page.draft.maxRunning
        pageSize: page.draft.pageSize
        prefillChunk: page.draft.prefillChunk
        retainGap: page.draft.retainGap
        maxContext: page.draft.maxContext
        windowPoolTokens: page.draft.windowPoolTokens
        fullPoolTokens: page.draft.fullPoolTokens
        kvDtype: page.draft.kvDtype
        // The memory the pools would live in after Apply: the chosen device's
        // free bytes, plus the pools the running engine gives back there.
        readonly property var target: {
            const list = App.settings.devices
            const want = page.draft.device || ""
            let found = null
            for (let i = 0; i < list.length; ++i) {
                const d = list[i]
                if (want === "" ? (d.gpu && !found) : d.id === want) found = d
            }
            if (!found) for (let j = 0; j < list.length; ++j) if (list[j].id === "cpu") found = list[j]
            return found || ({})
        }
        readonly property var info: App.engine.modelInfo || ({})
        deviceFreeBytes: (target.freeBytes || 0)
                         + (info.device === target.id ? (info.fullPoolBytes || 0) + (info.windowPoolBytes || 0) : 0)
        deviceLabel: target.gpu ? target.name + " (" + target.id + ")" : qsTr("this computer")
        deviceIsGpu: target.gpu || false
        Component.onCompleted: setModelInfo(App.engine.modelInfo)
    }
    Connections {
        target: App.engine
        function onStateChanged() { advisor.setModelInfo(App.engine.modelInfo) }
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
                title: qsTr("Engine settings")
                subtitle: qsTr("Checked against the KV pool floors as you type. Applying reloads the model; replies in progress end.")
            }

            GridLayout {
                Layout.fillWidth: true
                columns: page.width > 960 ? 2 : 1
                columnSpacing: 16
                rowSpacing: 16

                Card {
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    ColumnLayout {
                        width: parent.width
                        spacing: 12
                        Label { text: qsTr("Compute"); font.weight: Font.DemiBold; color: Theme.text }
                        SettingRow {
                            id: deviceRow
                            label: qsTr("Device")
                            readonly property var devices: App.settings.devices
                            readonly property int chosen: {
                                for (let i = 0; i < devices.length; ++i)
                                    if (devices[i].id === (page.draft.device || "")) return i
                                return 0
                            }
                            readonly property var entry: devices[chosen] || ({})
                            help: entry.gpu
                                  ? qsTr("%1 \u00b7 %2 of %3 free \u00b7 weights and both KV pools in GPU memory").arg(entry.detail || "").arg(App.formatBytes(entry.freeBytes || 0)).arg(App.formatBytes(entry.totalBytes || 0))
                                  : qsTr("CPU features: %1 \u00b7 kernels: %2").arg(App.settings.cpuFeatures || qsTr("baseline")).arg(App.settings.cpuKernels)
                                    + (App.settings.gpuProblem ? "\n" + qsTr("No GPU: %1").arg(App.settings.gpuProblem) : "")
                            ComboBox {
                                objectName: "deviceBox"
                                implicitWidth: 260
                                model: deviceRow.devices
                                textRole: "label"
                                currentIndex: deviceRow.chosen
                                onActivated: function(index) { page.set("device", deviceRow.devices[index].id) }
                            }
                        }
                        SettingRow {
                            label: qsTr("Threads")
                            help: page.draft.threads === 0 ? qsTr("one per physical core: %1").arg(App.settings.physicalCores) : ""
                            NumberField { objectName: "threadsField"; from: 0; to: App.settings.engineLimits.threadsMax; value: page.draft.threads; onEdited: function(v) { page.set("threads", v) } }
                        }
                        SettingRow {
                            label: qsTr("Max running requests")
                            help: qsTr("Conversations generating at once; more wait in a queue")
                            NumberField { objectName: "maxRunningField"; from: 1; to: App.settings.engineLimits.maxRunningMax; value: page.draft.maxRunning; onEdited: function(v) { page.set("maxRunning", v) } }
                        }
                        SettingRow {
                            label: qsTr("Prefill chunk")
                            help: qsTr("Prompt tokens processed per step")
                            NumberField { objectName: "prefillChunkField"; from: 16; to: App.settings.engineLimits.prefillChunkMax; value: page.draft.prefillChunk; onEdited: function(v) { page.set("prefillChunk", v) } }
                        }
                        SettingRow {
                            label: qsTr("Max context")
                            help: page.draft.maxContext === 0 ? qsTr("the model's (%1 tokens)").arg(App.formatNumber(App.engine.modelInfo.contextLength || 0)) : ""
                            NumberField { from: 0; to: Math.min(1048576, App.settings.engineLimits.maxContextMax); value: page.draft.maxContext; onEdited: function(v) { page.set("maxContext", v) } }
                        }
                    }
                }

                Card {
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    ColumnLayout {
                        width: parent.width
                        spacing: 12
                        Label { text: qsTr("KV cache"); font.weight: Font.DemiBold; color: Theme.text }
                        SettingRow {
                            label: qsTr("KV dtype")
                            help: qsTr("%1 per token (both pools)").arg(App.formatBytes(advisor.windowBytesPerToken + advisor.fullBytesPerToken))
                            warn: advisor.problems.indexOf("--kv-cache-dtype") >= 0
                            ComboBox {
                                implicitWidth: 160
                                model: ["f16", "q8_0", "f32", "fp8_e4m3"]
                                currentIndex: Math.max(0, model.indexOf(page.draft.kvDtype))
                                onActivated: page.set("kvDtype", currentText)
                            }
                        }
                        SettingRow {
                            label: qsTr("Page size")
                            help: qsTr("Tokens per KV page")
                            NumberField { from: 1; to: App.settings.engineLimits.pageSizeMax; value: page.draft.pageSize; onEdited: function(v) { page.set("pageSize", v) } }
                        }
                        SettingRow {
                            label: qsTr("Full pool")
                            help: (page.draft.fullPoolTokens === 0 ? qsTr("automatic: %1 tokens, max running \u00d7 context").arg(App.formatNumber(advisor.effectiveFullTokens))
                                                                  : qsTr("tokens")) + " \u00b7 " + App.formatBytes(advisor.fullBytes)
                            warn: advisor.fullBelowFloor
                            NumberField { objectName: "fullPoolField"; from: 0; to: 100000000; stepSize: 1024; value: page.draft.fullPoolTokens; onEdited: function(v) { page.set("fullPoolTokens", v) } }
                        }
                        SettingRow {
                            label: qsTr("Window pool")
                            help: (page.draft.windowPoolTokens === 0 ? qsTr("automatic: the floor, %1 tokens").arg(App.formatNumber(advisor.windowFloor))
                                                                     : qsTr("tokens")) + " \u00b7 " + App.formatBytes(advisor.windowBytes)
                            warn: advisor.windowBelowFloor
                            NumberField { objectName: "windowPoolField"; from: 0; to: 100000000; stepSize: 1024; value: page.draft.windowPoolTokens; onEdited: function(v) { page.set("windowPoolTokens", v) } }
                        }
                        SettingRow {
                            label: qsTr("Release gap")
                            help: qsTr("Decode steps between out-of-window releases")
                            NumberField { from: 1; to: App.settings.engineLimits.retainGapMax; value: page.draft.retainGap; onEdited: function(v) { page.set("retainGap", v) } }
                        }
                    }
                }
            }

            SizingPanel {
                Layout.fillWidth: true
                advisor: advisor
                onUseFloor: page.set("windowPoolTokens", advisor.windowFloor)
                onUseMaxRunning: function(n) { page.set("maxRunning", n) }
                onUseFullFloor: page.set("fullPoolTokens", advisor.fullFloor)
                onUseFullPool: function(tokens) { page.set("fullPoolTokens", tokens) }
            }

            RowLayout {
                Layout.fillWidth: true
                spacing: 8
                IconButton { text: qsTr("Restore defaults"); iconName: "undo"; onClicked: page.draft = App.settings.engineDefaults() }
                Item { Layout.fillWidth: true; visible: !page.blocked }
                Label {
                    objectName: "applyRefusal"
                    visible: page.blocked
                    Layout.fillWidth: true
                    horizontalAlignment: Text.AlignRight
                    wrapMode: Text.Wrap
                    text: advisor.refusal
                    color: Theme.danger
                    font.pixelSize: Theme.smallSize
                }
                IconButton { text: qsTr("Revert"); enabled: page.dirty; onClicked: page.draft = Object.assign({}, page.saved) }
                IconButton {
                    objectName: "applyButton"
                    text: App.engine.modelPath.length > 0 ? qsTr("Apply and reload") : qsTr("Apply")
                    primary: true
                    enabled: page.dirty && !page.blocked
                    // Reloading ends the replies in progress: ask first when there are any.
                    onClicked: App.engine.activeRequests > 0 ? confirmApply.open() : App.applyEngineSettings(page.draft)
                }
            }

            // The app's look: applies at once, kept for the next start.
            Card {
                objectName: "appearanceCard"
                Layout.fillWidth: true
                Layout.topMargin: 8
                ColumnLayout {
                    width: parent.width
                    spacing: 12
                    Label { text: qsTr("Appearance"); font.weight: Font.DemiBold; color: Theme.text }
                    SettingRow {
                        label: qsTr("Theme")
                        help: qsTr("System follows the desktop's light or dark mode")
                        ComboBox {
                            objectName: "themeCombo"
                            implicitWidth: 160
                            textRole: "text"
                            valueRole: "value"
                            model: [{ value: "system", text: qsTr("System") }, { value: "light", text: qsTr("Light") },
                                    { value: "dark", text: qsTr("Dark") }]
                            currentIndex: Math.max(0, indexOfValue(App.settings.theme))
                            onActivated: App.settings.theme = currentValue
                        }
                    }
                    SettingRow {
                        label: qsTr("Text size")
                        help: qsTr("Ctrl+plus, Ctrl+minus, Ctrl+0 to reset")
                        RowLayout {
                            spacing: 4
                            IconButton { text: "\u2212"; tip: qsTr("Smaller text (Ctrl+minus)"); enabled: App.settings.zoom > App.settings.zoomMin; onClicked: App.settings.zoom = App.settings.zoom - 0.1 }
                            Label {
                                objectName: "zoomLabel"
                                text: qsTr("%1%").arg(Math.round(App.settings.zoom * 100))
                                color: Theme.text
                                horizontalAlignment: Text.AlignHCenter
                                Layout.preferredWidth: 56
                            }
                            IconButton { text: "+"; tip: qsTr("Larger text (Ctrl+plus)"); enabled: App.settings.zoom < App.settings.zoomMax; onClicked: App.settings.zoom = App.settings.zoom + 0.1 }
                            IconButton { text: qsTr("Reset"); enabled: App.settings.zoom !== 1; onClicked: App.settings.zoom = 1 }
                        }
                    }
                }
            }

            // Applies at once (no reload): the endpoint serves whatever model is loaded.
            Card {
                objectName: "endpointCard"
                Layout.fillWidth: true
                Layout.topMargin: 8
                Layout.bottomMargin: 24
                EndpointPanel { width: parent.width }
            }
        }
    }

    component SettingRow: RowLayout {
        id: sr
        property string label
        property string help
        property bool warn: false
        default property alias control: holder.data
        Layout.fillWidth: true
        spacing: 12
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 1
            Label { text: sr.label; color: sr.warn ? Theme.danger : Theme.text }
            Label { text: sr.help; visible: text.length > 0; color: Theme.faint; font.pixelSize: Theme.smallSize - 1; wrapMode: Text.Wrap; Layout.fillWidth: true }
        }
        Item {
            id: holder
            implicitWidth: children.length > 0 ? children[0].implicitWidth : 0
            implicitHeight: children.length > 0 ? children[0].implicitHeight : 0
        }
        // The field is named by its row's label for screen readers.
        Component.onCompleted: {
            for (let i = 0; i < holder.children.length; ++i) holder.children[i].Accessible.name = sr.label
        }
    }

    // Checked on every keystroke: the typed number goes to the draft as it is
    // (out of range too, so the advisor names the problem), not only on Enter.
    component NumberField: SpinBox {
        id: nf
        signal edited(int v)
        editable: true
        implicitWidth: 160
        onValueModified: edited(value)
        Connections {
            target: nf.contentItem
            ignoreUnknownSignals: true
            function onTextEdited() {
                const t = nf.contentItem.text.replace(/[^0-9-]/g, "")
                if (/^-?[0-9]+$/.test(t)) nf.edited(Number(t))
            }
        }
    }

    Dialog {
        id: confirmApply
        objectName: "applyConfirmDialog"
        anchors.centerIn: parent
        modal: true
        title: qsTr("Reload the model now?")
        // Fixed: the wrapped label's natural width would feed back into the
        // dialog's width (a binding loop while replies stream).
        contentWidth: 380
        Label {
            objectName: "applyConfirmText"
            width: 380
            wrapMode: Text.WordWrap
            text: App.engine.activeRequests === 1
                  ? qsTr("One reply is still being written. Reloading the model with the new settings ends it where it is.")
                  : qsTr("%1 replies are still being written. Reloading the model with the new settings ends them where they are.").arg(App.engine.activeRequests)
        }
        footer: DialogButtonBox {
            Button {
                objectName: "applyConfirmReload"
                text: qsTr("Reload and end them")
                DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole
                Accessible.name: text
            }
            Button {
                objectName: "applyConfirmCancel"
                text: qsTr("Keep writing")
                DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
                Accessible.name: text
            }
        }
        onAccepted: App.applyEngineSettings(page.draft)
    }
}

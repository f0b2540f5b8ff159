import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Weir

// The model picker and model info: every installed model (the model
// folders' GGUF files and the recent ones, summarised off the GUI thread by
// App.installedModels) with a one-click switch, or open any GGUF file; what
// the loaded model is (architecture, parameters,
// quantization, context, window, which layers slide) and its KV pools.
Rectangle {
    id: page
    objectName: "modelPage"
    color: Theme.window
    readonly property var info: App.engine.modelInfo
    readonly property var bundled: App.bundledModels
    readonly property var missing: bundled.filter(m => m.path === "")
    readonly property var installed: App.installedModels.models

    // Scanned each time the page is shown (files may have been added) and when
    // the recent models change.
    function rescan() { App.installedModels.refresh(App.settings.recentModels) }
    onVisibleChanged: if (visible) rescan()
    Component.onCompleted: if (visible) rescan()
    Connections {
        target: App.settings
        function onRecentModelsChanged() { if (page.visible) page.rescan() }
    }

    FileDialog {
        id: openDialog
        objectName: "openModelDialog"
        title: qsTr("Open a GGUF model")
        nameFilters: [qsTr("GGUF models (*.gguf)"), qsTr("All files (*)")]
        onAccepted: App.loadModel(App.urlToPath(selectedFile))
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(900, parent.width - 48)
            x: (parent.width - width) / 2
            spacing: 16

            PageHeader {
                Layout.topMargin: 24
                title: qsTr("Model")
                subtitle: qsTr("One model serves every conversation (and the API) at once.")
            }

            LoadingCard { Layout.fillWidth: true }

            Card {
                Layout.fillWidth: true
                visible: App.engine.ready
                ColumnLayout {
                    width: parent.width
                    spacing: 12
                    RowLayout {
                        spacing: 10
                        Icon { name: "chip"; size: 22; color: Theme.accent }
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label { text: page.info.name || page.info.fileName || ""; font.pixelSize: Theme.titleSize; font.weight: Font.DemiBold; color: Theme.text }
                            Label { text: page.info.path || ""; color: Theme.faint; font.pixelSize: Theme.smallSize - 1; elide: Text.ElideMiddle; Layout.fillWidth: true }
                        }
                    }
                    GridLayout {
                        Layout.fillWidth: true
                        columns: 4
                        columnSpacing: 24
                        rowSpacing: 8
                        Fact { label: qsTr("Architecture"); value: page.info.architecture || "" }
                        Fact { label: qsTr("Parameters"); value: App.formatCount(page.info.parameters || 0) }
                        Fact { label: qsTr("Quantization"); value: page.info.quantization || "" }
                        Fact { label: qsTr("File size"); value: App.formatBytes(page.info.fileSize || 0) }
                        Fact { label: qsTr("Context length"); value: App.formatNumber(page.info.contextLength || 0) }
                        Fact { label: qsTr("Sliding window"); value: page.info.slidingWindow > 0 ? App.formatNumber(page.info.slidingWindow) : qsTr("none") }
                        Fact { label: qsTr("Layers"); value: qsTr("%1 (%2 sliding, %3 full)").arg(page.info.layers).arg(page.info.slidingLayers).arg(page.info.fullLayers) }
                        Fact { label: qsTr("Heads"); value: qsTr("%1 q / %2 kv \u00d7 %3").arg(page.info.heads).arg(page.info.kvHeads).arg(page.info.headDimK) }
                        Fact { label: qsTr("Vocabulary"); value: App.formatNumber(page.info.vocab || 0) }
                        Fact { label: qsTr("KV dtype"); value: page.info.kvDtype || "" }
                        Fact { label: qsTr("Full pool"); value: qsTr("%1 tokens \u00b7 %2").arg(App.formatNumber(page.info.fullPoolTokens || 0)).arg(App.formatBytes(page.info.fullPoolBytes || 0)) }
                        Fact { label: qsTr("Window pool"); value: qsTr("%1 tokens \u00b7 %2").arg(App.formatNumber(page.info.windowPoolTokens || 0)).arg(App.formatBytes(page.info.windowPoolBytes || 0)) }
                    }
                    LayerStrip { Layout.fillWidth: true; pattern: page.info.layerPattern || "" }
                    Label {
                        Layout.fillWidth: true
                        visible: (page.info.chatTemplate || "").length > 0
                        wrapMode: Text.Wrap
                        color: Theme.muted
                        font.pixelSize: Theme.smallSize
                        text: qsTr("Chat template: %1").arg(page.info.chatTemplate || "")
                              + (page.info.baseModel ? " · " + qsTr("a base model (not instruction-tuned)") : "")
                    }
                }
            }

            Card {
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                ColumnLayout {
                    width: parent.width
                    spacing: 8
                    RowLayout {
                        Label { text: qsTr("Installed models"); font.weight: Font.DemiBold; color: Theme.text; Layout.fillWidth: true }
                        IconButton { objectName: "openModelButton"; text: qsTr("Open GGUF file\u2026"); iconName: "folder"; onClicked: openDialog.open() }
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: page.installed.length === 0
                        wrapMode: Text.Wrap
                        color: Theme.muted
                        font.pixelSize: Theme.smallSize
                        text: App.installedModels.scanning ? qsTr("Looking for models\u2026")
                                                           : qsTr("No model found in %1.").arg(App.modelFolders.join(", "))
                    }
                    Repeater {
                        model: page.installed
                        ModelRow { required property var modelData; entry: modelData }
                    }
                }
            }

            // The catalogue's models that are not installed, and where to put them.
            Card {
                objectName: "bundledModelsCard"
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                visible: page.missing.length > 0
                ColumnLayout {
                    spacing: 6
                    Label { text: qsTr("Models Weir can install"); font.weight: Font.DemiBold; color: Theme.text }
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        color: Theme.muted
                        font.pixelSize: Theme.smallSize
                        text: qsTr("Run install-models.py (in /usr/share/weir, or packaging/ in the source tree) to put them in %1, or copy any GGUF file there.")
                              .arg(App.modelFolders[0] || "")
                    }
                    Repeater {
                        model: page.missing
                        Label {
                            required property var modelData
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                            color: Theme.text
                            font.pixelSize: Theme.smallSize
                            text: qsTr("%1 · %2, %3 · %4 · %5").arg(modelData.name).arg(modelData.architecture)
                                  .arg(modelData.quantization).arg(modelData.licence).arg(modelData.file)
                        }
                    }
                }
            }
        }
    }

    component Fact: ColumnLayout {
        property string label
        property string value
        spacing: 1
        Layout.fillWidth: true
        Label { text: parent.label; color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
        Label { text: parent.value; color: Theme.text; font.pixelSize: Theme.smallSize + 1; elide: Text.ElideRight; Layout.fillWidth: true }
    }

    // One installed model: what it is, and a one-click switch to it.
    component ModelRow: ItemDelegate {
        id: mr
        property var entry
        readonly property string path: entry.path
        readonly property bool current: App.engine.modelPath === path
        // A file that failed to load is not "in use": it is marked as failed.
        readonly property bool loaded: current && (App.engine.state === EngineHost.Ready || App.engine.state === EngineHost.Loading)
        readonly property bool failed: current && App.engine.state === EngineHost.Failed
        readonly property bool broken: (entry.error || "") !== ""
        objectName: "modelRow:" + entry.fileName
        Layout.fillWidth: true
        hoverEnabled: true
        Accessible.name: qsTr("%1, %2").arg(entry.name).arg(statusText.text)
        onClicked: if (!loaded && !broken) App.loadModel(path)
        contentItem: RowLayout {
            spacing: 10
            Icon { name: "chip"; size: 18; color: mr.loaded ? Theme.accent : Theme.muted; Layout.alignment: Qt.AlignTop }
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                RowLayout {
                    spacing: 8
                    Label { text: mr.entry.catalogueName || mr.entry.name; color: Theme.text; font.weight: Font.DemiBold; elide: Text.ElideRight; Layout.maximumWidth: mr.width * 0.5 }
                    Label {
                        visible: text !== ""
                        text: mr.entry.role === "chat" ? qsTr("chat model") : mr.entry.role === "default" ? qsTr("weir-cli's default") : ""
                        color: Theme.faint
                        font.pixelSize: Theme.smallSize - 1
                    }
                    Item { Layout.fillWidth: true }
                }
                Label {
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    color: mr.broken ? Theme.danger : Theme.muted
                    font.pixelSize: Theme.smallSize
                    text: mr.broken ? mr.entry.error
                          : [mr.entry.architecture,
                             App.formatCount(mr.entry.parameters) + " " + qsTr("parameters"),
                             mr.entry.quantization,
                             App.formatBytes(mr.entry.fileBytes),
                             mr.entry.slidingLayers > 0
                               ? qsTr("%1 layers, %2 sliding (window %3)").arg(mr.entry.layers).arg(mr.entry.slidingLayers).arg(App.formatNumber(mr.entry.slidingWindow))
                               : qsTr("%1 layers, none sliding").arg(mr.entry.layers),
                             mr.entry.hasChatTemplate ? qsTr("own chat template")
                               : mr.entry.baseModel ? qsTr("base model (continues text)") : qsTr("built-in chat template")].join(" \u00b7 ")
                }
                // The engine's own words, below the plain sentence.
                Label {
                    objectName: "modelErrorDetail"
                    visible: mr.broken && (mr.entry.errorDetail || "") !== ""
                    Layout.fillWidth: true
                    text: mr.entry.errorDetail || ""
                    color: Theme.muted
                    font.pixelSize: Theme.smallSize - 1
                    wrapMode: Text.Wrap
                    maximumLineCount: 3
                    elide: Text.ElideRight
                }
                Label {
                    Layout.fillWidth: true
                    text: mr.path
                    color: Theme.faint
                    font.pixelSize: Theme.smallSize - 1
                    elide: Text.ElideMiddle
                }
            }
            Label {
                id: statusText
                Layout.alignment: Qt.AlignVCenter
                text: mr.loaded ? (App.engine.state === EngineHost.Loading ? qsTr("loading") : qsTr("in use"))
                                : mr.failed ? qsTr("failed to load") : mr.broken ? qsTr("cannot load") : ""
                visible: text !== ""
                color: mr.loaded ? Theme.success : Theme.danger
                font.pixelSize: Theme.smallSize - 1
            }
            // A file that cannot load would stay in the list (and, as the
            // last model, be tried at every start): let it be taken off.
            Button {
                objectName: "removeModelButton"
                visible: mr.broken || mr.failed
                text: qsTr("Remove")
                Accessible.name: qsTr("Remove %1").arg(mr.entry.fileName)
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Forget this file; one in a model folder goes to the trash")
                onClicked: {
                    const problem = App.removeModel(mr.path)
                    if (problem.length > 0) App.chat.notice(problem, true)
                    page.rescan()
                }
            }
            Button {
                objectName: "useModelButton"
                visible: !mr.loaded && !mr.broken
                text: qsTr("Use")
                Accessible.name: qsTr("Use %1").arg(mr.entry.name)
                onClicked: App.loadModel(mr.path)
            }
        }
        background: Rectangle { radius: Theme.smallRadius; color: mr.hovered ? Theme.hover : "transparent" }
    }

    // One cell per layer: which ones use the sliding window.
    component LayerStrip: ColumnLayout {
        id: strip
        property string pattern
        spacing: 4
        Label { text: qsTr("Layer pattern"); color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
        // The squares take their width from the strip's: held in an Item of no
        // implicit width, so that width does not feed back into the layout (a polish loop).
        Item {
            Layout.fillWidth: true
            implicitHeight: 14
            Row {
                spacing: 2
                Repeater {
                    model: strip.pattern.split("")
                    Rectangle {
                        required property string modelData
                        width: Math.max(6, Math.min(18, (strip.width - 2 * strip.pattern.length) / Math.max(1, strip.pattern.length)))
                        height: 14
                        radius: 2
                        color: modelData === "F" ? Theme.poolUsed : Theme.poolCached
                    }
                }
            }
        }
        RowLayout {
            spacing: 14
            Row { spacing: 5; Rectangle { width: 10; height: 10; radius: 2; color: Theme.poolCached } Label { text: qsTr("sliding window"); color: Theme.muted; font.pixelSize: Theme.smallSize - 1 } }
            Row { spacing: 5; Rectangle { width: 10; height: 10; radius: 2; color: Theme.poolUsed } Label { text: qsTr("full attention"); color: Theme.muted; font.pixelSize: Theme.smallSize - 1 } }
        }
    }
}

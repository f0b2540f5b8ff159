import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The pool monitor page: both KV pools live (used / cached / free over the
// last minute), the scheduler's counters, and what each conversation holds;
// or, chosen in the header, a remote engine's pools (RemotePoolView).
Rectangle {
    id: page
    objectName: "poolMonitorPage"
    color: Theme.window

    // A model without sliding layers has nothing in this pool: say so rather
    // than "the last 0 tokens ... for the 0 sliding layers".
    function slidingPoolDescription(layers, window) {
        if (layers <= 0 || window <= 0) return qsTr("Not used: this model has no sliding-window layers.")
        return Theme.count(layers, qsTr("The last %2 tokens of each request, for the %1 sliding layer."),
                           qsTr("The last %2 tokens of each request, for the %1 sliding layers.")).arg(App.formatNumber(window))
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        visible: App.remotePool.endpointName.length === 0

        ColumnLayout {
            width: Math.min(1100, parent.width - 48)
            x: (parent.width - width) / 2
            spacing: 16

            RowLayout {
                Layout.topMargin: 24
                Layout.fillWidth: true
                PageHeader {
                    title: qsTr("Pool monitor")
                    subtitle: App.pools.hasData
                              ? qsTr("Live from the engine, %1 updates per second \u00b7 %2 running, %3 waiting \u00b7 %4")
                                    .arg(App.pools.updatesPerSecond.toFixed(1))
                                    .arg(App.pools.counters.running).arg(App.pools.counters.waiting)
                                    .arg(App.engine.modelInfo.device && App.engine.modelInfo.device !== "cpu"
                                         ? qsTr("both pools in %1 memory (%2)").arg(App.engine.modelInfo.deviceName).arg(App.engine.modelInfo.device)
                                         : qsTr("both pools in this computer's memory"))
                              : qsTr("Load a model to see its KV pools.")
                }
                MonitorEngineChooser { objectName: "monitorEngineChooser"; Layout.alignment: Qt.AlignTop }
                IconButton {
                    objectName: "clearCacheButton"
                    Layout.alignment: Qt.AlignTop
                    visible: App.engine.ready
                    enabled: App.pools.full.cached > 0 || App.pools.window.cached > 0
                    text: qsTr("Clear prefix cache")
                    iconName: "trash"
                    tip: qsTr("Free the pages of cached prompts no conversation is using")
                    background: Rectangle { radius: Theme.smallRadius; color: parent.hovered ? Theme.hover : Theme.surface; border.color: Theme.border }
                    onClicked: App.engine.clearPrefixCache()
                }
            }

            GridLayout {
                Layout.fillWidth: true
                columns: page.width > 900 ? 2 : 1
                columnSpacing: 16
                rowSpacing: 16
                PoolCard {
                    Layout.fillWidth: true
                    pool: "full"
                    title: qsTr("Full-attention pool")
                    description: Theme.count(App.engine.modelInfo.fullLayers || 0, qsTr("Every token of every running request, for the %1 full-attention layer."), qsTr("Every token of every running request, for the %1 full-attention layers."))
                    status: App.pools.full
                }
                PoolCard {
                    Layout.fillWidth: true
                    pool: "window"
                    title: qsTr("Sliding-window pool")
                    description: page.slidingPoolDescription(App.engine.modelInfo.slidingLayers || 0, App.engine.modelInfo.slidingWindow || 0)
                    status: App.pools.window
                }
            }

            // Counters
            Card {
                Layout.fillWidth: true
                ColumnLayout {
                    anchors.fill: parent
                    spacing: 10
                    Label { text: qsTr("Scheduler counters"); font.weight: Font.DemiBold; color: Theme.text }
                    GridLayout {
                        Layout.fillWidth: true
                        columns: page.width > 900 ? 6 : 3
                        columnSpacing: 40
                        rowSpacing: 12
                        Counter { label: qsTr("Deferrals"); value: App.pools.counters.deferrals; tip: qsTr("Admissions put off until enough pages are free") }
                        Counter { label: qsTr("Preemptions"); value: App.pools.counters.preemptions; warn: value > 0; tip: qsTr("Running requests sent back to the queue to free pages") }
                        Counter { label: qsTr("Refusals"); value: App.pools.counters.refusals; warn: value > 0; tip: qsTr("Requests that could never fit and ended with an error") }
                        Counter { label: qsTr("Prefix-hit tokens"); value: App.pools.counters.prefixHitTokens; good: value > 0; tip: qsTr("Prompt tokens served from the shared prefix cache") }
                        Counter { label: qsTr("Integrity checks"); value: App.pools.counters.integrityChecks; tip: qsTr("Full recounts of the pools' ledgers") }
                        Counter { label: qsTr("Violations"); value: App.pools.counters.violations; bad: value > 0; tip: qsTr("Ledger or ownership checks that failed") }
                    }
                    Repeater {
                        model: App.pools.violationDetails
                        Label {
                            required property string modelData
                            Layout.fillWidth: true
                            text: "\u2022 " + modelData
                            color: Theme.danger
                            wrapMode: Text.Wrap
                            font.family: Theme.monoFamily
                            font.pixelSize: Theme.smallSize - 1
                        }
                    }
                }
            }

            // Per request
            Card {
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                ColumnLayout {
                    anchors.fill: parent
                    spacing: 8
                    Label { text: qsTr("Per conversation"); font.weight: Font.DemiBold; color: Theme.text }
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 12
                        HeaderCell { text: qsTr("Conversation"); Layout.fillWidth: true; Layout.preferredWidth: 100 }
                        HeaderCell { text: qsTr("State"); Layout.minimumWidth: 80; Layout.maximumWidth: 80 }
                        HeaderCell { text: qsTr("Full pool"); Layout.minimumWidth: 170; Layout.maximumWidth: 170 }
                        HeaderCell { text: qsTr("Window pool"); Layout.minimumWidth: 170; Layout.maximumWidth: 170 }
                        HeaderCell { text: qsTr("Prefix hit"); Layout.minimumWidth: 80; Layout.maximumWidth: 80; horizontalAlignment: Text.AlignRight }
                        HeaderCell { text: qsTr("Prompt / out"); Layout.minimumWidth: 100; Layout.maximumWidth: 100; horizontalAlignment: Text.AlignRight }
                    }
                    Rectangle { Layout.fillWidth: true; height: 1; color: Theme.border }
                    Repeater {
                        model: App.pools.requests
                        delegate: RowLayout {
                            required property real requestId
                            required property real conversationId
                            required property real apiRequest
                            required property string state
                            required property real fullTokens
                            required property real windowTokens
                            required property real prefixHitTokens
                            required property int promptTokens
                            required property int generatedTokens
                            required property real fullShare
                            required property real windowShare
                            Layout.fillWidth: true
                            spacing: 12
                            Label {
                                Layout.fillWidth: true
                                Layout.preferredWidth: 100  // same column width on every row
                                elide: Text.ElideRight
                                color: Theme.text
                                text: conversationId > 0 ? App.chat.conversationTitle(conversationId)
                                    : apiRequest > 0 ? qsTr("API request %1").arg(apiRequest) : qsTr("Request %1").arg(requestId)
                            }
                            StateTag { state: parent.state }
                            UsageBar { tokens: fullTokens; share: fullShare; barColor: Theme.poolUsed }
                            UsageBar { tokens: windowTokens; share: windowShare; barColor: Theme.poolUsed }
                            Label { Layout.minimumWidth: 80; Layout.maximumWidth: 80; horizontalAlignment: Text.AlignRight; text: App.formatNumber(prefixHitTokens); color: prefixHitTokens > 0 ? Theme.success : Theme.muted; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize }
                            Label { Layout.minimumWidth: 100; Layout.maximumWidth: 100; horizontalAlignment: Text.AlignRight; text: promptTokens + " / " + generatedTokens; color: Theme.muted; font.family: Theme.monoFamily; font.pixelSize: Theme.smallSize }
                        }
                    }
                    Label {
                        visible: App.pools.requests.count === 0
                        text: qsTr("No requests right now. Send a message and watch the pools fill.")
                        color: Theme.faint
                        topPadding: 6
                        bottomPadding: 6
                    }
                }
            }
        }
    }

    // A remote engine chosen in the header: its own view (RemotePoolView.qml).
    RemotePoolView { anchors.fill: parent; visible: App.remotePool.endpointName.length > 0 }

    component HeaderCell: Label {
        color: Theme.faint
        font.pixelSize: Theme.smallSize - 1
        font.weight: Font.DemiBold
    }

    component StateTag: Label {
        property string state
        Layout.minimumWidth: 80
        Layout.maximumWidth: 80
        text: state
        color: state === "waiting" ? Theme.warning : state === "decode" ? Theme.success : Theme.accent
        font.pixelSize: Theme.smallSize
    }

    component UsageBar: RowLayout {
        property real tokens
        property real share
        property color barColor
        Layout.minimumWidth: 170
        Layout.maximumWidth: 170
        spacing: 6
        Rectangle {
            Layout.fillWidth: true
            height: 6; radius: 3
            color: Theme.poolFree
            Rectangle { width: parent.width * Math.min(1, parent.parent.share); height: parent.height; radius: 3; color: parent.parent.barColor }
        }
        Label {
            text: App.formatNumber(parent.tokens)
            color: Theme.muted
            font.family: Theme.monoFamily
            font.pixelSize: Theme.smallSize
            Layout.preferredWidth: 56
            horizontalAlignment: Text.AlignRight
        }
    }

    component Counter: ColumnLayout {
        property string label
        property real value
        property string tip
        property bool warn: false
        property bool bad: false
        property bool good: false
        spacing: 2
        Layout.fillWidth: true
        Layout.preferredWidth: 1
        Label {
            text: App.formatNumber(parent.value)
            font.pixelSize: Theme.titleSize + 2
            font.weight: Font.DemiBold
            color: parent.bad ? Theme.danger : parent.warn ? Theme.warning : parent.good ? Theme.success : Theme.text
        }
        Label { text: parent.label; color: Theme.muted; font.pixelSize: Theme.smallSize }
        HoverHandler { id: counterHover }
        ToolTip.visible: counterHover.hovered && tip.length > 0
        ToolTip.text: tip
        ToolTip.delay: 500
    }

    component PoolCard: Card {
        id: card
        property string pool
        property string title
        property string description
        property var status
        implicitHeight: cardColumn.implicitHeight + 32
        ColumnLayout {
            id: cardColumn
            anchors.fill: parent
            spacing: 10
            RowLayout {
                Layout.fillWidth: true
                Label { text: card.title; font.weight: Font.DemiBold; color: Theme.text; Layout.fillWidth: true }
                Label {
                    text: card.status.capacity > 0 ? qsTr("%1 tokens \u00b7 %2").arg(App.formatNumber(card.status.capacity)).arg(App.formatBytes(card.status.totalBytes)) : ""
                    color: Theme.muted
                    font.pixelSize: Theme.smallSize
                }
            }
            Label { text: card.description; color: Theme.faint; font.pixelSize: Theme.smallSize; wrapMode: Text.Wrap; Layout.fillWidth: true }
            PoolChart { objectName: "poolChart_" + card.pool; pool: card.pool; Layout.fillWidth: true }
            RowLayout {
                Layout.fillWidth: true
                spacing: 16
                Legend { swatch: Theme.poolUsed; label: qsTr("In use"); value: card.status.used }
                Legend { swatch: Theme.poolCached; label: qsTr("Cached"); value: card.status.cached }
                Legend { swatch: Theme.poolFree; label: qsTr("Free"); value: card.status.free; outline: true }
                Item { Layout.fillWidth: true }
                Legend { visible: card.status.floor > 0; swatch: Theme.poolFloor; label: qsTr("Floor"); value: card.status.floor; dashed: true }
            }
        }
    }

    component Legend: RowLayout {
        property color swatch
        property string label
        property real value
        property bool outline: false
        property bool dashed: false
        spacing: 6
        Rectangle {
            width: 10; height: parent.dashed ? 2 : 10; radius: parent.dashed ? 0 : 2
            color: parent.swatch
            border.color: parent.outline ? Theme.strongBorder : "transparent"
        }
        Label { text: parent.label; color: Theme.muted; font.pixelSize: Theme.smallSize }
        Label { text: App.formatNumber(parent.value); color: Theme.text; font.pixelSize: Theme.smallSize; font.family: Theme.monoFamily }
    }
}

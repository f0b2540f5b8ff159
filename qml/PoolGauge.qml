import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Two thin bars in the chat header: how full each KV pool is right now
// (in use, then cached). Clicking opens the pool monitor.
AbstractButton {
    id: gauge
    visible: App.pools.hasData
    hoverEnabled: true
    implicitWidth: 150
    implicitHeight: 32

    contentItem: ColumnLayout {
        spacing: 4
        Repeater {
            model: [{ label: qsTr("full"), pool: App.pools.full }, { label: qsTr("window"), pool: App.pools.window }]
            delegate: RowLayout {
                required property var modelData
                spacing: 6
                Label { text: modelData.label; color: Theme.faint; font.pixelSize: Theme.smallSize - 2; Layout.preferredWidth: 40 }
                Rectangle {
                    Layout.fillWidth: true
                    height: 5; radius: 2.5
                    color: Theme.poolFree
                    Rectangle {
                        width: parent.width * Math.min(1, modelData.pool.usedFraction + modelData.pool.cachedFraction)
                        height: parent.height; radius: 2.5
                        color: Theme.poolCached
                    }
                    Rectangle {
                        width: parent.width * modelData.pool.usedFraction
                        height: parent.height; radius: 2.5
                        color: Theme.poolUsed
                    }
                }
            }
        }
    }
    Accessible.name: qsTr("KV pools: open the pool monitor")
    background: Rectangle {
        radius: Theme.smallRadius
        color: gauge.hovered ? Theme.hover : "transparent"
        FocusRing { shown: gauge.visualFocus; radius: Theme.smallRadius + 2 }
    }
    ToolTip.visible: hovered
    ToolTip.delay: 400
    ToolTip.text: qsTr("KV pools \u2014 full: %1 of %2 tokens in use, window: %3 of %4. Click for the pool monitor.")
                  .arg(App.formatNumber(App.pools.full.used)).arg(App.formatNumber(App.pools.full.capacity))
                  .arg(App.formatNumber(App.pools.window.used)).arg(App.formatNumber(App.pools.window.capacity))
}

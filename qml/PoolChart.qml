import QtQuick
import QtQuick.Controls
import Weir

// A live stacked-area chart of one KV pool over the last minute: tokens in
// use (bottom), cached for reuse (on top of it), free (the rest), with the
// pool's concurrency-aware floor as a dashed line. Redrawn, while visible,
// on each status snapshot that changes a level or a number (up to 4 per
// second); while nothing changes it stands still (PoolStatusModel). When a
// large pool stays nearly empty the chart zooms in (the axis then counts
// tokens instead of percent).
Item {
    id: chart
    property string pool: "full"
    readonly property var current: pool === "window" ? App.pools.window : App.pools.full
    // Follows the model only while the chart can be seen: a hidden monitor
    // page costs nothing; shown again, it catches up at once.
    property int revision: 0
    function follow() { if (chart.visible) chart.revision = App.pools.revision }
    onVisibleChanged: follow()
    Component.onCompleted: follow()
    Connections {
        target: App.pools
        enabled: chart.visible
        function onUpdated() { chart.follow() }
    }
    readonly property real plotWidth: width - axis.width - 6
    readonly property real plotHeight: height - 18
    readonly property real viewTop: { revision; return App.pools.viewTop(pool) }
    readonly property real seconds: { revision; return App.pools.viewSeconds() }

    implicitHeight: 170

    // Y axis labels
    Item {
        id: axis
        width: 34
        height: chart.plotHeight
        Repeater {
            model: 5
            Label {
                required property int index
                readonly property real fraction: chart.viewTop * (4 - index) / 4
                y: index * chart.plotHeight / 4 - height / 2
                width: axis.width
                horizontalAlignment: Text.AlignRight
                text: chart.viewTop >= 1 ? Math.round(fraction * 100) + "%"
                                     : App.formatCount(fraction * (chart.current.capacity || 0))
                color: Theme.faint
                font.pixelSize: Theme.smallSize - 3
            }
        }
    }

    Rectangle {
        id: plot
        x: axis.width + 6
        width: chart.plotWidth
        height: chart.plotHeight
        color: Theme.poolFree
        radius: 4
        clip: true

        Repeater {
            model: 3
            Rectangle {
                required property int index
                y: (index + 1) * plot.height / 4
                width: plot.width; height: 1
                color: Theme.dark ? Qt.rgba(1, 1, 1, 0.06) : Qt.rgba(0, 0, 0, 0.06)
            }
        }

        // Painted paths (VectorPath), not QtQuick.Shapes: see VectorPath.h.
        VectorPath {
            anchors.fill: parent
            strokeColor: Theme.poolCached
            strokeWidth: 1.5
            fillColor: Qt.rgba(Theme.poolCached.r, Theme.poolCached.g, Theme.poolCached.b, 0.35)
            points: { chart.revision; return App.pools.band(chart.pool, 1, 2, plot.width, plot.height, chart.viewTop) }
        }
        VectorPath {
            anchors.fill: parent
            strokeColor: Theme.poolUsed
            strokeWidth: 1.5
            fillColor: Qt.rgba(Theme.poolUsed.r, Theme.poolUsed.g, Theme.poolUsed.b, 0.45)
            points: { chart.revision; return App.pools.band(chart.pool, 0, 1, plot.width, plot.height, chart.viewTop) }
        }
        VectorPath {
            id: floorLine
            readonly property real fraction: chart.current.capacity > 0 ? chart.current.floor / chart.current.capacity / chart.viewTop : 0
            readonly property real lineY: plot.height * (1 - Math.min(1, fraction))
            anchors.fill: parent
            visible: fraction > 0 && fraction <= 1
            strokeColor: Theme.poolFloor
            strokeWidth: 1.2
            dashPattern: [4, 3]
            points: [Qt.point(0, lineY), Qt.point(plot.width, lineY)]
        }

        Label {
            visible: !App.pools.hasData
            anchors.centerIn: parent
            text: App.engine.ready ? qsTr("Waiting for the first status\u2026") : qsTr("No model loaded")
            color: Theme.faint
        }
    }

    Label {
        anchors.left: plot.left
        anchors.top: plot.bottom
        anchors.topMargin: 3
        text: qsTr("%1 s ago").arg(Math.round(chart.seconds))
        color: Theme.faint
        font.pixelSize: Theme.smallSize - 3
    }
    Label {
        anchors.right: plot.right
        anchors.top: plot.bottom
        anchors.topMargin: 3
        text: qsTr("now")
        color: Theme.faint
        font.pixelSize: Theme.smallSize - 3
    }
    Label {
        objectName: "zoomNote"
        visible: chart.viewTop < 1
        anchors.horizontalCenter: plot.horizontalCenter
        anchors.top: plot.bottom
        anchors.topMargin: 3
        text: qsTr("zoomed to %1 of %2 tokens").arg(App.formatCount(chart.viewTop * (chart.current.capacity || 0))).arg(App.formatCount(chart.current.capacity || 0))
        color: Theme.faint
        font.pixelSize: Theme.smallSize - 3
    }
}

import QtQuick
import QtTest
import Weir

// PoolMonitor's words for the sliding-window pool (issue 26: "The last 0
// tokens of each request, for the 0 sliding layers" for a model without any).
Item {
    id: root
    width: 800; height: 600

    TestCase {
        name: "PoolMonitor"
        when: windowShown

        Component { id: monitorComponent; PoolMonitor { anchors.fill: parent } }

        function test_slidingPoolDescription() {
            const monitor = createTemporaryObject(monitorComponent, root)
            verify(monitor)
            compare(monitor.slidingPoolDescription(0, 0), "Not used: this model has no sliding-window layers.")
            compare(monitor.slidingPoolDescription(0, 512), "Not used: this model has no sliding-window layers.")
            const text = monitor.slidingPoolDescription(15, 512)
            verify(text.indexOf("15 sliding layers") >= 0, text)
            verify(text.indexOf("512") >= 0, text)
            verify(monitor.slidingPoolDescription(1, 512).indexOf("1 sliding layer.") >= 0)
        }
    }
}

import QtQuick
import QtTest
import Weir

// PoolChart: fed by live status snapshots, it draws a non-empty in-use area.
// The model tells views only when a level or number changes (an idle chart
// stands still), so wait for data rather than for a count of revisions.
Item {
    id: root
    width: 600; height: 300

    TestCase {
        name: "PoolChart"
        when: windowShown

        Component { id: chartComponent; PoolChart { width: 560; height: 200; pool: "window" } }

        function test_drawsLiveData() {
            tryVerify(() => App.engine.ready, 10000)
            const chart = createTemporaryObject(chartComponent, root)
            tryVerify(() => App.pools.hasData, 10000)
            verify(App.pools.revision > 0)
            verify(App.pools.full.capacity > 0)
        }
    }
}

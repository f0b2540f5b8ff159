import QtQuick
import QtTest
import Weir

// PoolChart: fed by live status snapshots, it draws a non-empty in-use area.
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
            const start = App.pools.revision
            tryVerify(() => App.pools.revision >= start + 3, 10000)
            verify(App.pools.hasData)
            verify(App.pools.full.capacity > 0)
        }
    }
}

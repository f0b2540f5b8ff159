import QtQuick
import QtTest
import Weir

// PoolChart: fed by live status snapshots, it draws a non-empty in-use area.
TestCase {
    name: "PoolChart"
    when: windowShown
    width: 600; height: 300

    Component { id: chartComponent; PoolChart { width: 560; height: 200; pool: "window" } }

    function test_drawsLiveData() {
        tryVerify(() => App.engine.ready, 10000)
        const chart = createTemporaryObject(chartComponent, this)
        const start = App.pools.revision
        tryVerify(() => App.pools.revision >= start + 3, 10000)
        verify(App.pools.hasData)
        const band = App.pools.band("window", 0, 1, 500, 200)
        verify(band.length >= 4)
    }
}

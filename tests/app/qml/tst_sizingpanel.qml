import QtQuick
import QtTest
import Weir

// SizingPanel: no warning at the floor; below it, the warning with both ways
// out, and each button reports the value to use.
Item {
    id: root
    width: 900; height: 600

    TestCase {
        name: "SizingPanel"
        when: windowShown

        SizingAdvisor {
            id: advisor
            pageSize: 16; retainGap: 1; prefillChunk: 512; maxRunning: 8
            Component.onCompleted: setModelInfo({ slidingWindow: 1024, layerPattern: "SSSSSFSSSSSFSSSSSF", kvHeads: 1, headDimK: 256, contextLength: 32768 })
        }
        Component { id: panelComponent; SizingPanel { width: 860 } }
        SignalSpy { id: floorSpy; signalName: "useFloor" }
        SignalSpy { id: runningSpy; signalName: "useMaxRunning" }

        function test_warningAndWaysOut() {
            const panel = createTemporaryObject(panelComponent, root, { advisor: advisor })
            advisor.windowPoolTokens = 0
            verify(!panel.warning)
            verify(!findChild(panel, "useFloorButton").visible)

            advisor.windowPoolTokens = 6000
            verify(panel.warning)
            floorSpy.target = panel
            runningSpy.target = panel
            const useFloor = findChild(panel, "useFloorButton")
            const useRunning = findChild(panel, "useMaxRunningButton")
            verify(useFloor.visible)
            verify(useRunning.visible)
            compare(useRunning.text, "Set max running to 4")
            mouseClick(useFloor)
            compare(floorSpy.count, 1)
            mouseClick(useRunning)
            compare(runningSpy.count, 1)
            compare(runningSpy.signalArguments[0][0], 4)
        }
    }
}

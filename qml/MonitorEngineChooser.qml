import QtQuick
import QtQuick.Controls
import Weir

// Which engine the pool monitor shows: the local one, or one of the remote
// engines from the settings. Shown only when there are remote engines.
ComboBox {
    id: chooser
    // A plain array (a QStringList is not spread by concat).
    readonly property var names: {
        const out = []
        const list = App.remote.names
        for (let i = 0; i < list.length; ++i) out.push(list[i])
        return out
    }
    visible: names.length > 0
    implicitWidth: 220
    model: [qsTr("Local engine")].concat(names)
    currentIndex: App.remotePool.endpointName.length > 0 ? Math.max(0, names.indexOf(App.remotePool.endpointName) + 1) : 0
    onActivated: function(index) { App.remotePool.endpointName = index === 0 ? "" : names[index - 1] }
    Accessible.name: qsTr("Engine shown")
    ToolTip.visible: hovered
    ToolTip.delay: 600
    ToolTip.text: qsTr("The engine whose pools the monitor shows")
}

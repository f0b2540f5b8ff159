import QtQuick
import QtQuick.Controls
import Weir

// Which engine writes the open conversation's replies: the local one, or one
// of the remote engines from the settings. Shown only when there are remote
// engines (or the conversation still names one that was removed).
ComboBox {
    id: chooser
    // A plain array (a QStringList is not spread by concat).
    readonly property var names: {
        const out = []
        const list = App.remote ? App.remote.names : []
        for (let i = 0; i < list.length; ++i) out.push(list[i])
        return out
    }
    readonly property string engine: App.chat.currentEngine
    // A conversation on an engine that was removed says so rather than showing another.
    readonly property bool missing: engine.length > 0 && names.indexOf(engine) < 0
    visible: names.length > 0 || missing
    enabled: App.chat.currentId > 0 && !App.chat.currentGenerating
    implicitWidth: 200
    model: [qsTr("Local engine")].concat(names).concat(missing ? [qsTr("%1 (removed)").arg(engine)] : [])
    currentIndex: engine.length === 0 ? 0 : missing ? names.length + 1 : names.indexOf(engine) + 1
    onActivated: function(index) {
        if (index > names.length) return  // the removed one: nothing to choose
        App.chat.setEngine(App.chat.currentId, index === 0 ? "" : names[index - 1])
    }
    Accessible.name: qsTr("Engine of this conversation")
    ToolTip.visible: hovered
    ToolTip.delay: 600
    ToolTip.text: {
        if (engine.length === 0) return qsTr("Replies are written by the model loaded here")
        const e = App.remote ? App.remote.endpoint(engine) : ({})
        return e.model ? qsTr("Replies are written by %1 on %2").arg(e.model).arg(e.baseUrl)
                       : qsTr("Replies go to the remote engine %1").arg(engine)
    }
}

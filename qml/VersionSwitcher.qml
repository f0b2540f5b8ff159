import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// "‹ 2/3 ›": which version of a turn is shown, and buttons to show the
// previous or next one (with the turns that followed it).
RowLayout {
    id: switcher
    objectName: "versionSwitcher"
    required property var owner  // the MessageDelegate: messageId, versionIndex, versionCount
    spacing: 0
    Accessible.name: qsTr("Version %1 of %2").arg(owner.versionIndex + 1).arg(owner.versionCount)

    IconButton {
        objectName: "previousVersionButton"
        text: "\u2039"
        implicitWidth: 26; implicitHeight: 26
        tip: qsTr("Previous version")
        enabled: switcher.owner.versionIndex > 0 && !App.chat.currentGenerating
        onClicked: App.chat.switchVersion(switcher.owner.messageId, -1)
    }
    Label {
        objectName: "versionLabel"
        text: qsTr("%1/%2").arg(switcher.owner.versionIndex + 1).arg(switcher.owner.versionCount)
        color: Theme.muted
        font.pixelSize: Theme.smallSize
    }
    IconButton {
        objectName: "nextVersionButton"
        text: "\u203a"
        implicitWidth: 26; implicitHeight: 26
        tip: qsTr("Next version")
        enabled: switcher.owner.versionIndex + 1 < switcher.owner.versionCount && !App.chat.currentGenerating
        onClicked: App.chat.switchVersion(switcher.owner.messageId, 1)
    }
}

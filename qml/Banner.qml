import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// A one-line, non-blocking notice across the top of the content area.
Rectangle {
    id: banner
    property string text
    property bool error: false
    property bool info: false     // a neutral notice rather than a warning
    property string actionText
    signal action()
    signal dismissed()

    visible: text.length > 0
    implicitHeight: visible ? row.implicitHeight + 14 : 0
    readonly property color tone: error ? Theme.danger : info ? Theme.accent : Theme.warning
    color: error ? Theme.dangerSoft : info ? Theme.accentSoft : Theme.warningSoft
    Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: banner.tone; opacity: 0.5 }

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 8
        spacing: 10
        Icon { name: banner.info ? "info" : "warning"; size: 16; color: banner.tone }
        Label { Layout.fillWidth: true; text: banner.text; color: Theme.text; wrapMode: Text.Wrap; font.pixelSize: Theme.smallSize + 1 }
        IconButton { objectName: banner.objectName + "Action"; visible: banner.actionText.length > 0; text: banner.actionText; onClicked: banner.action() }
        IconButton { iconName: "close"; iconSize: 14; implicitWidth: 26; implicitHeight: 26; tip: qsTr("Dismiss"); onClicked: banner.dismissed() }
    }
}

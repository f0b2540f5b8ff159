import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// Title and one line of context at the top of a page.
ColumnLayout {
    property string title
    property string subtitle
    spacing: 4
    Layout.fillWidth: true
    Label { text: parent.title; font.pixelSize: Theme.titleSize + 4; font.weight: Font.DemiBold; color: Theme.text }
    Label { text: parent.subtitle; visible: text.length > 0; color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
}

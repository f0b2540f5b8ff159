import QtQuick
import Weir

// A bordered surface that groups related content on the pages.
Rectangle {
    default property alias content: inner.data
    implicitHeight: (inner.children.length > 0 ? inner.children[0].implicitHeight : 0) + 32
    radius: Theme.radius
    color: Theme.surface
    border.color: Theme.border
    Item {
        id: inner
        anchors.fill: parent
        anchors.margins: 16
    }
}

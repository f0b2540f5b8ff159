import QtQuick
import Weir

// Line icons drawn on a 24-unit grid (no image plugins needed, crisp at any
// scale factor). `name` picks the drawing.
Item {
    id: icon
    property string name: ""
    property color color: "black"
    property real size: 18
    property real lineWidth: 1.8

    implicitWidth: size
    implicitHeight: size

    readonly property var paths: ({
        "plus": "M12 5 V19 M5 12 H19",
        "close": "M6.5 6.5 L17.5 17.5 M17.5 6.5 L6.5 17.5",
        "search": "M16.5 10.5 A6 6 0 1 1 4.5 10.5 A6 6 0 1 1 16.5 10.5 M15 15 L20 20",
        "trash": "M4 7 H20 M9.5 7 V4.5 H14.5 V7 M6.5 7 L7.4 19.5 H16.6 L17.5 7 M10 11 V16 M14 11 V16",
        "pencil": "M4.5 19.5 L5 15.8 L15.6 5.2 Q17 3.8 18.4 5.2 L18.8 5.6 Q20.2 7 18.8 8.4 L8.2 19 Z M14 6.8 L17.2 10",
        "copy": "M9 9 H19 V19 H9 Z M6 15 H5 V5 H15 V6",
        "check": "M5 12.5 L10 17 L19 7",
        "stop": "M7 7 H17 V17 H7 Z",
        "send": "M12 19 V5 M6 11 L12 5 L18 11",
        "refresh": "M19 12 A7 7 0 1 1 16.9 7 M19 3.5 V7.5 H15",
        "sliders": "M4 7 H13 M17 7 H20 M15 5 V9 M4 17 H7 M11 17 H20 M9 15 V19",
        "gear": "M12 8.5 A3.5 3.5 0 1 1 12 15.5 A3.5 3.5 0 1 1 12 8.5 M12 2.5 V5 M12 19 V21.5 M2.5 12 H5 M19 12 H21.5 M5.3 5.3 L7 7 M17 17 L18.7 18.7 M5.3 18.7 L7 17 M17 7 L18.7 5.3",
        "activity": "M3 12 H7 L10 5 L14 19 L17 12 H21",
        "chip": "M7 7 H17 V17 H7 Z M10 10 H14 V14 H10 Z M10 3.5 V7 M14 3.5 V7 M10 17 V20.5 M14 17 V20.5 M3.5 10 H7 M3.5 14 H7 M17 10 H20.5 M17 14 H20.5",
        "info": "M21 12 A9 9 0 1 1 3 12 A9 9 0 1 1 21 12 M12 11 V16.5 M12 7.6 V7.8",
        "download": "M12 4 V15 M7 10 L12 15 L17 10 M5 19.5 H19",
        "upload": "M12 15 V4 M7 9 L12 4 L17 9 M5 19.5 H19",
        // An arrow into a tray: something brought into Weir.
        "import": "M12 3.5 V13.5 M7.5 9 L12 13.5 L16.5 9 M4.5 13.5 V19.5 H19.5 V13.5",
        "more": "M6 12 H6.01 M12 12 H12.01 M18 12 H18.01",
        "undo": "M9 14 L4 9 L9 4 M4 9 H14 A5.5 5.5 0 0 1 14 20 H11",
        "warning": "M12 3.5 L21.5 20 H2.5 Z M12 10 V14 M12 17 V17.2",
        "folder": "M3 6 H9.5 L11.5 8 H21 V19 H3 Z",
        "message": "M4 5 H20 V16 H10 L6 20 V16 H4 Z",
        "chevron": "M6 9 L12 15 L18 9",
        "sidebar": "M4 5 H20 V19 H4 Z M9.5 5 V19",
        "back": "M15 6 L9 12 L15 18",
        "weir": "M3 9 Q7.5 5 12 9 T21 9 M3 14 Q7.5 10 12 14 T21 14 M3 19 Q7.5 15 12 19 T21 19",
        "user": "M16 8 A4 4 0 1 1 8 8 A4 4 0 1 1 16 8 M4.5 20 Q5.5 14 12 14 Q18.5 14 19.5 20",
        "queue": "M4 6 H20 M4 12 H20 M4 18 H13",
        "plug": "M9 3 V8 M15 3 V8 M6 8 H18 V11 A6 6 0 0 1 6 11 Z M12 17 V21",
        "database": "M5 6 Q5 3.5 12 3.5 Q19 3.5 19 6 Q19 8.5 12 8.5 Q5 8.5 5 6 V18 Q5 20.5 12 20.5 Q19 20.5 19 18 V6 M5 12 Q5 14.5 12 14.5 Q19 14.5 19 12",
        "globe": "M21 12 A9 9 0 1 1 3 12 A9 9 0 1 1 21 12 M3.5 9 H20.5 M3.5 15 H20.5 M12 3 Q6.5 12 12 21 M12 3 Q17.5 12 12 21"
    })

    // Painted (VectorPath), not a QtQuick.Shapes Shape: see VectorPath.h.
    VectorPath {
        anchors.fill: parent
        viewSize: 24
        pathData: icon.paths[icon.name] || ""
        strokeColor: icon.color
        strokeWidth: icon.name === "more" ? 3.2 : icon.lineWidth
        fillColor: icon.name === "stop" ? icon.color : "transparent"
    }
}

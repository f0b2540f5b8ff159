pragma Singleton
import QtQuick
import Weir

// Colours and metrics for every view. The theme is the user's choice in
// Settings (system / light / dark, App.settings.theme); "system" follows the
// platform's colour scheme (Qt 6.5+: styleHints.colorScheme) or, on older Qt,
// the lightness of the system palette's window colour. WEIR_THEME=dark|light
// overrides both (tests). `controlPalette` gives Qt Quick Controls (text fields,
// combo boxes, menus, popups, dialogs, scroll bars) the same colours.
QtObject {
    id: theme

    readonly property SystemPalette palette: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property string mode: App.themeOverride === "dark" || App.themeOverride === "light" ? App.themeOverride
                                   : App.settings ? App.settings.theme : "system"
    // Qt.styleHints.colorScheme is undefined before Qt 6.5; 2 = Qt.Dark, 1 = Qt.Light.
    readonly property bool systemDark: Qt.styleHints.colorScheme === 2 ? true
                                       : Qt.styleHints.colorScheme === 1 ? false
                                       : palette.window.hslLightness < 0.5
    readonly property bool dark: mode === "dark" ? true : mode === "light" ? false : systemDark

    function mix(a, b, t) {
        return Qt.rgba(a.r * (1 - t) + b.r * t, a.g * (1 - t) + b.g * t,
                       a.b * (1 - t) + b.b * t, a.a * (1 - t) + b.a * t)
    }

    // "1 token" / "12 tokens": English plurals without a translation file.
    function count(n, one, many) { return (n === 1 ? one : many).arg(n) }

    // Surfaces
    readonly property color window: dark ? "#1b1d21" : "#ffffff"
    readonly property color sidebar: dark ? "#15171a" : "#f4f5f7"
    readonly property color surface: dark ? "#23262b" : "#ffffff"
    readonly property color raised: dark ? "#2a2e34" : "#f7f8fa"
    readonly property color hover: dark ? Qt.rgba(1, 1, 1, 0.06) : Qt.rgba(0, 0, 0, 0.045)
    readonly property color selected: dark ? Qt.rgba(1, 1, 1, 0.10) : Qt.rgba(0, 0, 0, 0.075)
    readonly property color border: dark ? "#353a41" : "#e2e5e9"
    readonly property color strongBorder: dark ? "#4a5058" : "#cfd4da"

    // Text
    readonly property color text: dark ? "#e8eaed" : "#1f2328"
    readonly property color muted: dark ? "#9aa0a8" : "#656d76"
    readonly property color faint: dark ? "#6b7178" : "#8c959f"

    // Accent follows the system highlight when it has some colour.
    readonly property color accent: palette.highlight.hslSaturation > 0.25
                                    ? palette.highlight : (dark ? "#6ea8fe" : "#2f6fde")
    readonly property color accentText: "#ffffff"
    readonly property color accentSoft: Qt.rgba(accent.r, accent.g, accent.b, dark ? 0.22 : 0.10)
    readonly property color userBubble: dark ? "#2c3440" : "#eef3fb"

    readonly property color danger: dark ? "#ff7b72" : "#cf222e"
    readonly property color dangerSoft: dark ? Qt.rgba(1, 0.48, 0.45, 0.14) : "#ffebe9"
    readonly property color warning: dark ? "#e3b341" : "#9a6700"
    readonly property color warningSoft: dark ? Qt.rgba(0.89, 0.70, 0.25, 0.14) : "#fff8c5"
    readonly property color success: dark ? "#56d364" : "#1a7f37"

    // Code blocks
    readonly property color codeBackground: dark ? "#16181c" : "#f6f8fa"
    readonly property color codeHeader: dark ? "#202328" : "#eef0f3"
    readonly property color inlineCode: dark ? "#2d3139" : "#eff1f3"

    // Pool chart
    readonly property color poolUsed: accent
    readonly property color poolCached: dark ? "#3fb9a0" : "#1f9d83"
    readonly property color poolFree: dark ? "#2a2e34" : "#eef0f3"
    readonly property color poolFloor: warning

    // Metrics
    readonly property int radius: 8
    readonly property int smallRadius: 6
    readonly property int spacing: 8
    readonly property int sidebarWidth: 272
    readonly property int contentWidth: 820
    // The user's zoom (Ctrl+plus / Ctrl+minus / Ctrl+0) scales every font size.
    readonly property real zoom: App.settings ? App.settings.zoom : 1.0
    readonly property real baseSize: Math.round((Qt.application.font.pixelSize > 0 ? Qt.application.font.pixelSize : 14) * zoom)
    readonly property real smallSize: Math.round(baseSize * 0.86)
    readonly property real titleSize: Math.round(baseSize * 1.3)
    // One resolved family name: QML does not split a comma-joined list.
    readonly property string monoFamily: App.monospaceFamily
}

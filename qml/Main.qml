import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The main window: conversations on the left, the current page on the right
// (chat, pool monitor, engine settings, remote engines, model, about), banners for storage
// trouble and engine pressure on top, notices at the bottom.
ApplicationWindow {
    id: window
    objectName: "mainWindow"
    width: 1280
    height: 820
    minimumWidth: 560
    minimumHeight: 480
    visible: true
    title: App.chat.currentId > 0 ? App.chat.currentTitle + " \u2014 Weir" : "Weir"
    color: Theme.window
    font.pixelSize: Theme.baseSize

    // Qt Quick Controls (Fusion) draw from the palette: give every control,
    // popup, menu, dialog and scroll bar the theme's colours, dark included.
    palette.window: Theme.window
    palette.windowText: Theme.text
    palette.base: Theme.surface
    palette.alternateBase: Theme.raised
    palette.text: Theme.text
    palette.button: Theme.raised
    palette.buttonText: Theme.text
    palette.brightText: Theme.accentText
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.placeholderText: Theme.faint
    palette.toolTipBase: Theme.raised
    palette.toolTipText: Theme.text
    palette.link: Theme.accent
    palette.light: Theme.dark ? Theme.raised : "#ffffff"
    palette.midlight: Theme.dark ? Theme.border : "#eef0f3"
    palette.mid: Theme.strongBorder
    palette.dark: Theme.dark ? "#0e0f11" : "#a0a6ad"
    palette.shadow: Theme.dark ? "#000000" : "#5a5f66"
    palette.disabled.text: Theme.faint
    palette.disabled.windowText: Theme.faint
    palette.disabled.buttonText: Theme.faint
    palette.disabled.base: Theme.raised

    property string page: App.startPage
    property alias sidebar: sidebar
    property alias chatView: chatView
    property alias sidebarDrawer: drawer
    // Below this width the sidebar is a drawer over the page, not a column beside it.
    readonly property bool narrow: width < 760

    // Ctrl+B and the sidebar buttons: fold the column away, or open the drawer.
    function toggleSidebar() {
        if (narrow) drawer.visible ? drawer.close() : drawer.open()
        else App.settings.sidebarCollapsed = !App.settings.sidebarCollapsed
    }
    // One Sidebar, moved between the column and the drawer as the width changes.
    function placeSidebar() {
        sidebar.parent = narrow ? drawer.contentItem : sidebarSlot
        if (!narrow) drawer.close()
    }
    onNarrowChanged: placeSidebar()

    // Ctrl+plus / Ctrl+minus / Ctrl+0: every font size, shown in a toast.
    function zoomBy(step) {
        App.settings.zoom = step === 0 ? 1.0 : App.settings.zoom + step
        toast.show(qsTr("Zoom %1%").arg(Math.round(App.settings.zoom * 100)), false)
    }

    function navigate(p) {
        page = p
        if (p === "chat") Qt.callLater(chatView.focusComposer)
    }

    // Window geometry and the last conversation come back on the next start.
    Component.onCompleted: {
        placeSidebar()
        const g = App.settings.windowGeometry
        if (g.width >= minimumWidth && g.height >= minimumHeight) {
            x = g.x; y = g.y; width = g.width; height = g.height
        }
        if (App.settings.windowMaximized) showMaximized()
        chatView.focusComposer()
        if (App.interruptedAtStart > 0)
            toast.show(Theme.count(App.interruptedAtStart, qsTr("%1 reply was cut off when Weir last closed; it is marked interrupted."), qsTr("%1 replies were cut off when Weir last closed; they are marked interrupted.")), false)
    }
    function saveGeometry() {
        App.settings.windowMaximized = window.visibility === Window.Maximized
        if (window.visibility === Window.Windowed) App.settings.windowGeometry = Qt.rect(x, y, width, height)
    }
    Timer { id: geometrySaver; interval: 500; onTriggered: window.saveGeometry() }
    onXChanged: geometrySaver.restart()
    onYChanged: geometrySaver.restart()
    onWidthChanged: geometrySaver.restart()
    onHeightChanged: geometrySaver.restart()
    onVisibilityChanged: geometrySaver.restart()
    onClosing: saveGeometry()

    // Ctrl+N opens an empty conversation when one exists (without a draft)
    // rather than adding another to the pile.
    // With a preset name, the conversation starts with that preset's settings.
    function startConversation(preset) {
        navigate("chat")
        chatView.composer.saveDraft()
        const empty = App.chat.emptyConversations()
        let opened = false
        for (let i = 0; i < empty.length && !opened; ++i) {
            if (App.settings.draft(empty[i]).length === 0) {
                App.chat.select(empty[i])
                opened = true
            }
        }
        if (!opened) App.chat.newConversation()
        if (preset !== undefined && preset.length > 0) {
            const p = App.settings.presets.preset(preset)
            if (Object.keys(p).length > 0) {
                App.chat.setSettings(p)
                toast.show(qsTr("New conversation with the preset \u201c%1\u201d").arg(preset), false)
            }
        }
    }

    Shortcut { sequence: "Ctrl+N"; onActivated: window.startConversation() }
    // Once: StandardKey.Quit is Ctrl+Q on Linux desktops, and a key listed
    // twice makes the shortcut ambiguous (it then does nothing).
    Shortcut { objectName: "quitShortcut"; sequence: "Ctrl+Q"; context: Qt.ApplicationShortcut; onActivated: window.close() }
    Shortcut { sequence: "Ctrl+F"; onActivated: sidebar.focusSearch() }
    Shortcut { sequence: "Ctrl+B"; onActivated: window.toggleSidebar() }
    // Spelled out: StandardKey.ZoomIn/ZoomOut are these same keys, and a key
    // listed twice makes the shortcut ambiguous (it then does nothing).
    Shortcut { sequences: ["Ctrl++", "Ctrl+="]; onActivated: window.zoomBy(0.1) }
    Shortcut { sequence: "Ctrl+-"; onActivated: window.zoomBy(-0.1) }
    Shortcut { sequence: "Ctrl+0"; onActivated: window.zoomBy(0) }
    Shortcut { sequence: "Ctrl+,"; onActivated: window.navigate(window.page === "settings" ? "chat" : "settings") }
    Shortcut {
        sequence: "Esc"
        enabled: window.page === "chat" && App.chat.currentGenerating
        onActivated: App.chat.stop()
    }

    Connections {
        target: App.storage
        function onNotice(text, error) { toast.show(text, error) }
    }
    Connections {
        target: App.engine
        function onLoadRefused(path, message) {
            toast.show(qsTr("%1 was not loaded; the model in use stays: %2").arg(path.split("/").pop()).arg(message), true)
        }
    }
    Connections {
        target: App.chat
        function onNotice(text, error) { toast.show(text, error) }
        function onUndoChanged() { if (App.chat.undoText.length > 0) toast.showUndo(App.chat.undoText) }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Item {
            id: sidebarSlot
            visible: !window.narrow && !App.settings.sidebarCollapsed
            Layout.preferredWidth: App.settings.sidebarWidth
            Layout.fillHeight: true
        }

        // With the sidebar folded away or in the drawer: a rail to bring it back.
        Rectangle {
            objectName: "sidebarRail"
            visible: window.narrow || App.settings.sidebarCollapsed
            Layout.preferredWidth: 48
            Layout.fillHeight: true
            color: Theme.sidebar
            Rectangle { anchors.right: parent.right; width: 1; height: parent.height; color: Theme.border }
            Column {
                anchors.horizontalCenter: parent.horizontalCenter
                anchors.top: parent.top
                anchors.topMargin: 10
                spacing: 6
                IconButton {
                    objectName: "showSidebarButton"
                    iconName: "sidebar"
                    tip: qsTr("Show conversations (Ctrl+B)")
                    onClicked: window.toggleSidebar()
                }
                IconButton {
                    iconName: "plus"
                    tip: qsTr("New conversation (Ctrl+N)")
                    onClicked: window.startConversation()
                }
            }
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            // Storage trouble stays on screen while it lasts (a toast would go).
            // Dismissing hides one message; a new one shows again.
            Banner {
                objectName: "storageBanner"
                property string dismissedText
                Layout.fillWidth: true
                text: App.storage && App.storage.problem !== dismissedText ? App.storage.problem : ""
                error: true
                actionText: App.storage && App.storage.canRestore ? qsTr("Restore backup") : ""
                onAction: App.storage.restoreBackup()
                onDismissed: dismissedText = App.storage.problem
            }
            Banner {
                objectName: "saveProblemBanner"
                property string dismissedText
                Layout.fillWidth: true
                text: App.chat.saveProblem !== dismissedText ? App.chat.saveProblem : ""
                error: true
                onDismissed: dismissedText = App.chat.saveProblem
            }
            Banner {
                objectName: "pressureBanner"
                Layout.fillWidth: true
                text: App.pools.pressure
                error: App.pools.pressureIsError
                actionText: window.page === "monitor" ? "" : qsTr("Pool monitor")
                onAction: window.navigate("monitor")
                onDismissed: App.pools.dismissPressure()
            }
            Banner {
                objectName: "engineErrorBanner"
                Layout.fillWidth: true
                text: App.engine.state === EngineHost.Failed && window.page !== "model" && window.page !== "chat"
                      ? qsTr("The model failed to load: %1").arg(App.engine.errorString) : ""
                error: true
                actionText: qsTr("Model")
                onAction: window.navigate("model")
                onDismissed: window.navigate("model")
            }

            StackLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: ["chat", "monitor", "settings", "model", "about", "tools", "remote"].indexOf(window.page)
                ChatView { id: chatView; onNavigateRequested: function(p) { window.navigate(p) } }
                PoolMonitor { id: poolMonitor }
                EngineSettingsPage { id: engineSettings }
                ModelPage { id: modelPage }
                AboutPage { id: aboutPage }
                ToolsPage { id: toolsPage }
                RemoteEnginesPage { id: remoteEnginesPage }
            }
        }
    }

    Drawer {
        id: drawer
        objectName: "sidebarDrawer"
        width: Math.min(App.settings.sidebarWidth, window.width * 0.85)
        height: window.height
        interactive: window.narrow
        background: Rectangle { color: Theme.sidebar }
    }

    Sidebar {
        id: sidebar
        width: parent ? parent.width : 0
        height: parent ? parent.height : 0
        page: window.page
        narrow: window.narrow
        onNavigate: function(p) { window.navigate(p); if (window.narrow) drawer.close() }
        onNewConversationRequested: { window.startConversation(); if (window.narrow) drawer.close() }
        onConversationOpened: if (window.narrow) drawer.close()
        onSearchResultOpened: function(conversationId, messageId) { chatView.messageList.showMessage(messageId) }
        onNewConversationFromPreset: function(name) { window.startConversation(name); if (window.narrow) drawer.close() }
        onCollapseRequested: window.toggleSidebar()
    }

    Toast {
        id: toast
        objectName: "toast"
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 90
    }
}

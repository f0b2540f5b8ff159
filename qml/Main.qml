import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The main window: conversations on the left, the current page on the right
// (chat, pool monitor, engine settings, model, about), banners for storage
// trouble and engine pressure on top, notices at the bottom.
ApplicationWindow {
    id: window
    objectName: "mainWindow"
    width: 1280
    height: 820
    minimumWidth: 760
    minimumHeight: 480
    visible: true
    title: App.chat.currentId > 0 ? App.chat.currentTitle + " \u2014 Weir" : "Weir"
    color: Theme.window

    property string page: App.startPage
    property alias sidebar: sidebar
    property alias chatView: chatView

    function navigate(p) {
        page = p
        if (p === "chat") Qt.callLater(chatView.focusComposer)
    }

    // Window geometry and the last conversation come back on the next start.
    Component.onCompleted: {
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
    function startConversation() {
        navigate("chat")
        chatView.composer.saveDraft()
        const empty = App.chat.emptyConversations()
        for (let i = 0; i < empty.length; ++i) {
            if (App.settings.draft(empty[i]).length === 0) {
                App.chat.select(empty[i])
                return
            }
        }
        App.chat.newConversation()
    }

    Shortcut { sequence: "Ctrl+N"; onActivated: window.startConversation() }
    Shortcut { sequences: [StandardKey.Quit, "Ctrl+Q"]; context: Qt.ApplicationShortcut; onActivated: window.close() }
    Shortcut { sequence: "Ctrl+F"; onActivated: sidebar.focusSearch() }
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

        Sidebar {
            id: sidebar
            Layout.preferredWidth: App.settings.sidebarWidth
            Layout.fillHeight: true
            page: window.page
            onNavigate: function(p) { window.navigate(p) }
            onNewConversationRequested: window.startConversation()
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
                currentIndex: ["chat", "monitor", "settings", "model", "about", "tools"].indexOf(window.page)
                ChatView { id: chatView; onNavigateRequested: function(p) { window.navigate(p) } }
                PoolMonitor { id: poolMonitor }
                EngineSettingsPage { id: engineSettings }
                ModelPage { id: modelPage }
                AboutPage { id: aboutPage }
                ToolsPage { id: toolsPage }
            }
        }
    }

    Toast {
        id: toast
        objectName: "toast"
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 90
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQml.Models
import Weir

// Conversations: new, search (titles and content), rename in place, delete
// with undo, and a marker on the ones generating or waiting. Navigation to
// the pool monitor, engine settings, model and about pages sits at the bottom.
Rectangle {
    id: sidebar
    objectName: "sidebar"
    color: Theme.sidebar

    property string page: "chat"
    property bool narrow: false   // shown in a drawer over the page
    signal navigate(string page)
    signal newConversationRequested()
    // A new conversation started from a preset (its name).
    signal newConversationFromPreset(string preset)
    signal conversationOpened()
    signal collapseRequested()
    // A search result was clicked: open its conversation at the matching message.
    signal searchResultOpened(real conversationId, real messageId)
    property alias searchField: search

    function focusSearch() { search.forceActiveFocus(); search.selectAll() }
    function startRename(id) {
        const row = App.chat.conversations.rowOf(id)
        if (row >= 0) { list.currentIndex = row; list.renamingId = id }
    }

    Rectangle { anchors.right: parent.right; width: 1; height: parent.height; color: Theme.border }

    ColumnLayout {
        anchors.fill: parent
        anchors.rightMargin: 1
        spacing: 0

        // Brand + new conversation
        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 12
            Layout.bottomMargin: 8
            spacing: 8
            Icon { name: "weir"; color: Theme.accent; size: 22; lineWidth: 2 }
            Label {
                text: "Weir"
                font.pixelSize: Theme.titleSize
                font.weight: Font.DemiBold
                color: Theme.text
                Layout.fillWidth: true
            }
            IconButton {
                objectName: "importButton"
                iconName: "import"
                tip: qsTr("Import a conversation (JSON)")
                onClicked: importDialog.start()
            }
            IconButton {
                objectName: "newConversationButton"
                iconName: "plus"
                tip: qsTr("New conversation (Ctrl+N)")
                onClicked: sidebar.newConversationRequested()
            }
            IconButton {
                objectName: "newFromPresetButton"
                visible: App.settings.presets.names.length > 0
                iconName: "chevron"
                iconSize: 14
                implicitWidth: 20
                tip: qsTr("New conversation from a preset")
                onClicked: presetMenu.popup()
                Menu {
                    id: presetMenu
                    objectName: "presetMenu"
                    Instantiator {
                        model: App.settings.presets.names
                        delegate: MenuItem {
                            required property string modelData
                            text: modelData
                            onTriggered: sidebar.newConversationFromPreset(modelData)
                        }
                        onObjectAdded: function(index, object) { presetMenu.insertItem(index, object) }
                        onObjectRemoved: function(index, object) { presetMenu.removeItem(object) }
                    }
                }
            }
            IconButton {
                objectName: "collapseSidebarButton"
                iconName: sidebar.narrow ? "close" : "sidebar"
                tip: sidebar.narrow ? qsTr("Close") : qsTr("Hide conversations (Ctrl+B)")
                onClicked: sidebar.collapseRequested()
            }
        }

        // Search
        TextField {
            id: search
            objectName: "searchField"
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            Layout.bottomMargin: 8
            placeholderText: qsTr("Search conversations")
            leftPadding: 32
            selectByMouse: true
            color: Theme.text
            placeholderTextColor: Theme.faint
            background: Rectangle {
                radius: Theme.smallRadius
                color: Theme.surface
                border.color: search.activeFocus ? Theme.accent : Theme.border
                border.width: search.activeFocus ? 1.5 : 1
            }
            Icon {
                name: "search"; size: 16; color: Theme.faint
                anchors.left: parent.left; anchors.leftMargin: 10
                anchors.verticalCenter: parent.verticalCenter
            }
            onTextChanged: searchDelay.restart()
            Accessible.name: qsTr("Search conversations")
            // Esc clears the search here, whatever else it does in the window.
            Keys.onShortcutOverride: function(event) { event.accepted = event.key === Qt.Key_Escape }
            Keys.onEscapePressed: { text = ""; list.forceActiveFocus() }
            Timer { id: searchDelay; interval: 180; onTriggered: App.chat.searchText = search.text }
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: App.chat.conversations
            currentIndex: model.rowOf(App.chat.currentId)
            boundsBehavior: Flickable.StopAtBounds
            property real renamingId: 0
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }

            section.property: "section"
            section.delegate: Label {
                required property string section
                width: ListView.view.width
                text: section
                leftPadding: 20
                topPadding: 12
                bottomPadding: 4
                font.pixelSize: Theme.smallSize - 1
                font.weight: Font.DemiBold
                color: Theme.faint
            }

            delegate: ConversationDelegate {
                required property real matchMessageId
                width: ListView.view.width
                current: conversationId === App.chat.currentId && sidebar.page === "chat"
                renaming: list.renamingId === conversationId
                onActivated: {
                    sidebar.navigate("chat")
                    App.chat.select(conversationId)
                    if (snippet.length > 0 && matchMessageId > 0) sidebar.searchResultOpened(conversationId, matchMessageId)
                    sidebar.conversationOpened()
                }
                onRenameRequested: list.renamingId = conversationId
                onRenameFinished: function(title) {
                    list.renamingId = 0
                    if (title !== undefined) App.chat.rename(conversationId, title)
                }
                onDeleteRequested: App.chat.remove(conversationId)
                onExportRequested: function(format) { exportDialog.start(conversationId, format) }
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 48
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.faint
                text: App.chat.searchText.length > 0 ? qsTr("No conversation mentions \u201c%1\u201d").arg(App.chat.searchText)
                                                     : qsTr("No conversations yet.\nPress Ctrl+N to start one.")
            }
        }

        Rectangle { Layout.fillWidth: true; height: 1; color: Theme.border }

        // Pages
        ColumnLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            spacing: 2
            NavItem {
                objectName: "navPoolMonitor"
                iconName: "activity"; text: qsTr("Pool monitor"); page: "monitor"
                badge: App.pools.pressure.length > 0 ? "!" : ""
            }
            NavItem { objectName: "navEngineSettings"; iconName: "sliders"; text: qsTr("Engine settings"); page: "settings"; shortcutText: "Ctrl+," }
            NavItem { objectName: "navModel"; iconName: "chip"; text: qsTr("Model"); page: "model" }
            NavItem { objectName: "navTools"; iconName: "plug"; text: qsTr("Tools"); page: "tools" }
            NavItem { objectName: "navAbout"; iconName: "info"; text: qsTr("About"); page: "about" }
        }
    }

    component NavItem: ItemDelegate {
        id: nav
        property string iconName
        property string page
        property string badge: ""
        property string shortcutText: ""
        Layout.fillWidth: true
        implicitHeight: 34
        hoverEnabled: true
        highlighted: sidebar.page === page
        onClicked: sidebar.navigate(page)
        focusPolicy: Qt.StrongFocus  // an ItemDelegate takes no focus by itself
        Keys.onReturnPressed: sidebar.navigate(page)
        Keys.onEnterPressed: sidebar.navigate(page)
        contentItem: RowLayout {
            spacing: 10
            Icon { name: nav.iconName; size: 17; color: nav.highlighted ? Theme.accent : Theme.muted }
            Label {
                text: nav.text
                color: nav.highlighted ? Theme.text : Theme.muted
                font.weight: nav.highlighted ? Font.DemiBold : Font.Normal
                Layout.fillWidth: true
            }
            Label { visible: nav.shortcutText.length > 0 && nav.hovered; text: nav.shortcutText; color: Theme.faint; font.pixelSize: Theme.smallSize - 1 }
            Rectangle {
                visible: nav.badge.length > 0
                width: 8; height: 8; radius: 4
                color: App.pools.pressureIsError ? Theme.danger : Theme.warning
            }
        }
        background: Rectangle {
            radius: Theme.smallRadius
            color: nav.highlighted ? Theme.selected : nav.hovered ? Theme.hover : "transparent"
            FocusRing { shown: nav.visualFocus; radius: Theme.smallRadius + 2 }
        }
    }

    function exportConversation(id, format) { exportDialog.start(id, format) }
    ExportDialog { id: exportDialog }
    ImportDialog { id: importDialog }
}

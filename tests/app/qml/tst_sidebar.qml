import QtQuick
import QtTest
import Weir

// Sidebar: new conversations appear at the top, the search narrows the list,
// the current one is highlighted.
Item {
    id: root
    width: 300; height: 700

    TestCase {
        name: "Sidebar"
        when: windowShown

        Component { id: sidebarComponent; Sidebar { width: 280; height: 680 } }

        function test_newAndSearch() {
            const sidebar = createTemporaryObject(sidebarComponent, root)
            const list = findChild(sidebar, "conversationList")
            const before = list.count
            const id = App.chat.newConversation()
            App.chat.rename(id, "Quokka facts")
            compare(list.count, before + 1)
            compare(App.chat.conversations.idAt(list.currentIndex), id)

            const search = findChild(sidebar, "searchField")
            search.forceActiveFocus()
            search.text = "quokka"
            tryCompare(list, "count", 1)
            search.text = ""
            tryCompare(list, "count", before + 1)
        }
    }
}

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
        Component { id: spyComponent; SignalSpy {} }

        // A result shows the text around the match, the match in bold; a click
        // opens the conversation and names the message to scroll to.
        function test_searchSnippetOpensAtTheMessage() {
            const sidebar = createTemporaryObject(sidebarComponent, root)
            const spy = createTemporaryObject(spyComponent, root, { target: sidebar, signalName: "searchResultOpened" })
            const list = findChild(sidebar, "conversationList")
            const id = App.chat.newConversation()
            verify(App.chat.sendTo(id, "Where do wombats dig their burrows along the river banks?"))
            tryVerify(function() { return !App.chat.isGenerating(id) }, 10000)
            App.chat.select(0)

            const search = findChild(sidebar, "searchField")
            search.text = "WOMBATS"
            tryCompare(list, "count", 1)
            const row = list.itemAtIndex(0)
            const snippet = findChild(row, "searchSnippet")
            verify(snippet.visible)
            verify(snippet.text.indexOf(">wombats</font></b>") >= 0, snippet.text)
            mouseClick(row)
            compare(App.chat.currentId, id)
            compare(spy.count, 1)
            compare(spy.signalArguments[0][0], id)
            compare(spy.signalArguments[0][1], App.chat.messages.get(0).messageId)
            search.text = ""
            tryCompare(App.chat, "searchText", "")
        }

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

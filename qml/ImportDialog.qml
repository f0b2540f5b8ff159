import QtQuick
import QtQuick.Dialogs
import Weir

// Picks a Weir JSON export and imports it as a new conversation.
FileDialog {
    objectName: "importDialog"
    acceptLabel: qsTr("Import")
    title: qsTr("Import a conversation")
    fileMode: FileDialog.OpenFile
    nameFilters: [qsTr("Weir conversation (*.json)"), qsTr("All files (*)")]
    // Exports go to Documents (or home, without one) by default: look there
    // first, not in the working directory.
    function start() {
        currentFolder = App.pathToUrl(App.dialogFolder())
        open()
    }
    onAccepted: App.chat.importConversation(selectedFile)
}

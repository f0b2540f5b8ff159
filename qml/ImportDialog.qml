import QtCore
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
    // Exports go to Documents by default: look there first, not in the working directory.
    currentFolder: StandardPaths.writableLocation(StandardPaths.DocumentsLocation)
    onAccepted: App.chat.importConversation(selectedFile)
}

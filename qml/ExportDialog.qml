import QtQuick
import QtQuick.Dialogs
import Weir

// Asks where to save a conversation as Markdown or JSON, then exports it.
FileDialog {
    id: dialog
    objectName: "exportDialog"
    property real conversationId: 0
    property string format: "markdown"
    // Where the last export went. Not currentFolder: that starts as the
    // process's working directory, which is no place to suggest.
    property string lastFolder: ""

    function start(id, fmt) {
        conversationId = id
        format = fmt
        // Where the last export went, else Documents, else home (never "/",
        // never a folder that does not exist).
        const folder = App.dialogFolder(lastFolder)
        currentFolder = App.pathToUrl(folder)
        selectedFile = App.pathToUrl(folder + "/" + App.chat.suggestedFileName(id, fmt))
        open()
    }

    title: format === "json" ? qsTr("Export as JSON") : qsTr("Export as Markdown")
    fileMode: FileDialog.SaveFile
    acceptLabel: qsTr("Export")
    nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
    defaultSuffix: format === "json" ? "json" : "md"
    onAccepted: {
        const path = App.urlToPath(selectedFile)
        lastFolder = path.substring(0, path.lastIndexOf("/"))
        App.chat.exportConversation(conversationId, selectedFile, format)
    }
}

import QtCore
import QtQuick
import QtQuick.Dialogs
import Weir

// Asks where to save a conversation as Markdown or JSON, then exports it.
FileDialog {
    id: dialog
    objectName: "exportDialog"
    property real conversationId: 0
    property string format: "markdown"

    function start(id, fmt) {
        conversationId = id
        format = fmt
        // Where the last export went, else the Documents folder (never "/").
        const folder = currentFolder.toString().length > 0 ? App.urlToPath(currentFolder)
                     : App.urlToPath(StandardPaths.writableLocation(StandardPaths.DocumentsLocation))
        if (currentFolder.toString().length === 0) currentFolder = App.pathToUrl(folder)
        selectedFile = App.pathToUrl(folder + "/" + App.chat.suggestedFileName(id, fmt))
        open()
    }

    title: format === "json" ? qsTr("Export as JSON") : qsTr("Export as Markdown")
    fileMode: FileDialog.SaveFile
    acceptLabel: qsTr("Export")
    nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
    defaultSuffix: format === "json" ? "json" : "md"
    onAccepted: App.chat.exportConversation(conversationId, selectedFile, format)
}

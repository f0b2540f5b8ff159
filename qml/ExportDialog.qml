import QtQuick
import QtQuick.Dialogs
import Weir

// Asks where to save a conversation as Markdown or JSON, then exports it.
FileDialog {
    id: dialog
    property real conversationId: 0
    property string format: "markdown"

    function start(id, fmt) {
        conversationId = id
        format = fmt
        selectedFile = App.pathToUrl(currentFolder.toString().replace("file://", "") + "/" + App.chat.suggestedFileName(id, fmt))
        open()
    }

    title: format === "json" ? qsTr("Export as JSON") : qsTr("Export as Markdown")
    fileMode: FileDialog.SaveFile
    nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
    defaultSuffix: format === "json" ? "json" : "md"
    onAccepted: App.chat.exportConversation(conversationId, selectedFile, format)
}

// ChatController's edits of what was written: regenerate (a new version of a
// reply), edit and resend (a new version of a user message), switching
// versions, deleting one message (with undo), and Continue.
#include "chat/ChatController.h"

#include "storage/MessageTree.h"
#include "storage/Storage.h"

namespace weir::desktop {

bool ChatController::regenerate() {
    const qint64 id = currentId();
    if (!id || busy(id)) return false;
    const QList<MessageRecord> branch = storage_->messages(id);
    if (branch.isEmpty()) return false;
    // A new version of the first reply after the last user message (in an
    // agent session, the whole loop of that turn is written again); with none
    // (it failed to start), simply a reply.
    qint64 first = 0;
    for (auto it = branch.crbegin(); it != branch.crend() && it->role != u"user"; ++it) first = it->id;
    if (first) return regenerateMessage(first);
    return startReply(id);
}

bool ChatController::regenerateMessage(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || m->role != u"assistant" || busy(m->conversationId)) return false;
    // The reply is written for the turns before it: its parent becomes the
    // end of the visible branch for the prompt.
    const QList<MessageRecord> branch = storage_->messages(m->conversationId);
    if (std::none_of(branch.begin(), branch.end(), [&](const MessageRecord& r) { return r.id == messageId; })) return false;
    // A reply that failed before writing anything is not worth a version: the new one replaces it.
    const bool emptyFailure = m->state == MessageState::Failed && m->content.isEmpty();
    if (!startReply(m->conversationId, ReplyStart::newVersionOf(messageId))) return false;
    if (emptyFailure && storage_->deleteMessage(messageId) && m->conversationId == currentId()) showMessages();
    return true;
}

bool ChatController::editAndResend(qint64 messageId, const QString& text) {
    auto m = storage_->message(messageId);
    const QString trimmed = text.trimmed();
    if (!m || m->role != u"user" || trimmed.isEmpty()) return false;
    const qint64 id = m->conversationId;
    if (toolCalls_.waiting(id)) stopConversation(id);  // its tool calls belong to what is replaced
    // The reply being written answers the old text: end it now.
    if (LiveReply* g = replies_.forConversation(id)) replies_.endNow(g->ticket);
    // The old text stays as the earlier version, with the turns that followed it.
    MessageRecord edited;
    edited.conversationId = id;
    edited.role = QStringLiteral("user");
    edited.content = trimmed;
    const qint64 versionId = storage_->addVersion(edited, messageId);
    if (!versionId) return storageFailed(tr("Could not edit")), false;
    if (id == currentId()) showMessages();
    return startReply(id, ReplyStart::following(versionId));
}

bool ChatController::switchVersion(qint64 messageId, int step) {
    auto m = storage_->message(messageId);
    if (!m || busy(m->conversationId)) return false;
    const QList<MessageRecord> versions = versionsOf(storage_->allMessages(m->conversationId), messageId);
    int at = -1;
    for (int i = 0; i < versions.size(); ++i)
        if (versions[i].id == messageId) at = i;
    const int target = at + step;
    if (at < 0 || target < 0 || target >= versions.size() || target == at) return false;
    if (!storage_->selectVersion(versions[target].id)) return storageFailed(tr("Could not show that version")), false;
    if (m->conversationId == currentId()) showMessages();
    return true;
}

bool ChatController::deleteMessage(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || busy(m->conversationId)) return false;
    MessageUndo undo;
    undo.conversationId = m->conversationId;
    undo.before = storage_->allMessages(m->conversationId);
    for (const MessageRecord& r : std::as_const(undo.before)) {
        QList<ToolCallRecord> calls = storage_->toolCalls(r.id);
        if (!calls.isEmpty()) undo.toolCalls.insert(r.id, calls);
    }
    const bool withBranch = versionsOf(undo.before, messageId).size() > 1;
    undo.text = withBranch ? tr("Deleted a version and the turns that followed it") : tr("Deleted a message");
    if (!storage_->deleteMessage(messageId)) return storageFailed(tr("Could not delete the message")), false;
    saver_.forget(messageId);
    if (m->conversationId == currentId()) showMessages();
    list_.refreshRow(m->conversationId);
    list_.offerMessageUndo(std::move(undo));
    return true;
}

bool ChatController::continueReply(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || m->role != u"assistant" || m->content.isEmpty() || busy(m->conversationId)) return false;
    // A failed reply with text (cut by an unload or reload) writes on too.
    if (m->state == MessageState::Streaming) return false;
    // Only the latest reply: the model writes on where the conversation ends.
    const QList<MessageRecord> branch = storage_->messages(m->conversationId);
    if (branch.isEmpty() || branch.last().id != messageId) return false;
    if (tools_ && storage_->toolsEnabled(m->conversationId)) {
        // The continuation is rendered from plain turns, which have no tool calls or results.
        emit notice(tr("Continue is not available while the conversation offers tools; regenerate instead."), true);
        return false;
    }
    return startReply(m->conversationId, ReplyStart::continuing(messageId));
}

} // namespace weir::desktop

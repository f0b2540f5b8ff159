#pragma once
// Export a conversation as Markdown or JSON, and read it back from JSON.
// The JSON format ("weir.conversation", version 2) keeps everything Storage
// keeps, so export -> import round-trips: every version of every turn, each
// message with "parent" (the index of the message it follows in "messages",
// null for the first turn) and "active" (the version shown); a reply's "usage"
// adds "draft_tokens" and "accepted_draft_tokens" when speculative decoding
// verified drafts (older files lack them: none shown). Version 1 files
// (one branch, no "parent") still import. Markdown is what is on screen: pass
// the visible branch.
#include <QByteArray>
#include <QList>
#include <QString>

#include "storage/Records.h"

namespace weir::desktop {

struct ConversationDocument {
    ConversationRecord conversation;
    QList<MessageRecord> messages;
    QList<QList<ToolCallRecord>> toolCalls;  // one list per message
    // Per message, the index of the message it follows (-1: the first turn).
    // exportJson works it out from the records' ids when empty; importJson fills it.
    QList<int> parentIndex;
};

QString exportMarkdown(const ConversationDocument& doc);
QByteArray exportJson(const ConversationDocument& doc);
// Returns false with `error` naming the problem for input that is not a Weir
// conversation (bad JSON, wrong format, a message without a role, ...).
bool importJson(const QByteArray& json, ConversationDocument* doc, QString* error);

} // namespace weir::desktop

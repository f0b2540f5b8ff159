#pragma once
// Export a conversation as Markdown or JSON, and read it back from JSON.
// The JSON format ("weir.conversation", version 1) keeps everything Storage
// keeps, so export -> import round-trips.
#include <QByteArray>
#include <QList>
#include <QString>

#include "storage/Records.h"

namespace weir::desktop {

struct ConversationDocument {
    ConversationRecord conversation;
    QList<MessageRecord> messages;
    QList<QList<ToolCallRecord>> toolCalls;  // one list per message
};

QString exportMarkdown(const ConversationDocument& doc);
QByteArray exportJson(const ConversationDocument& doc);
// Returns false with `error` naming the problem for input that is not a Weir
// conversation (bad JSON, wrong format, a message without a role, ...).
bool importJson(const QByteArray& json, ConversationDocument* doc, QString* error);

} // namespace weir::desktop

#include "chat/ConversationController.h"

#include <QFile>
#include <QRegularExpression>
#include <QSaveFile>

#include "chat/GenerationTracker.h"
#include "chat/SearchSnippet.h"
#include "engine_host/ContextFit.h"
#include "storage/ConversationExport.h"
#include "storage/Storage.h"

namespace weir::desktop {
namespace {

QVariantMap settingsToMap(const ConversationSettings& s) {
    return {{"systemPrompt", s.systemPrompt}, {"temperature", s.temperature}, {"topP", s.topP},
            {"topK", s.topK},                 {"maxTokens", s.maxTokens},     {"seed", s.seed},
            {"contextPolicy", s.contextPolicy}, {"minP", s.minP}, {"repeatPenalty", s.repeatPenalty},
            {"engine", s.engine}};
}

} // namespace

ConversationController::ConversationController(Storage* storage, const GenerationTracker* replies, QObject* parent)
    : QObject(parent), storage_(storage), replies_(replies) {
    currentSettings_ = defaultSettings();
    reload();
}

QString ConversationController::currentTitle() const {
    const int row = model_.rowOf(currentId_);
    if (row >= 0) return model_.data(model_.index(row), ConversationListModel::TitleRole).toString();
    if (currentId_ == 0) return {};
    auto c = storage_->conversation(currentId_);
    return c && !c->title.isEmpty() ? c->title : tr("New conversation");
}

// QML bindings read currentSettings often; it is read from the database once
// per change of the current conversation, not on every read.
void ConversationController::announceCurrentChanged() {
    if (currentId_ == 0) {
        currentSettings_ = defaultSettings();
    } else {
        auto c = storage_->conversation(currentId_);
        currentSettings_ = settingsToMap(c ? c->settings : ConversationSettings{});
    }
    emit currentChanged();
}

QVariantMap ConversationController::defaultSettings() const { return settingsToMap(ConversationSettings{}); }

QString ConversationController::undoText() const {
    if (deletedMessage_) return deletedMessage_->text;
    if (removed_.isEmpty()) return {};
    const QString title = removed_.last().second.isEmpty() ? tr("New conversation") : removed_.last().second;
    return tr("Deleted \u201c%1\u201d").arg(title);
}

void ConversationController::reload() {
    QList<ConversationRecord> all = storage_->conversations();
    QHash<qint64, ConversationListModel::SearchMatch> matches;
    if (const QString needle = searchText_.trimmed(); !needle.isEmpty()) {
        const QList<qint64> ids = storage_->searchConversations(needle);
        const QSet<qint64> keep(ids.begin(), ids.end());
        all.erase(std::remove_if(all.begin(), all.end(), [&](const ConversationRecord& c) { return !keep.contains(c.id); }),
                  all.end());
        const auto hits = storage_->firstMatchingMessages(needle);
        for (auto it = hits.begin(); it != hits.end(); ++it)
            matches.insert(it.key(), {it.value().first, searchSnippet(it.value().second, needle)});
    }
    model_.setConversations(all, matches);
}

void ConversationController::setSearchText(const QString& text) {
    if (text == searchText_) return;
    searchText_ = text;
    reload();
    emit searchTextChanged();
}

void ConversationController::refreshRow(qint64 id) {
    auto c = storage_->conversation(id);
    if (!c || c->deletedAt != 0) return;
    if (searchText_.trimmed().isEmpty() || model_.rowOf(id) >= 0) model_.upsert(*c);
}

void ConversationController::storageFailed(const QString& what) {
    emit notice(what + QStringLiteral(": ") + storage_->lastError(), true);
}

qint64 ConversationController::newConversation() {
    const qint64 id = storage_->createConversation(QString());
    if (!id) {
        storageFailed(tr("Could not create a conversation"));
        return 0;
    }
    if (!searchText_.isEmpty()) setSearchText(QString());
    refreshRow(id);
    select(id);
    return id;
}

QList<qint64> ConversationController::emptyConversations() const {
    QList<qint64> ids;
    for (const ConversationRecord& c : storage_->conversations())
        if (c.title.isEmpty() && !replies_->forConversation(c.id) && storage_->messages(c.id).isEmpty()) ids << c.id;
    return ids;
}

void ConversationController::select(qint64 id) {
    if (id != 0 && !storage_->conversation(id)) id = 0;
    currentId_ = id;
    emit messagesChanged(id);
    announceCurrentChanged();
    emit selected(id);
}

void ConversationController::rename(qint64 id, const QString& title) {
    const QString t = title.simplified();
    if (t.isEmpty()) return;
    if (!storage_->renameConversation(id, t)) return storageFailed(tr("Could not rename"));
    if (model_.rowOf(id) >= 0) {
        if (auto c = storage_->conversation(id)) model_.upsert(*c);
    }
    if (id == currentId_) announceCurrentChanged();
}

void ConversationController::remove(qint64 id) {
    auto c = storage_->conversation(id);
    if (!c) return;
    emit removing(id);
    if (!storage_->setConversationDeleted(id, true)) return storageFailed(tr("Could not delete"));
    removed_.append({id, c->title});
    deletedMessage_.reset();  // Undo now means this conversation
    const int row = model_.rowOf(id);
    model_.remove(id);
    if (id == currentId_) {
        const int next = std::min(row, model_.count() - 1);
        select(next >= 0 ? model_.idAt(next) : 0);
    }
    emit undoChanged();
}

void ConversationController::offerMessageUndo(MessageUndo undo) {
    deletedMessage_ = std::move(undo);
    emit undoChanged();
}

void ConversationController::undoRemove() {
    if (deletedMessage_) {
        const MessageUndo d = *std::exchange(deletedMessage_, std::nullopt);
        if (!storage_->restoreMessages(d.before, d.toolCalls)) return storageFailed(tr("Could not restore the message"));
        if (d.conversationId == currentId_) emit messagesChanged(d.conversationId);
        else select(d.conversationId);
        refreshRow(d.conversationId);
        emit undoChanged();
        return;
    }
    if (removed_.isEmpty()) return;
    const qint64 id = removed_.takeLast().first;
    if (!storage_->setConversationDeleted(id, false)) return storageFailed(tr("Could not restore"));
    reload();
    select(id);
    emit undoChanged();
}

void ConversationController::purgeRemoved() {
    for (const auto& r : std::as_const(removed_)) storage_->deleteConversation(r.first);
    removed_.clear();
    deletedMessage_.reset();
    emit undoChanged();
}

void ConversationController::setSettingsOf(qint64 conversationId, const QVariantMap& map) {
    if (!conversationId) return;
    auto c = storage_->conversation(conversationId);
    if (!c) return;
    ConversationSettings s = c->settings;
    s.systemPrompt = map.value("systemPrompt", s.systemPrompt).toString();
    s.temperature = std::clamp(map.value("temperature", s.temperature).toDouble(), 0.0, 2.0);
    s.topP = std::clamp(map.value("topP", s.topP).toDouble(), 0.0, 1.0);
    s.topK = std::max(0, map.value("topK", s.topK).toInt());
    s.maxTokens = std::clamp(map.value("maxTokens", s.maxTokens).toInt(), 1, 1 << 20);
    s.seed = map.value("seed", s.seed).toLongLong();
    s.minP = std::clamp(map.value("minP", s.minP).toDouble(), 0.0, 1.0);
    s.repeatPenalty = std::clamp(map.value("repeatPenalty", s.repeatPenalty).toDouble(), 0.5, 2.0);
    if (map.contains(QStringLiteral("contextPolicy"))) {
        // "" follows the default; anything else must be a policy's name.
        const QString policy = map.value(QStringLiteral("contextPolicy")).toString();
        const auto known = contextPolicyFromName(policy.toStdString(), ContextPolicy(-1));
        s.contextPolicy = policy.isEmpty() || known != ContextPolicy(-1) ? policy : s.contextPolicy;
    }
    // "" is the local engine; a remote endpoint's name is checked when a reply starts.
    s.engine = map.value("engine", s.engine).toString().trimmed();
    if (!storage_->setConversationSettings(conversationId, s)) return storageFailed(tr("Could not save settings"));
    if (conversationId == currentId_) announceCurrentChanged();
}

QString ConversationController::conversationTitle(qint64 id) const {
    const int row = model_.rowOf(id);
    if (row >= 0) return model_.data(model_.index(row), ConversationListModel::TitleRole).toString();
    auto c = storage_->conversation(id);
    return c ? (c->title.isEmpty() ? tr("New conversation") : c->title) : QStringLiteral("conv:%1").arg(id);
}

QString ConversationController::suggestedFileName(qint64 id, const QString& format) const {
    auto c = storage_->conversation(id);
    QString base = c && !c->title.isEmpty() ? c->title : QStringLiteral("conversation");
    base.replace(QRegularExpression(QStringLiteral("[^\\w\\- ]+")), QString());
    base = base.simplified().replace(u' ', u'-').left(60);
    if (base.isEmpty()) base = QStringLiteral("conversation");
    return base + (format == u"json" ? QStringLiteral(".json") : QStringLiteral(".md"));
}

bool ConversationController::exportConversation(qint64 id, const QUrl& file, const QString& format) {
    auto c = storage_->conversation(id);
    if (!c) return false;
    ConversationDocument doc;
    doc.conversation = *c;
    // JSON keeps every version; Markdown is the conversation as it reads on screen.
    doc.messages = format == u"json" ? storage_->allMessages(id) : storage_->messages(id);
    for (const MessageRecord& m : doc.messages) doc.toolCalls.append(storage_->toolCalls(m.id));
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly)) {
        emit notice(tr("Could not write %1: %2").arg(path, out.errorString()), true);
        return false;
    }
    out.write(format == u"json" ? exportJson(doc) : exportMarkdown(doc).toUtf8());
    if (!out.commit()) {
        emit notice(tr("Could not write %1: %2").arg(path, out.errorString()), true);
        return false;
    }
    emit notice(tr("Exported to %1").arg(path), false);
    return true;
}

qint64 ConversationController::importConversation(const QUrl& file) {
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly)) {
        emit notice(tr("Could not read %1: %2").arg(path, in.errorString()), true);
        return 0;
    }
    ConversationDocument doc;
    QString error;
    if (!importJson(in.readAll(), &doc, &error)) {
        emit notice(tr("Could not import %1: %2").arg(path, error), true);
        return 0;
    }
    const qint64 id = storage_->importConversation(doc.conversation, doc.messages, doc.toolCalls, doc.parentIndex);
    if (!id) {
        storageFailed(tr("Could not import"));
        return 0;
    }
    if (!searchText_.isEmpty()) setSearchText(QString());
    reload();
    select(id);
    emit notice(tr("Imported \u201c%1\u201d").arg(doc.conversation.title), false);
    return id;
}

} // namespace weir::desktop

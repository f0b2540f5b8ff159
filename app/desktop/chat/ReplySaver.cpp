#include "chat/ReplySaver.h"

#include "chat/GenerationTracker.h"
#include "storage/Storage.h"

namespace weir::desktop {

ReplySaver::ReplySaver(Storage* storage, GenerationTracker* replies, QObject* parent)
    : QObject(parent), storage_(storage), replies_(replies) {
    timer_.setInterval(1000);
    connect(&timer_, &QTimer::timeout, this, &ReplySaver::saveNow);
}

int ReplySaver::unsavedCount() const {
    int n = int(unsaved_.size());
    for (const LiveReply* g : replies_->all()) n += g->saveFailed ? 1 : 0;
    return n;
}

void ReplySaver::clear() {
    unsaved_.clear();
    for (LiveReply* g : replies_->all()) g->saveFailed = false;
    if (problem_.isEmpty()) return;
    problem_.clear();
    emit problemChanged();
}

void ReplySaver::replyStarted() {
    if (!timer_.isActive()) timer_.start();
}

void ReplySaver::writeFailed() {
    QString text;
    switch (storage_->lastProblem()) {
    case StorageProblem::DiskFull:
        text = tr("The disk is full, so Weir cannot save. Replies stay on screen, marked \u201cnot saved\u201d, and are "
                  "saved as soon as there is space again.");
        break;
    case StorageProblem::ReadOnly:
        text = tr("Weir cannot write to its conversation database (%1). Replies stay on screen, marked \u201cnot "
                  "saved\u201d, and Weir keeps trying to save them.").arg(storage_->lastError());
        break;
    default:
        text = tr("Weir could not save to its conversation database (%1). Replies stay on screen, marked \u201cnot "
                  "saved\u201d, and Weir keeps trying to save them.").arg(storage_->lastError());
        break;
    }
    if (text == problem_) return;
    problem_ = text;
    emit problemChanged();
}

void ReplySaver::settle() {
    if (replies_->isEmpty() && unsaved_.isEmpty()) timer_.stop();
    if (problem_.isEmpty() || unsavedCount() > 0) return;
    problem_.clear();
    emit problemChanged();
    emit notice(tr("Saving works again: every reply is in the database."), false);
}

void ReplySaver::writeEnded(const MessageRecord& reply) {
    if (storage_->updateMessage(reply) || !storage_->message(reply.id)) return;
    // Kept here and written again on every save tick until it goes in.
    unsaved_.insert(reply.id, reply);
    writeFailed();
    if (!timer_.isActive()) timer_.start();
}

void ReplySaver::retryUnsaved() {
    for (auto it = unsaved_.begin(); it != unsaved_.end();) {
        if (storage_->updateMessage(it.value())) {
            emit savedChanged(it->conversationId, it.key(), true);
            it = unsaved_.erase(it);
        } else if (!storage_->message(it.key())) {
            it = unsaved_.erase(it);  // deleted meanwhile (regenerate, edit): nothing to keep
        } else {
            writeFailed();
            ++it;
        }
    }
}

void ReplySaver::saveNow() {
    for (LiveReply* g : replies_->all()) {
        if (!g->dirty) continue;
        if (storage_->saveProgress(g->messageId, g->text)) {
            g->dirty = false;
            if (g->saveFailed) {
                g->saveFailed = false;
                emit savedChanged(g->conversationId, g->messageId, true);
            }
            emit replySaved(g->conversationId, g->messageId, int(g->text.size()));
        } else if (storage_->message(g->messageId)) {
            // Kept in memory and tried again on the next tick.
            if (!g->saveFailed) {
                g->saveFailed = true;
                emit savedChanged(g->conversationId, g->messageId, false);
            }
            writeFailed();
        } else {
            g->dirty = false;  // the message was deleted while it streamed
        }
    }
    retryUnsaved();
    settle();
}

} // namespace weir::desktop

#pragma once
// Gets replies into the database: the text of every live reply once a second
// (so a killed process loses at most that), and every ended reply. A reply the
// database refuses (disk full, file not writable) is kept here and written
// again on every tick until it goes in; meanwhile problem() says why (a
// banner) and the reply is marked "not saved" on screen.
#include <QHash>
#include <QObject>
#include <QTimer>

#include "storage/Records.h"

namespace weir::desktop {

class GenerationTracker;
class Storage;

class ReplySaver : public QObject {
    Q_OBJECT

public:
    ReplySaver(Storage* storage, GenerationTracker* replies, QObject* parent = nullptr);

    int intervalMs() const { return timer_.interval(); }
    void setInterval(int ms) { timer_.setInterval(ms); }
    // "" while every reply reaches the database; otherwise why they do not.
    QString problem() const { return problem_; }
    // Replies whose latest text or final state is not in the database yet.
    int unsavedCount() const;
    // Ended replies the database has not taken yet, by message id.
    const QHash<qint64, MessageRecord>& unsaved() const { return unsaved_; }
    bool isUnsaved(qint64 messageId) const { return unsaved_.contains(messageId); }
    void forget(qint64 messageId) { unsaved_.remove(messageId); }
    // The database file was replaced: what waited belongs to the old one.
    void clear();

    // A reply started: save ticks run while any reply is live or unsaved.
    void replyStarted();
    // Writes an ended reply (when it is still stored); keeps it if the database refuses.
    void writeEnded(const MessageRecord& reply);
    // After a reply ended: stops the ticks when nothing is left, clears the problem once all is in.
    void settle();
    // One save tick (also called when the app closes).
    void saveNow();

signals:
    // A reply in progress was written to the database (`length` characters).
    void replySaved(qint64 conversationId, qint64 messageId, int length);
    // A reply went in, or failed to, after it had not (or had).
    void savedChanged(qint64 conversationId, qint64 messageId, bool saved);
    void problemChanged();
    void notice(const QString& text, bool error);

private:
    void writeFailed();  // says why (storage_->lastProblem())
    void retryUnsaved();

    Storage* storage_;
    GenerationTracker* replies_;
    QHash<qint64, MessageRecord> unsaved_;
    QString problem_;
    QTimer timer_;
};

} // namespace weir::desktop

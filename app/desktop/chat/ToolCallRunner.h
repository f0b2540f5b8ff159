#pragma once
// The tool calls of one agent reply per conversation: stored as cards, run at
// once or after the user's approval (ToolRegistry runs them off the GUI
// thread), denied, or stopped. When every call of a reply has finished, the
// agent loop goes on (finished) with their results in the database.
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <optional>
#include <vector>

#include "storage/Records.h"
#include "tools/Tool.h"
#include "weir/tool_calls.h"

namespace weir::desktop {

class Storage;
class ToolRegistry;

class ToolCallRunner : public QObject {
    Q_OBJECT

public:
    ToolCallRunner(Storage* storage, ToolRegistry* tools, QObject* parent = nullptr);
    void setTools(ToolRegistry* tools) { tools_ = tools; }

    // Stores the calls of reply `messageId` and runs those that need no approval.
    void start(qint64 conversationId, qint64 messageId, int step, const std::vector<ToolCall>& calls);
    bool waiting(qint64 conversationId) const { return waits_.contains(conversationId); }
    // The live state of a reply's calls while its loop waits for them.
    std::optional<QList<ToolCallRecord>> liveCalls(qint64 messageId) const;
    // The user's decision on a pending call (by its row id).
    void approve(qint64 callId);
    void deny(qint64 callId);
    // Ends the wait: unfinished calls are denied, a running tool's result is
    // dropped. Returns the reply whose calls they were (0: nothing waited).
    qint64 stop(qint64 conversationId);
    QList<qint64> waitingConversations() const { return waits_.keys(); }

signals:
    // A call was made or changed state (pending, approved, running, done, failed, denied).
    void toolCallChanged(qint64 conversationId, qint64 callId, const QString& state);
    // The cards of reply `messageId` changed.
    void callsChanged(qint64 conversationId, qint64 messageId);
    // Every call of reply `messageId` finished: the loop's next reply is due.
    void finished(qint64 conversationId, qint64 messageId, int step);
    void storageFailed(const QString& what);

private:
    struct Wait {
        qint64 messageId = 0;
        int step = 0;
        QList<ToolCallRecord> calls;
        QHash<qint64, QElapsedTimer> clocks;  // running calls, by id
    };
    ToolCallRecord recordOf(qint64 messageId, int n, const ToolCall& call) const;
    void run(qint64 conversationId, ToolCallRecord& call);
    void setState(qint64 conversationId, ToolCallRecord& call);
    void ended(qint64 conversationId, qint64 callId, const ToolResult& result);
    void finishIfDone(qint64 conversationId);
    ToolCallRecord* waitingCall(qint64 callId, qint64* conversationId);

    Storage* storage_;
    ToolRegistry* tools_;
    QHash<qint64, Wait> waits_;  // by conversation
};

} // namespace weir::desktop

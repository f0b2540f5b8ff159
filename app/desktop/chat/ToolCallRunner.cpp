#include "chat/ToolCallRunner.h"

#include "chat/AgentTurns.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

namespace weir::desktop {

ToolCallRunner::ToolCallRunner(Storage* storage, ToolRegistry* tools, QObject* parent)
    : QObject(parent), storage_(storage), tools_(tools) {}

ToolCallRecord ToolCallRunner::recordOf(qint64 messageId, int n, const ToolCall& call) const {
    ToolCallRecord r;
    r.messageId = messageId;
    r.callId = QStringLiteral("call_%1_%2").arg(messageId).arg(n);
    r.name = QString::fromStdString(call.name);
    r.arguments = QString::fromStdString(call.arguments);
    if (!tools_->isAvailable(r.name) || tools_->policy(r.name) == ToolRegistry::Policy::Never) {
        // Nothing to approve: the model is told at once and may try again.
        r.state = QStringLiteral("failed");
        r.result = tools_->isAvailable(r.name) ? tr("the user does not allow '%1'").arg(r.name)
                                               : tr("there is no tool named '%1'").arg(r.name);
    } else {
        r.state = tools_->needsApproval(r.name) ? QStringLiteral("pending") : QStringLiteral("approved");
    }
    return r;
}

void ToolCallRunner::start(qint64 conversationId, qint64 messageId, int step, const std::vector<ToolCall>& calls) {
    Wait wait;
    wait.messageId = messageId;
    wait.step = step;
    int n = 0;
    for (const ToolCall& call : calls) {
        ToolCallRecord r = recordOf(messageId, n++, call);
        r.id = storage_->addToolCall(r);
        if (!r.id) emit storageFailed(tr("Could not save a tool call"));
        wait.calls.append(r);
    }
    waits_.insert(conversationId, wait);
    emit callsChanged(conversationId, messageId);
    for (ToolCallRecord& r : waits_[conversationId].calls) {
        emit toolCallChanged(conversationId, r.id, r.state);
        if (r.state == u"approved") run(conversationId, r);
    }
    // Every call may have been refused at once (no such tool...).
    finishIfDone(conversationId);
}

std::optional<QList<ToolCallRecord>> ToolCallRunner::liveCalls(qint64 messageId) const {
    for (const Wait& w : waits_)
        if (w.messageId == messageId) return w.calls;
    return std::nullopt;
}

void ToolCallRunner::setState(qint64 conversationId, ToolCallRecord& call) {
    if (call.id && !storage_->updateToolCall(call)) emit storageFailed(tr("Could not save a tool call"));
    emit callsChanged(conversationId, call.messageId);
    emit toolCallChanged(conversationId, call.id, call.state);
}

void ToolCallRunner::run(qint64 conversationId, ToolCallRecord& call) {
    call.state = QStringLiteral("running");
    waits_[conversationId].clocks[call.id].start();
    setState(conversationId, call);
    const qint64 id = call.id;
    tools_->call(call.name, call.arguments, this,
                 [this, conversationId, id](const ToolResult& r) { ended(conversationId, id, r); });
}

ToolCallRecord* ToolCallRunner::waitingCall(qint64 callId, qint64* conversationId) {
    for (auto it = waits_.begin(); it != waits_.end(); ++it)
        for (ToolCallRecord& c : it->calls)
            if (c.id == callId) {
                *conversationId = it.key();
                return &c;
            }
    return nullptr;
}

void ToolCallRunner::approve(qint64 callId) {
    qint64 conv = 0;
    ToolCallRecord* call = waitingCall(callId, &conv);
    if (!call || call->state != u"pending") return;
    call->state = QStringLiteral("approved");
    setState(conv, *call);
    run(conv, *call);
}

void ToolCallRunner::deny(qint64 callId) {
    qint64 conv = 0;
    ToolCallRecord* call = waitingCall(callId, &conv);
    if (!call || call->state != u"pending") return;
    call->state = QStringLiteral("denied");
    call->result = tr("The user denied this call.");
    setState(conv, *call);
    finishIfDone(conv);
}

void ToolCallRunner::ended(qint64 conversationId, qint64 callId, const ToolResult& result) {
    auto it = waits_.find(conversationId);
    if (it == waits_.end()) return;  // the loop was stopped meanwhile
    for (ToolCallRecord& c : it->calls) {
        if (c.id != callId || c.state != u"running") continue;
        c.result = result.text;
        c.state = result.ok ? QStringLiteral("done") : QStringLiteral("failed");
        c.durationMs = double(it->clocks.value(callId).nsecsElapsed()) / 1e6;
        setState(conversationId, c);
    }
    finishIfDone(conversationId);
}

void ToolCallRunner::finishIfDone(qint64 conversationId) {
    auto it = waits_.find(conversationId);
    if (it == waits_.end()) return;
    for (const ToolCallRecord& r : it->calls)
        if (!toolCallFinished(r.state)) return;
    const Wait wait = waits_.take(conversationId);
    emit finished(conversationId, wait.messageId, wait.step);
}

qint64 ToolCallRunner::stop(qint64 conversationId) {
    if (!waits_.contains(conversationId)) return 0;
    Wait wait = waits_.take(conversationId);
    for (ToolCallRecord& c : wait.calls) {
        if (toolCallFinished(c.state)) continue;
        c.state = QStringLiteral("denied");
        c.result = tr("Stopped by the user.");
        if (c.id) storage_->updateToolCall(c);
        emit toolCallChanged(conversationId, c.id, c.state);
    }
    emit callsChanged(conversationId, wait.messageId);
    return wait.messageId;
}

} // namespace weir::desktop

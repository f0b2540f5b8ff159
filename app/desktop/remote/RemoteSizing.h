#pragma once
// Whether the conversations a user runs at once fit a remote engine, from
// what that engine tells: the model's context length (GET /v1/models), and
// where its pool status exposes them, the KV cache's capacity in tokens and
// the most requests it runs at once (llama.cpp's slots). The remote side
// decides for itself; this only says ahead of time what it will do: requests
// past its running limit wait in its queue, and conversations that together
// outgrow its KV cache get preempted (vLLM, SGLang: paused and recomputed
// later) or held back. A pure function, so the monitor and the tests agree.
#include <QString>
#include <optional>

namespace weir::desktop {

struct RemoteSizingInput {
    int conversations = 1;                    // conversations generating at once
    std::optional<qint64> contextLength;      // the model's, tokens
    std::optional<qint64> kvCapacityTokens;   // the server's whole KV cache, tokens
    std::optional<int> maxRunning;            // requests it runs at once
    // What one request may hold where the server says (llama.cpp's slots);
    // else an even share of the KV cache among maxRunning.
    std::optional<qint64> slotContextTokens;
};

struct RemoteSizingAdvice {
    bool queues = false;     // some conversations would wait behind the running limit
    bool preempts = false;   // at full context they would not all fit the KV cache
    bool checked = false;    // false when the server exposes too little to tell
    // Conversations that fit the KV cache at the model's full context, when known.
    std::optional<qint64> fitAtFullContext;
    QString text;            // one or two sentences for the monitor
    bool warns() const { return queues || preempts; }
};

RemoteSizingAdvice adviseRemoteSizing(const RemoteSizingInput& in);

} // namespace weir::desktop

#pragma once
// The shape of one chat answer in an API other than chat completions
// (Anthropic Messages, OpenAI Responses). The service runs the request like
// any chat completion and hands the writer the reply's pieces in order
// (text deltas, tool calls, the end); the writer keeps what it needs for the
// whole answer and returns the server-sent events a stream sends for each.
// One writer per request, used on the service's thread only.
#include <QByteArray>
#include <QJsonObject>
#include <memory>
#include <string>

#include "app/server/api_error.h"
#include "weir/types/generate.h"
#include "weir/types/tool_calls.h"

namespace weir::server {

// Which API a request came in through: the answer's and the errors' shape.
enum class ApiDialect { OpenAiChat, OpenAiCompletion, Anthropic, Responses };

// How the reply ended.
struct AnswerEnding {
    FinishReason reason = FinishReason::Stop;
    bool toolCalls = false;        // the reply made calls
    std::string stopSequence;      // the client's stop string that ended it; empty: none of the client's
    Usage usage;
};

class AnswerWriter {
public:
    virtual ~AnswerWriter() = default;
    virtual QByteArray begin() = 0;                            // the stream's opening events
    virtual QByteArray text(const std::string& delta) = 0;     // more of the reply's text
    virtual QByteArray call(const ToolCall& call) = 0;         // a complete tool call
    virtual QByteArray end(const AnswerEnding& ending) = 0;    // the stream's closing events
    virtual QJsonObject whole(const AnswerEnding& ending) const = 0;  // the answer, not streamed
    virtual QByteArray errorEvent(const ApiError& e) = 0;      // a failure after the stream began
};

// "event: NAME\ndata: {json}\n\n": both APIs name their events.
QByteArray namedSseEvent(const QString& name, const QJsonObject& data);

// An error body in the dialect's shape (OpenAI's for both OpenAI APIs).
QJsonObject errorJsonFor(ApiDialect dialect, const ApiError& e);

} // namespace weir::server

#pragma once
// An answer in Anthropic Messages' shape: the message object (content blocks
// text and tool_use, stop_reason end_turn / max_tokens / stop_sequence /
// tool_use, usage input_tokens / output_tokens) and its stream: message_start,
// ping, content_block_start / content_block_delta (text_delta,
// input_json_delta) / content_block_stop per block, message_delta with the
// stop reason and usage, message_stop. Errors are
// {"type": "error", "error": {"type": ..., "message": ...}}.
#include <QJsonArray>
#include <QString>

#include "app/server/answer_writer.h"

namespace weir::server {

class AnthropicAnswer : public AnswerWriter {
public:
    AnthropicAnswer(QString id, QString model, int inputTokens);
    QByteArray begin() override;
    QByteArray text(const std::string& delta) override;
    QByteArray call(const ToolCall& call) override;
    QByteArray end(const AnswerEnding& ending) override;
    QJsonObject whole(const AnswerEnding& ending) const override;
    QByteArray errorEvent(const ApiError& e) override;

private:
    QByteArray closeText();
    QJsonObject message(const QJsonArray& content, const AnswerEnding* ending) const;

    QString id_, model_;
    int inputTokens_ = 0;
    QJsonArray blocks_;      // the content so far; a text block grows in place
    bool textOpen_ = false;  // blocks_.last() is a text block still streaming
};

// Anthropic's error type for an HTTP status, and the error body.
QString anthropicErrorType(int status);
QJsonObject anthropicErrorJson(const ApiError& e);

} // namespace weir::server

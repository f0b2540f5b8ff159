#pragma once
// An answer in OpenAI Responses' shape: the response object (id, object
// "response", status completed / incomplete, output: a message item with an
// output_text part and function_call items, usage input_tokens /
// output_tokens / total_tokens, the request's settings repeated) and its
// stream: response.created, response.in_progress, then per item
// response.output_item.added, for text response.content_part.added /
// response.output_text.delta / response.output_text.done /
// response.content_part.done, for calls response.function_call_arguments.delta
// / .done, then response.output_item.done, and response.completed (or
// response.incomplete when max_output_tokens cut it). Every event carries
// its sequence_number.
#include <QJsonArray>
#include <QString>

#include "app/server/answer_writer.h"

namespace weir::server {

class ResponsesAnswer : public AnswerWriter {
public:
    // `echo`: the request's settings (responses_request.h).
    ResponsesAnswer(QString id, QString model, qint64 createdAt, QJsonObject echo);
    QByteArray begin() override;
    QByteArray text(const std::string& delta) override;
    QByteArray call(const ToolCall& call) override;
    QByteArray end(const AnswerEnding& ending) override;
    QJsonObject whole(const AnswerEnding& ending) const override;
    QByteArray errorEvent(const ApiError& e) override;

private:
    QByteArray event(const char* type, QJsonObject data);
    QByteArray openMessage();
    QByteArray closeMessage();
    QJsonObject response(const AnswerEnding* ending) const;

    QString id_, model_;
    qint64 createdAt_ = 0;
    QJsonObject echo_;
    QJsonArray output_;          // the items so far; an open message grows in place
    bool messageOpen_ = false;   // output_.last() is a message still streaming
    QString messageText_;
    int sequence_ = 0;
};

} // namespace weir::server

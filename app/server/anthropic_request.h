#pragma once
// An Anthropic Messages request (POST /v1/messages, /v1/messages/count_tokens)
// read into chat completions' shape, so that the same prompt rendering, tool
// handling, limits and checks serve both APIs: system (a string or text
// blocks) becomes the first system message, text blocks become content,
// tool_use blocks become the assistant's tool_calls, tool_result blocks
// become tool messages, tools' input_schema becomes parameters, tool_choice
// auto/any/tool/none becomes auto/required/the named function/none, and
// stop_sequences, max_tokens (400 when absent), temperature, top_p, top_k and
// stream carry over. Other block types (images, documents, thinking) and
// server tools are refused with a 400 naming the block. `model` may name any
// model (coding agents send Claude's names): the served one answers.
#include <QByteArray>
#include <QJsonObject>

#include "app/server/api_error.h"

namespace weir::server {

// True with `chatBody` filled (a chat completions request body), or false
// with `error` (400) naming the field, in Anthropic's own field names.
// `countOnly` (count_tokens): max_tokens is not needed, as in Anthropic's API.
bool anthropicToChatBody(const QByteArray& body, QJsonObject& chatBody, ApiError& error, bool countOnly = false);

} // namespace weir::server

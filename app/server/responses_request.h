#pragma once
// An OpenAI Responses request (POST /v1/responses), stateless, read into chat
// completions' shape so the same prompt rendering, tool handling, limits and
// structured output serve it: instructions become the first system message;
// input is a string (one user message) or items: messages (role, content a
// string or input_text / output_text parts), function_call items (the
// assistant's tool_calls; consecutive calls join one assistant turn) and
// function_call_output items (tool messages); function tools in the flat
// shape become chat's nested ones; max_output_tokens, temperature, top_p,
// tool_choice, parallel_tool_calls, stream carry over; text.format
// json_object / json_schema becomes response_format. store is ignored (no
// response is kept); previous_response_id is refused, as nothing is stored.
#include <QByteArray>
#include <QJsonObject>

#include "app/server/api_error.h"

namespace weir::server {

// True with `chatBody` filled and `echo` holding the request's settings the
// response object repeats (instructions, tools, tool_choice, text, ...), or
// false with `error` (400) naming the field.
bool responsesToChatBody(const QByteArray& body, QJsonObject& chatBody, QJsonObject& echo, ApiError& error);

} // namespace weir::server

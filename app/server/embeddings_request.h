#pragma once
// An OpenAI embeddings request (POST /v1/embeddings) read into a plain
// struct: input as a string, an array of strings, an array of token ids or
// an array of such arrays; encoding_format "float" or "base64"; `dimensions`
// refused (the model's width is what it is; a truncated vector would not be
// what the client asked for). Each wrong type or value is a 400 naming the
// field.
#include <QByteArray>
#include <QString>
#include <vector>

#include "app/server/api_error.h"
#include "app/server/request_parser.h"

namespace weir::server {

// Inputs per request: each is its own sequence in the engine, a few at a
// time (the request's event keys hold the input's index).
inline constexpr int kMaxEmbeddingInputs = 2048;

struct EmbeddingsRequest {
    QString model;                         // empty: not given (the served model)
    std::vector<CompletionPrompt> inputs;  // text or token ids, in order
    bool base64 = false;                   // encoding_format "base64": little-endian float32, base64
};

bool parseEmbeddingsRequest(const QByteArray& body, EmbeddingsRequest& out, ApiError& error);

} // namespace weir::server

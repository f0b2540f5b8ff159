#pragma once
// A remote engine's failure in plain words for the user: what went wrong,
// with the host, the model and the server's own numbers and message where it
// gave them. Built from an HTTP error answer (OpenAI's, vLLM's, llama.cpp's,
// Ollama's and Weir's error bodies), a network error, or an error event in
// the middle of a stream.
#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <optional>

namespace weir::remote {

enum class RemoteErrorKind {
    Unreachable,     // refused, no such host, network down
    Timeout,         // no answer, or the stream went silent
    Unauthorized,    // 401/403: the key was refused
    ModelNotFound,   // 404 naming the model
    ContextTooLong,  // the prompt does not fit the model's context
    Overloaded,      // 429/503 after the retries
    Http,            // any other HTTP error
    Protocol,        // an answer that is not what the API says
    StreamCut,       // the connection ended before the answer did
};

struct RemoteError {
    RemoteErrorKind kind = RemoteErrorKind::Http;
    int httpStatus = 0;           // 0 when there was no HTTP answer
    QString message;              // plain words, for the user
    QString serverMessage;        // what the server said, as it said it
    std::optional<qint64> contextLimit;     // ContextTooLong: the model's context, when the server said
    std::optional<qint64> requestedTokens;  // ContextTooLong: what the request needed, when said
};

// "host:port" of a URL, the port spelled out (80/443 by scheme when absent).
QString hostPortOf(const class QUrl& url);

// The server's own message from an error body: {"error":{"message"}},
// {"error":"..."}, {"message"}, {"detail"}, else the text itself (trimmed).
QString serverMessageOf(const QByteArray& body);

RemoteError errorFromHttp(int status, const QByteArray& body, const QString& model, const QString& hostPort);
// An {"error": ...} object sent as an event inside a stream.
RemoteError errorFromStreamEvent(const QJsonObject& event, const QString& model, const QString& hostPort);
// qtError: QNetworkReply::NetworkError as int; text: Qt's wording, kept for the details.
RemoteError errorFromNetwork(int qtError, const QString& text, const QString& hostPort);

} // namespace weir::remote

#pragma once
// What the app asks of its OpenAI-compatible endpoint, and what it reports
// back. Plain values: the endpoint itself (weir::server::ApiServer) is owned
// on the engine host thread next to the engine it serves (and does its work
// on a thread of its own), so these cross threads by value through queued calls.
#include <QString>
#include <QStringList>

namespace weir::desktop {

inline constexpr int kDefaultEndpointPort = 8719;  // same as `weir-cli serve`

struct EndpointConfig {
    bool enabled = false;
    QString host = QStringLiteral("127.0.0.1");  // another interface only when the user says so
    int port = kDefaultEndpointPort;             // 0: any free port
    QString apiKey;                              // empty: no key needed
    QStringList corsOrigins;                     // web pages that may call it (CORS; "*": any); empty: none
};

struct EndpointState {
    bool available = true;   // false: this build or this engine cannot serve
    bool listening = false;
    QString url;             // e.g. http://127.0.0.1:8719/v1 while listening
    QString error;           // why it is not listening although enabled
    bool waitingForModel = false;  // enabled, and starts once a model is loaded (not a failure)
    QString warning;         // e.g. bound to every interface
    int activeSessions = 0;  // API requests in the engine now
    quint64 sessionsServed = 0;
};

} // namespace weir::desktop

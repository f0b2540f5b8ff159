#include "app/server/http_server.h"

#include <QDir>
#include <QTcpSocket>
#include <algorithm>
#include <sys/resource.h>

namespace weir::server {

namespace {
// Files kept free for everything else the process opens (the model, logs,
// the socket of a refused connection).
constexpr int kReservedFiles = 32;
// After the kernel refused an accept (no file left), try again this soon.
constexpr int kResumeAcceptMs = 200;
} // namespace

int fileDescriptorHeadroom() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return -1;
    const QDir fds(QStringLiteral("/proc/self/fd"));
    if (!fds.exists()) return -1;
    const qsizetype open = fds.entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System).size();
    return int(std::max<qint64>(0, qint64(lim.rlim_cur) - open));
}

HttpServer::HttpServer(const HttpLimits& limits, HttpErrorFormatter formatError, QObject* parent)
    : QObject(parent), limits_(limits), formatError_(std::move(formatError)), tcp_(this), resumeAccepting_(this) {
    const int most = std::max(30, limits_.maxConnections + std::max(0, limits_.reservedConnections));
    tcp_.setMaxPendingConnections(most);
    // A burst of clients waits in the kernel's queue rather than retrying its SYNs.
    tcp_.setListenBacklogSize(std::max(50, most));
    connect(&tcp_, &QTcpServer::newConnection, this, &HttpServer::acceptPending);
    // Qt stops accepting for good when accept() fails for want of a file;
    // start again shortly, when timeouts and closes may have freed some.
    resumeAccepting_.setSingleShot(true);
    resumeAccepting_.setInterval(kResumeAcceptMs);
    connect(&resumeAccepting_, &QTimer::timeout, this, [this] {
        if (tcp_.isListening()) tcp_.resumeAccepting();
    });
    connect(&tcp_, &QTcpServer::acceptError, this, [this] { resumeAccepting_.start(); });
}

HttpServer::~HttpServer() {
    for (HttpConnection* c : std::as_const(connections_)) c->disconnect(this);
}

bool HttpServer::listen(const QHostAddress& address, quint16 port, QString* error) {
    if (!tcp_.listen(address, port)) {
        if (error) *error = tcp_.errorString();
        return false;
    }
    cap_ = std::max(1, limits_.maxConnections);
    reserveCap_ = std::max(0, limits_.reservedConnections);
    const int headroom = fileDescriptorHeadroom();
    if (headroom >= 0) {
        cap_ = std::clamp(headroom - kReservedFiles, 1, cap_);
        reserveCap_ = std::clamp(headroom - kReservedFiles - cap_, 0, reserveCap_);
    }
    return true;
}

void HttpServer::stopListening() {
    resumeAccepting_.stop();
    tcp_.close();
}

void HttpServer::acceptPending() {
    while (QTcpSocket* socket = tcp_.nextPendingConnection()) {
        auto* c = new HttpConnection(socket, limits_, formatError_, this);
        const bool regular = int(connections_.size() - reserved_.size()) < cap_;
        if (!regular && int(reserved_.size()) >= reserveCap_) {
            HttpFailure busy{503, QStringLiteral("too_many_connections"),
                             QStringLiteral("The server has %1 open connections, its limit. Try again shortly.")
                                 .arg(connections_.size())};
            c->refuse(busy, {{QByteArrayLiteral("Retry-After"), QByteArray::number(limits_.retryAfterSeconds)}});
            continue;
        }
        connections_.insert(c);
        if (!regular) {
            // Every regular slot is held (perhaps by slow clients): this one
            // is served if its request comes whole at once.
            reserved_.insert(c);
            c->holdToPromptRequest(limits_.reservedRequestMs);
        }
        connect(c, &HttpConnection::requestReceived, this, &HttpServer::requestReceived);
        connect(c, &HttpConnection::clientGone, this, &HttpServer::clientGone);
        connect(c, &HttpConnection::closed, this, [this](HttpConnection* gone) {
            connections_.remove(gone);
            reserved_.remove(gone);
        });
    }
}

} // namespace weir::server

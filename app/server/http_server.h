#pragma once
// The listening side of Weir's HTTP/1.1 server: accepts connections, wraps
// each in an HttpConnection and passes their requests on. At most
// HttpLimits::maxConnections are served at once (fewer when the process may
// not open that many files), and beyond them up to reservedConnections whose
// request must come whole at once (health checks, ordinary calls), so that
// slow clients holding every regular connection do not lock others out; one
// more is answered 503 with Retry-After and closed, so the server stays
// reachable however many clients hold sockets.
// Lives on one thread with its connections.
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QSet>
#include <QTcpServer>
#include <QTimer>

#include "app/server/http_connection.h"
#include "app/server/http_failure.h"
#include "app/server/http_limits.h"

namespace weir::server {

class HttpServer : public QObject {
    Q_OBJECT
public:
    HttpServer(const HttpLimits& limits, HttpErrorFormatter formatError, QObject* parent = nullptr);
    ~HttpServer() override;

    // False with a message (address in use, no permission).
    bool listen(const QHostAddress& address, quint16 port, QString* error);
    quint16 port() const { return tcp_.serverPort(); }
    bool isListening() const { return tcp_.isListening(); }
    // Connections accepted and not yet closed (refused ones not counted).
    int connectionCount() const { return int(connections_.size()); }
    // The cap in force: maxConnections, or less where the file limit is lower
    // (the reserve beyond it: reserveCap()).
    int connectionCap() const { return cap_; }
    int reserveCap() const { return reserveCap_; }
    QList<HttpConnection*> connections() const { return connections_.values(); }

    // No new connections; those open stay.
    void stopListening();

signals:
    void requestReceived(weir::server::HttpConnection* connection, const weir::server::HttpRequest& request);
    void clientGone(weir::server::HttpConnection* connection);

private:
    void acceptPending();

    HttpLimits limits_;
    HttpErrorFormatter formatError_;
    QTcpServer tcp_;
    QTimer resumeAccepting_;
    QSet<HttpConnection*> connections_;
    QSet<HttpConnection*> reserved_;  // of connections_: taken beyond the cap
    int cap_ = 0;
    int reserveCap_ = 0;
};

// How many more files this process may open now (RLIMIT_NOFILE less those
// open), or -1 where that cannot be told.
int fileDescriptorHeadroom();

} // namespace weir::server

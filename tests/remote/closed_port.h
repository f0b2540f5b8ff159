#pragma once
// A loopback port nothing listens on, for "unreachable" cases: one the OS
// gave and took back.
#include <QHostAddress>
#include <QTcpServer>

namespace weir::test {

inline quint16 closedPort() {
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    const quint16 port = s.serverPort();
    s.close();
    return port;
}

} // namespace weir::test

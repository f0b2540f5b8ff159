#pragma once
// How a web page origin is written in ServerOptions::corsOrigins ("*", or
// scheme://host[:port]) and how two are compared. Part of the server's public
// surface: the programs that take origins from a user check them with it.
#include <QString>
#include <optional>

namespace weir::server {

// Why `origin` cannot be listed (not "*" and not http(s)://host[:port]);
// nothing when it can.
std::optional<QString> invalidCorsOrigin(const QString& origin);
// "https://Example.com/" -> "https://example.com": how origins compare.
QString normalizedCorsOrigin(const QString& origin);

} // namespace weir::server

#pragma once
// Proxies from the environment (http_proxy, https_proxy, no_proxy) for one
// QNetworkAccessManager, so the remote engine's requests follow the user's
// proxy without changing the rest of the app's network settings.
class QNetworkAccessManager;

namespace weir::remote {

void useEnvironmentProxy(QNetworkAccessManager& nam);

} // namespace weir::remote

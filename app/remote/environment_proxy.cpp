#include "app/remote/environment_proxy.h"

#include <QNetworkAccessManager>
#include <QNetworkProxyFactory>

namespace weir::remote {

namespace {

class EnvironmentProxyFactory : public QNetworkProxyFactory {
public:
    QList<QNetworkProxy> queryProxy(const QNetworkProxyQuery& query) override { return systemProxyForQuery(query); }
};

} // namespace

void useEnvironmentProxy(QNetworkAccessManager& nam) { nam.setProxyFactory(new EnvironmentProxyFactory); }

} // namespace weir::remote

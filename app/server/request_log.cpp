#include "app/server/request_log.h"

#include "app/logging/log_categories.h"

namespace weir::server {

QString requestLogLine(const AnsweredRequest& r) {
    return QStringLiteral("%1 %2 %3 %4 tokens %5 ms")
        .arg(QString::fromLatin1(r.method), r.path, QString::number(r.status), QString::number(r.tokens),
             QString::number(r.ms, 'f', 1));
}

void logAnsweredRequest(const AnsweredRequest& r) { qCInfo(weir::logging::lcServer).noquote() << requestLogLine(r); }

} // namespace weir::server

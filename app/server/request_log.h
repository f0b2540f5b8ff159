#pragma once
// The endpoint's access log: one line per answered request in the
// weir.server category, written when the answer is complete (or when the
// client leaves before it is):
//   POST /v1/chat/completions 200 24 tokens 812.4 ms
// tokens are the completion tokens the answer carried (0 for the cheap
// routes); a client that went away before its answer shows status 499, as
// nginx logs it; a request that could not be read shows "- -".
#include <QByteArray>
#include <QString>

namespace weir::server {

struct AnsweredRequest {
    QByteArray method = QByteArrayLiteral("-");
    QString path = QStringLiteral("-");
    int status = 0;
    qint64 tokens = 0;
    double ms = 0;
};

QString requestLogLine(const AnsweredRequest& r);
void logAnsweredRequest(const AnsweredRequest& r);

} // namespace weir::server

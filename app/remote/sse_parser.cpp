#include "app/remote/sse_parser.h"

namespace weir::remote {

QList<SseEvent> SseParser::feed(QByteArrayView bytes) {
    QList<SseEvent> out;
    qsizetype i = 0;
    if (!started_) {
        pending_.append(bytes.toByteArray());
        // Wait for three bytes before deciding about a byte-order mark.
        if (pending_.size() < 3 && QByteArrayView("\xEF\xBB\xBF").startsWith(pending_)) return out;
        started_ = true;
        if (pending_.startsWith("\xEF\xBB\xBF")) pending_.remove(0, 3);
        const QByteArray first = std::move(pending_);
        pending_.clear();
        return feed(first);
    }
    while (i < bytes.size()) {
        const char c = bytes[i];
        if (lastWasCr_) {
            lastWasCr_ = false;
            if (c == '\n') {   // the LF of a CRLF split across reads
                ++i;
                continue;
            }
        }
        qsizetype end = i;
        while (end < bytes.size() && bytes[end] != '\n' && bytes[end] != '\r') ++end;
        if (end == bytes.size()) {
            pending_.append(bytes.sliced(i));
            break;
        }
        QByteArray l = std::move(pending_);
        pending_.clear();
        l.append(bytes.sliced(i, end - i));
        line(l, out);
        if (bytes[end] == '\r') {
            if (end + 1 < bytes.size()) {
                i = (bytes[end + 1] == '\n') ? end + 2 : end + 1;
            } else {
                lastWasCr_ = true;
                i = end + 1;
            }
        } else {
            i = end + 1;
        }
    }
    return out;
}

void SseParser::line(QByteArrayView l, QList<SseEvent>& out) {
    if (l.isEmpty()) {   // dispatch
        if (dataSeen_) {
            SseEvent e;
            e.type = type_.isEmpty() ? QStringLiteral("message") : QString::fromUtf8(type_);
            e.data = data_;
            if (e.data.endsWith('\n')) e.data.chop(1);
            e.id = lastId_;
            out.append(std::move(e));
        }
        data_.clear();
        type_.clear();
        dataSeen_ = false;
        return;
    }
    if (l.startsWith(':')) return;   // a comment (servers send them as keep-alives)
    const qsizetype colon = l.indexOf(':');
    QByteArrayView field = colon < 0 ? l : l.first(colon);
    QByteArrayView value = colon < 0 ? QByteArrayView() : l.sliced(colon + 1);
    if (value.startsWith(' ')) value = value.sliced(1);
    if (field == "data") {
        data_.append(value.toByteArray());
        data_.append('\n');
        dataSeen_ = true;
    } else if (field == "event") {
        type_ = value.toByteArray();
    } else if (field == "id") {
        if (!value.contains('\0')) lastId_ = QString::fromUtf8(value);
    } else if (field == "retry") {
        bool ok = false;
        const int ms = value.toByteArray().toInt(&ok);
        bool digits = !value.isEmpty();
        for (char c : value) digits = digits && c >= '0' && c <= '9';
        if (ok && digits) retryMs_ = ms;
    }
    // Any other field is ignored, as the rules say.
}

} // namespace weir::remote

#include "app/server/http_request_reader.h"

#include <QUrl>
#include <algorithm>

namespace weir::server {

namespace {

// RFC 9110 "tchar": what a method or header name may be made of.
bool isTokenChar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~': return true;
    default: return false;
    }
}

bool isToken(QByteArrayView s) {
    return !s.isEmpty() && std::all_of(s.begin(), s.end(), isTokenChar);
}

// Header values: visible characters, spaces, tabs and obs-text; no controls.
bool isFieldValue(QByteArrayView s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = uchar(c);
        return u == '\t' || (u >= 0x20 && u != 0x7f);
    });
}

QByteArray trimmedOws(QByteArrayView v) {
    qsizetype b = 0, e = v.size();
    while (b < e && (v[b] == ' ' || v[b] == '\t')) ++b;
    while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t')) --e;
    return v.sliced(b, e - b).toByteArray();
}

// Where the blank line that ends a head ends, searching from `from`; -1 if
// not there yet. Bare LF line ends are accepted as RFC 9112 allows.
qsizetype endOfHead(const QByteArray& head, qsizetype from) {
    for (qsizetype i = from; i < head.size(); ++i) {
        if (head[i] != '\n') continue;
        if (i + 1 < head.size() && head[i + 1] == '\n') return i + 2;
        if (i + 2 < head.size() && head[i + 1] == '\r' && head[i + 2] == '\n') return i + 3;
    }
    return -1;
}

} // namespace

bool HttpRequestReader::fail(int status, QString code, QString message) {
    state_ = State::Failed;
    failure_ = HttpFailure{status, std::move(code), std::move(message)};
    return false;
}

qsizetype HttpRequestReader::feed(QByteArrayView data) {
    qsizetype used = 0;
    if (state_ == State::ReadingHead) {
        // Blank lines before a request line are to be ignored (RFC 9112 2.2).
        while (head_.isEmpty() && used < data.size() && (data[used] == '\r' || data[used] == '\n')) ++used;
        if (used == data.size()) return used;
        const qsizetype before = head_.size();
        // Never hold more than the limit (plus the blank line that may end it).
        const qsizetype room = std::max<qsizetype>(0, limits_.maxHeadBytes + 4 - before);
        const qsizetype take = std::min(room, data.size() - used);
        head_.append(data.sliced(used, take));
        const qsizetype end = endOfHead(head_, std::max<qsizetype>(0, before - 3));
        if (end < 0) {
            used += take;
            const qsizetype firstLine = head_.indexOf('\n');
            if ((firstLine < 0 ? head_.size() : firstLine) > limits_.maxRequestLineBytes) {
                fail(414, QStringLiteral("uri_too_long"),
                     QStringLiteral("The request line is longer than %1 bytes.").arg(limits_.maxRequestLineBytes));
            } else if (head_.size() > limits_.maxHeadBytes) {
                fail(431, QStringLiteral("headers_too_large"),
                     QStringLiteral("The request headers are larger than %1 bytes.").arg(limits_.maxHeadBytes));
            }
            return used;
        }
        used += end - before;
        head_.truncate(end);
        if (!parseHead()) return used;
        state_ = bodyLength_ > 0 ? State::ReadingBody : State::Complete;
        if (state_ == State::ReadingBody) request_.body.reserve(bodyLength_);
    }
    if (state_ == State::ReadingBody) {
        const qsizetype want = qsizetype(bodyLength_) - request_.body.size();
        const qsizetype take = std::min(want, data.size() - used);
        request_.body.append(data.sliced(used, take));
        used += take;
        if (request_.body.size() == bodyLength_) state_ = State::Complete;
    }
    return used;
}

bool HttpRequestReader::parseHead() {
    QList<QByteArray> lines = head_.split('\n');
    for (QByteArray& l : lines)
        if (l.endsWith('\r')) l.chop(1);
    while (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    if (lines.isEmpty()) return fail(400, QStringLiteral("bad_request"), QStringLiteral("The request is empty."));

    // METHOD SP request-target SP HTTP-version
    const QByteArray& line = lines.first();
    if (line.size() > limits_.maxRequestLineBytes)
        return fail(414, QStringLiteral("uri_too_long"),
                    QStringLiteral("The request line is longer than %1 bytes.").arg(limits_.maxRequestLineBytes));
    const QList<QByteArray> parts = line.split(' ');
    if (parts.size() != 3 || !isToken(parts[0]) || parts[1].isEmpty())
        return fail(400, QStringLiteral("bad_request"),
                    QStringLiteral("The request line is not 'METHOD /path HTTP/1.1'."));
    const QByteArray& version = parts[2];
    if (version == "HTTP/1.1") request_.minorVersion = 1;
    else if (version == "HTTP/1.0") request_.minorVersion = 0;
    else if (version.size() == 8 && version.startsWith("HTTP/") && version[6] == '.')
        return fail(505, QStringLiteral("http_version_not_supported"),
                    QStringLiteral("%1 is not supported; use HTTP/1.1.").arg(QString::fromLatin1(version)));
    else
        return fail(400, QStringLiteral("bad_request"), QStringLiteral("The request line has no valid HTTP version."));
    request_.method = parts[0];
    request_.target = parts[1];
    for (char c : request_.target)
        if (uchar(c) <= 0x20 || uchar(c) == 0x7f)
            return fail(400, QStringLiteral("bad_request"), QStringLiteral("The request target has control characters."));
    if (request_.target.startsWith('/')) {
        const qsizetype q = request_.target.indexOf('?');
        request_.path = QString::fromLatin1(q < 0 ? request_.target : request_.target.left(q));
    } else if (request_.target.startsWith("http://") || request_.target.startsWith("https://")) {
        const QUrl url(QString::fromLatin1(request_.target), QUrl::StrictMode);
        if (!url.isValid())
            return fail(400, QStringLiteral("bad_request"), QStringLiteral("The request target is not a valid URL."));
        request_.path = url.path(QUrl::FullyEncoded);
        if (request_.path.isEmpty()) request_.path = QStringLiteral("/");
    } else if (request_.target == "*" && request_.method == "OPTIONS") {
        request_.path = QStringLiteral("*");
    } else {
        return fail(400, QStringLiteral("bad_request"), QStringLiteral("The request target must start with '/'."));
    }

    int hosts = 0;
    bool haveLength = false, haveCoding = false;
    QByteArray coding;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray& h = lines[i];
        if (h.startsWith(' ') || h.startsWith('\t'))
            return fail(400, QStringLiteral("bad_request"), QStringLiteral("Folded header lines are not accepted."));
        const qsizetype colon = h.indexOf(':');
        if (colon <= 0 || !isToken(QByteArrayView(h).first(colon)))
            return fail(400, QStringLiteral("bad_request"),
                        QStringLiteral("Header line %1 is not 'Name: value'.").arg(i));
        if (int(request_.headers.size()) >= limits_.maxHeaderCount)
            return fail(431, QStringLiteral("headers_too_large"),
                        QStringLiteral("The request has more than %1 headers.").arg(limits_.maxHeaderCount));
        const QByteArray name = h.left(colon);
        const QByteArray value = trimmedOws(QByteArrayView(h).sliced(colon + 1));
        if (!isFieldValue(value))
            return fail(400, QStringLiteral("bad_request"),
                        QStringLiteral("The %1 header has control characters.").arg(QString::fromLatin1(name)));
        const QByteArray lower = name.toLower();
        if (lower == "host") {
            ++hosts;
        } else if (lower == "content-length") {
            bool ok = !value.isEmpty() && value.size() <= 15 &&
                      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
            const qint64 n = ok ? value.toLongLong(&ok) : -1;
            if (!ok)
                return fail(400, QStringLiteral("bad_request"), QStringLiteral("Content-Length is not a number."));
            if (haveLength && n != bodyLength_)
                return fail(400, QStringLiteral("bad_request"),
                            QStringLiteral("Content-Length is given twice with different values."));
            haveLength = true;
            bodyLength_ = n;
        } else if (lower == "transfer-encoding") {
            haveCoding = true;
            coding = value.toLower();
        } else if (lower == "expect") {
            if (value.toLower() != "100-continue")
                return fail(417, QStringLiteral("expectation_failed"),
                            QStringLiteral("Only 'Expect: 100-continue' is understood."));
            expectContinue_ = request_.minorVersion >= 1;
        }
        request_.headers.emplace_back(name, value);
    }
    if (request_.minorVersion >= 1 && hosts != 1)
        return fail(400, QStringLiteral("bad_request"),
                    hosts == 0 ? QStringLiteral("An HTTP/1.1 request needs a Host header.")
                               : QStringLiteral("The request has more than one Host header."));
    if (haveCoding) {
        if (haveLength)
            return fail(400, QStringLiteral("bad_request"),
                        QStringLiteral("A request may not have both Transfer-Encoding and Content-Length."));
        if (coding.endsWith("chunked"))
            return fail(411, QStringLiteral("length_required"),
                        QStringLiteral("Chunked request bodies are not accepted; send the body with Content-Length."));
        return fail(501, QStringLiteral("not_implemented"),
                    QStringLiteral("Transfer-Encoding '%1' is not supported.").arg(QString::fromLatin1(coding.left(100))));
    }
    if (bodyLength_ > limits_.maxBodyBytes)
        return fail(413, QStringLiteral("request_too_large"),
                    QStringLiteral("The request body is %1 bytes; the limit is %2 bytes.")
                        .arg(bodyLength_)
                        .arg(limits_.maxBodyBytes));
    return true;
}

HttpRequest HttpRequestReader::take() {
    HttpRequest out = std::move(request_);
    request_ = HttpRequest{};
    head_.clear();
    bodyLength_ = 0;
    expectContinue_ = false;
    state_ = State::ReadingHead;
    return out;
}

} // namespace weir::server

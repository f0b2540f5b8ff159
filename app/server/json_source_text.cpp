#include "app/server/json_source_text.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace weir::server {

namespace {

// A scanner over valid JSON: it checks only what it needs to stay in bounds.
class Scanner {
public:
    explicit Scanner(QByteArrayView text) : t_(text) {}

    qsizetype skipSpace(qsizetype i) const {
        while (i < t_.size() && (t_[i] == ' ' || t_[i] == '\t' || t_[i] == '\n' || t_[i] == '\r')) ++i;
        return i;
    }

    // The index after the string that opens at i (t_[i] == '"'), or -1.
    qsizetype skipString(qsizetype i) const {
        for (++i; i < t_.size(); ++i) {
            if (t_[i] == '\\') ++i;
            else if (t_[i] == '"') return i + 1;
        }
        return -1;
    }

    // The index after the value that starts at i, or -1. Nesting is
    // counted, not recursed into, so depth costs nothing.
    qsizetype skipValue(qsizetype i) const {
        if (i >= t_.size()) return -1;
        if (t_[i] == '"') return skipString(i);
        if (t_[i] != '{' && t_[i] != '[') {
            while (i < t_.size() && !QByteArrayView(",}] \t\r\n").contains(t_[i])) ++i;
            return i;
        }
        qsizetype depth = 0;
        for (; i < t_.size(); ++i) {
            const char c = t_[i];
            if (c == '"') {
                i = skipString(i);
                if (i < 0) return -1;
                --i;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return -1;
    }

    // The span [begin, end) of member `key`'s value in the object at i; the last one where it repeats.
    bool member(qsizetype i, const QString& key, qsizetype& begin, qsizetype& end) const {
        if (i >= t_.size() || t_[i] != '{') return false;
        bool found = false;
        i = skipSpace(i + 1);
        while (i < t_.size() && t_[i] == '"') {
            const qsizetype keyEnd = skipString(i);
            if (keyEnd < 0) return false;
            const bool match = sameKey(t_.sliced(i, keyEnd - i), key);
            i = skipSpace(keyEnd);
            if (i >= t_.size() || t_[i] != ':') return false;
            const qsizetype valueBegin = skipSpace(i + 1);
            const qsizetype valueEnd = skipValue(valueBegin);
            if (valueEnd < 0) return false;
            if (match) {
                found = true;
                begin = valueBegin;
                end = valueEnd;
            }
            i = skipSpace(valueEnd);
            if (i < t_.size() && t_[i] == ',') i = skipSpace(i + 1);
        }
        return found;
    }

private:
    // `quoted` is a JSON string with its quotes; escapes are decoded only where there are some.
    static bool sameKey(QByteArrayView quoted, const QString& key) {
        const QByteArrayView inner = quoted.sliced(1, quoted.size() - 2);
        if (!inner.contains('\\')) return QString::fromUtf8(inner) == key;
        const QJsonDocument d = QJsonDocument::fromJson(QByteArray("[") + quoted.toByteArray() + "]");
        return d.isArray() && d.array().at(0).toString() == key;
    }

    QByteArrayView t_;
};

} // namespace

std::optional<QByteArray> jsonSourceText(QByteArrayView document, const QStringList& path) {
    const Scanner s(document);
    qsizetype begin = s.skipSpace(0), end = s.skipValue(begin);
    if (end < 0) return std::nullopt;
    for (const QString& key : path)
        if (!s.member(begin, key, begin, end)) return std::nullopt;
    return document.sliced(begin, end - begin).toByteArray();
}

} // namespace weir::server

#include "app/common/json_source_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <algorithm>

namespace weir::common {

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

    struct Span {
        qsizetype begin, end;
    };

    // The spans of the items of the array at i, in order; empty when i is not an array.
    QList<Span> items(qsizetype i) const {
        QList<Span> out;
        if (i >= t_.size() || t_[i] != '[') return out;
        i = skipSpace(i + 1);
        while (i < t_.size() && t_[i] != ']') {
            const qsizetype end = skipValue(i);
            if (end < 0) return {};
            out.append({i, end});
            i = skipSpace(end);
            if (i < t_.size() && t_[i] == ',') i = skipSpace(i + 1);
        }
        return out;
    }

    // The keys of the object at i in the order written (a repeated key where
    // it first appears), with the span of each one's value (its last).
    QList<std::pair<QString, Span>> members(qsizetype i) const {
        QList<std::pair<QString, Span>> out;
        if (i >= t_.size() || t_[i] != '{') return out;
        i = skipSpace(i + 1);
        while (i < t_.size() && t_[i] == '"') {
            const qsizetype keyEnd = skipString(i);
            if (keyEnd < 0) return {};
            const QString key = decodedKey(t_.sliced(i, keyEnd - i));
            i = skipSpace(keyEnd);
            if (i >= t_.size() || t_[i] != ':') return {};
            const qsizetype valueBegin = skipSpace(i + 1);
            const qsizetype valueEnd = skipValue(valueBegin);
            if (valueEnd < 0) return {};
            auto seen = std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.first == key; });
            if (seen != out.end()) seen->second = {valueBegin, valueEnd};
            else out.append({key, {valueBegin, valueEnd}});
            i = skipSpace(valueEnd);
            if (i < t_.size() && t_[i] == ',') i = skipSpace(i + 1);
        }
        return out;
    }

    QByteArrayView text(Span s) const { return t_.sliced(s.begin, s.end - s.begin); }

private:
    // `quoted` is a JSON string with its quotes; escapes are decoded only where there are some.
    static QString decodedKey(QByteArrayView quoted) {
        const QByteArrayView inner = quoted.sliced(1, quoted.size() - 2);
        if (!inner.contains('\\')) return QString::fromUtf8(inner);
        const QJsonDocument d = QJsonDocument::fromJson(QByteArray("[") + quoted.toByteArray() + "]");
        return d.isArray() ? d.array().at(0).toString() : QString();
    }

    static bool sameKey(QByteArrayView quoted, const QString& key) { return decodedKey(quoted) == key; }

    QByteArrayView t_;
};

// A scalar (string, number, true, false, null) as JSON text.
QByteArray scalarJson(const QJsonValue& v) {
    const QByteArray a = QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact);
    return a.mid(1, a.size() - 2);
}

void writeOrdered(QByteArray& out, const QJsonValue& value, QByteArrayView source) {
    const Scanner s(source);
    const qsizetype start = s.skipSpace(0);
    if (value.isArray()) {
        const QJsonArray a = value.toArray();
        const QList<Scanner::Span> items = s.items(start);
        out += '[';
        for (qsizetype i = 0; i < a.size(); ++i) {
            if (i > 0) out += ',';
            writeOrdered(out, a[i], i < items.size() ? s.text(items[i]) : QByteArrayView());
        }
        out += ']';
        return;
    }
    if (!value.isObject()) {
        out += scalarJson(value);
        return;
    }
    const QJsonObject o = value.toObject();
    bool first = true;
    auto write = [&](const QString& key, const QJsonValue& v, QByteArrayView from) {
        if (!first) out += ',';
        first = false;
        out += scalarJson(key);
        out += ':';
        writeOrdered(out, v, from);
    };
    out += '{';
    QSet<QString> written;
    for (const auto& [key, span] : s.members(start)) {
        const auto it = o.constFind(key);
        if (it == o.constEnd()) continue;
        write(key, *it, s.text(span));
        written.insert(key);
    }
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        if (!written.contains(it.key())) write(it.key(), *it, {});
    out += '}';
}

} // namespace

std::optional<QByteArray> jsonItemText(QByteArrayView document, qsizetype index) {
    const Scanner s(document);
    const QList<Scanner::Span> items = s.items(s.skipSpace(0));
    if (index < 0 || index >= items.size()) return std::nullopt;
    return s.text(items[index]).toByteArray();
}

QByteArray orderedJson(const QJsonValue& value, QByteArrayView source) {
    QByteArray out;
    writeOrdered(out, value, source);
    return out;
}

std::optional<QByteArray> jsonSourceText(QByteArrayView document, const QStringList& path) {
    const Scanner s(document);
    qsizetype begin = s.skipSpace(0), end = s.skipValue(begin);
    if (end < 0) return std::nullopt;
    for (const QString& key : path)
        if (!s.member(begin, key, begin, end)) return std::nullopt;
    return document.sliced(begin, end - begin).toByteArray();
}

} // namespace weir::common

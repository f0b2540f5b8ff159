#include "app/remote/prometheus_text.h"

#include <QHash>
#include <charconv>
#include <cmath>
#include <limits>

namespace weir::remote {

QString PromSample::label(const QString& name) const {
    for (const auto& [k, v] : labels)
        if (k == name) return v.isNull() ? QStringLiteral("") : v;
    return {};
}

const PromFamily* PromText::family(const QString& name) const {
    for (const PromFamily& f : families)
        if (f.name == name) return &f;
    return nullptr;
}

QList<const PromSample*> PromText::samples(const QString& sampleName) const {
    QList<const PromSample*> out;
    for (const PromFamily& f : families)
        for (const PromSample& s : f.samples)
            if (s.name == sampleName) out.append(&s);
    return out;
}

namespace {

bool isNameStart(char c, bool colonAllowed) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colonAllowed && c == ':');
}
bool isNameChar(char c, bool colonAllowed) { return isNameStart(c, colonAllowed) || (c >= '0' && c <= '9'); }
bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Thrown inside the parser only; carries the message for the current line.
struct LineError {
    QString what;
};

class LineReader {
public:
    explicit LineReader(QByteArrayView line) : s_(line) {}
    bool atEnd() const { return i_ >= s_.size(); }
    char peek() const { return atEnd() ? '\0' : s_[i_]; }
    void skipBlanks() {
        while (!atEnd() && isBlank(s_[i_])) ++i_;
    }
    bool eat(char c) {
        if (peek() != c || atEnd()) return false;
        ++i_;
        return true;
    }
    // A metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or label name (no colons).
    QString name(bool colonAllowed, const char* what) {
        if (atEnd() || !isNameStart(s_[i_], colonAllowed))
            throw LineError{atEnd() ? QStringLiteral("%1 is missing").arg(QLatin1String(what))
                                    : QStringLiteral("%1 cannot start with '%2'").arg(QLatin1String(what), QChar(s_[i_]))};
        const qsizetype start = i_;
        while (!atEnd() && isNameChar(s_[i_], colonAllowed)) ++i_;
        return QString::fromLatin1(s_.sliced(start, i_ - start));
    }
    // Up to the next blank or the end.
    QByteArrayView token() {
        const qsizetype start = i_;
        while (!atEnd() && !isBlank(s_[i_])) ++i_;
        return s_.sliced(start, i_ - start);
    }
    QByteArrayView rest() {
        QByteArrayView r = s_.sliced(i_);
        i_ = s_.size();
        return r;
    }
    // A quoted label value; the opening quote is already eaten.
    QString quotedValue() {
        QByteArray out;
        while (true) {
            if (atEnd()) throw LineError{QStringLiteral("label value is missing its closing quote")};
            const char c = s_[i_++];
            if (c == '"') break;
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (atEnd()) throw LineError{QStringLiteral("label value ends in a lone backslash")};
            const char e = s_[i_++];
            if (e == '\\') out.append('\\');
            else if (e == '"') out.append('"');
            else if (e == 'n') out.append('\n');
            else throw LineError{QStringLiteral("unknown escape '\\%1' in a label value (only \\\\, \\\" and \\n)").arg(QChar(e))};
        }
        return QString::fromUtf8(out);
    }

private:
    QByteArrayView s_;
    qsizetype i_ = 0;
};

// HELP text: \\ and \n are escapes; any other backslash stays as written.
QString unescapeHelp(QByteArrayView v) {
    QByteArray out;
    for (qsizetype i = 0; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size() && (v[i + 1] == '\\' || v[i + 1] == 'n')) {
            out.append(v[i + 1] == 'n' ? '\n' : '\\');
            ++i;
        } else {
            out.append(v[i]);
        }
    }
    return QString::fromUtf8(out);
}

// A Go float as Prometheus writes it: decimal or exponent, NaN, +Inf, -Inf.
std::optional<double> parseValue(QByteArrayView t) {
    if (t.isEmpty()) return std::nullopt;
    const QByteArray lower = t.toByteArray().toLower();
    if (lower == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (lower == "+inf" || lower == "inf") return std::numeric_limits<double>::infinity();
    if (lower == "-inf") return -std::numeric_limits<double>::infinity();
    const char* b = t.data();
    const char* e = b + t.size();
    if (*b == '+') ++b;
    if (b == e || !(std::isdigit(static_cast<unsigned char>(*b)) || *b == '.' || *b == '-')) return std::nullopt;
    double v = 0;
    const auto r = std::from_chars(b, e, v, std::chars_format::general);
    if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
    return v;
}

std::optional<qint64> parseTimestamp(QByteArrayView t) {
    qint64 v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.isEmpty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
    return v;
}

std::optional<PromType> typeNamed(QByteArrayView w) {
    if (w == "counter") return PromType::Counter;
    if (w == "gauge") return PromType::Gauge;
    if (w == "histogram") return PromType::Histogram;
    if (w == "summary") return PromType::Summary;
    if (w == "untyped") return PromType::Untyped;
    return std::nullopt;
}

class Parser {
public:
    void line(QByteArrayView raw) {
        if (raw.endsWith('\r')) raw.chop(1);
        LineReader r(raw);
        r.skipBlanks();
        if (r.atEnd()) return;
        if (r.eat('#')) return comment(r);
        sample(r);
    }
    PromText take() { return std::move(text_); }

private:
    PromText text_;
    QHash<QString, qsizetype> byName_;   // family name -> index
    QHash<QString, bool> typed_, helped_;

    PromFamily& familyNamed(const QString& name) {
        auto it = byName_.find(name);
        if (it != byName_.end()) return text_.families[*it];
        PromFamily f;
        f.name = name;
        byName_.insert(name, text_.families.size());
        text_.families.append(f);
        return text_.families.last();
    }

    void comment(LineReader& r) {
        r.skipBlanks();
        const QByteArrayView keyword = r.token();
        const bool help = keyword == "HELP", type = keyword == "TYPE";
        if (!help && !type) return;   // an ordinary comment
        r.skipBlanks();
        const QString name = r.name(true, help ? "the metric name after # HELP" : "the metric name after # TYPE");
        if (!r.atEnd() && !isBlank(r.peek()))
            throw LineError{QStringLiteral("'%1' after the metric name %2 is not allowed in a name").arg(QChar(r.peek())).arg(name)};
        auto existing = byName_.find(name);
        if (existing != byName_.end() && !text_.families[*existing].samples.isEmpty())
            throw LineError{QStringLiteral("# %1 for %2 comes after its samples").arg(QLatin1String(keyword.data(), 4), name)};
        if (help) {
            if (helped_.value(name)) throw LineError{QStringLiteral("second # HELP for %1").arg(name)};
            helped_.insert(name, true);
            if (r.peek() == ' ' || r.peek() == '\t') r.eat(r.peek());   // one separator; the rest is the text
            familyNamed(name).help = unescapeHelp(r.rest());
            return;
        }
        if (typed_.value(name)) throw LineError{QStringLiteral("second # TYPE for %1").arg(name)};
        r.skipBlanks();
        const QByteArrayView word = r.token();
        const std::optional<PromType> t = typeNamed(word);
        if (!t)
            throw LineError{word.isEmpty() ? QStringLiteral("# TYPE for %1 names no type").arg(name)
                                           : QStringLiteral("unknown metric type '%1' for %2 (counter, gauge, histogram, "
                                                            "summary or untyped)")
                                                 .arg(QString::fromUtf8(word), name)};
        r.skipBlanks();
        if (!r.atEnd()) throw LineError{QStringLiteral("unexpected text after the type of %1").arg(name)};
        typed_.insert(name, true);
        familyNamed(name).type = *t;
    }

    // The family a sample belongs to: its own name, or the typed family whose
    // suffixed samples it is (x_bucket of histogram x, x_total of counter x).
    PromFamily& familyOf(const QString& sample) {
        if (byName_.contains(sample)) return text_.families[byName_.value(sample)];
        static const QLatin1String suffixes[] = {QLatin1String("_bucket"), QLatin1String("_sum"), QLatin1String("_count"),
                                                 QLatin1String("_total"), QLatin1String("_created")};
        for (const QLatin1String& suffix : suffixes) {
            if (!sample.endsWith(suffix)) continue;
            const QString base = sample.chopped(suffix.size());
            auto it = byName_.find(base);
            if (it == byName_.end()) continue;
            PromFamily& f = text_.families[*it];
            const bool fits = (f.type == PromType::Histogram && suffix != QLatin1String("_total")) ||
                              (f.type == PromType::Summary && (suffix == QLatin1String("_sum") ||
                                                               suffix == QLatin1String("_count") ||
                                                               suffix == QLatin1String("_created"))) ||
                              (f.type == PromType::Counter &&
                               (suffix == QLatin1String("_total") || suffix == QLatin1String("_created")));
            if (fits) return f;
        }
        return familyNamed(sample);
    }

    void sample(LineReader& r) {
        PromSample s;
        s.name = r.name(true, "the metric name");
        if (!r.atEnd() && !isBlank(r.peek()) && r.peek() != '{')
            throw LineError{QStringLiteral("'%1' in the metric name %2 is not allowed").arg(QChar(r.peek())).arg(s.name)};
        r.skipBlanks();
        if (r.eat('{')) labels(r, s);
        r.skipBlanks();
        const QByteArrayView valueText = r.token();
        if (valueText.isEmpty()) throw LineError{QStringLiteral("%1 has no value").arg(s.name)};
        const std::optional<double> v = parseValue(valueText);
        if (!v) throw LineError{QStringLiteral("'%1' is not a number (the value of %2)").arg(QString::fromUtf8(valueText), s.name)};
        s.value = *v;
        r.skipBlanks();
        if (!r.atEnd()) {
            const QByteArrayView ts = r.token();
            s.timestampMs = parseTimestamp(ts);
            if (!s.timestampMs)
                throw LineError{QStringLiteral("'%1' is not a timestamp in milliseconds (after the value of %2)")
                                    .arg(QString::fromUtf8(ts), s.name)};
            r.skipBlanks();
            if (!r.atEnd()) throw LineError{QStringLiteral("unexpected text after the timestamp of %1").arg(s.name)};
        }
        PromFamily& f = familyOf(s.name);
        if (f.type == PromType::Histogram && s.name.endsWith(QLatin1String("_bucket"))) {
            const QString le = s.label(QStringLiteral("le"));
            if (le.isNull()) throw LineError{QStringLiteral("histogram bucket %1 has no 'le' label").arg(s.name)};
            if (!parseValue(le.toUtf8())) throw LineError{QStringLiteral("histogram bucket %1 has le=\"%2\", not a number").arg(s.name, le)};
        }
        if (f.type == PromType::Summary && s.name == f.name) {
            const QString q = s.label(QStringLiteral("quantile"));
            if (q.isNull()) throw LineError{QStringLiteral("summary %1 has a sample without a 'quantile' label").arg(s.name)};
            if (!parseValue(q.toUtf8())) throw LineError{QStringLiteral("summary %1 has quantile=\"%2\", not a number").arg(s.name, q)};
        }
        f.samples.append(std::move(s));
    }

    void labels(LineReader& r, PromSample& s) {
        while (true) {
            r.skipBlanks();
            if (r.eat('}')) return;
            const QString name = r.name(false, "a label name");
            for (const auto& l : s.labels)
                if (l.first == name) throw LineError{QStringLiteral("label %1 appears twice on %2").arg(name, s.name)};
            if (!r.atEnd() && !isBlank(r.peek()) && r.peek() != '=' && r.peek() != '}' && r.peek() != ',')
                throw LineError{QStringLiteral("'%1' is not allowed in label name %2").arg(QChar(r.peek())).arg(name)};
            r.skipBlanks();
            if (!r.eat('=')) throw LineError{QStringLiteral("label %1 of %2 has no '='").arg(name, s.name)};
            r.skipBlanks();
            if (!r.eat('"')) throw LineError{QStringLiteral("the value of label %1 is not in double quotes").arg(name)};
            s.labels.append({name, r.quotedValue()});
            r.skipBlanks();
            if (r.eat(',')) continue;
            if (r.eat('}')) return;
            throw LineError{r.atEnd() ? QStringLiteral("the label set of %1 is missing its closing '}'").arg(s.name)
                                      : QStringLiteral("expected ',' or '}' after label %1, found '%2'").arg(name, QChar(r.peek()))};
        }
    }
};

} // namespace

PromParseResult parsePrometheusText(QByteArrayView body) {
    PromParseResult out;
    Parser p;
    int lineNo = 0;
    qsizetype start = 0;
    while (start < body.size()) {
        qsizetype end = body.indexOf('\n', start);
        if (end < 0) end = body.size();
        ++lineNo;
        try {
            p.line(body.sliced(start, end - start));
        } catch (const LineError& e) {
            out.errorLine = lineNo;
            out.error = QStringLiteral("line %1: %2").arg(lineNo).arg(e.what);
            return out;
        }
        start = end + 1;
    }
    out.text = p.take();
    out.ok = true;
    return out;
}

} // namespace weir::remote

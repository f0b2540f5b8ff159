#pragma once
// A parser for the Prometheus text exposition format (version 0.0.4), the
// /metrics page of vLLM, SGLang and llama.cpp's server. It keeps the rules a
// Prometheus server keeps: `# HELP` and `# TYPE` comments (other comments are
// ignored), metric and label names by their grammar, label values with the
// escapes \\ \" \n, values as Go floats (NaN, +Inf, -Inf, exponents), an
// optional millisecond timestamp, and histogram/summary samples (_bucket,
// _sum, _count) grouped under their family. Malformed input is refused with
// the line number and what is wrong, never half-read.
#include <QByteArrayView>
#include <QList>
#include <QPair>
#include <QString>
#include <optional>

namespace weir::remote {

enum class PromType { Untyped, Counter, Gauge, Histogram, Summary };

struct PromSample {
    QString name;                            // as written: "x_bucket", "x_sum", "x"
    QList<QPair<QString, QString>> labels;   // in the order written, escapes resolved
    double value = 0;
    std::optional<qint64> timestampMs;

    // The label's value, or a null QString when the sample has no such label.
    QString label(const QString& name) const;
};

struct PromFamily {
    QString name;           // the name of # TYPE (or of the first sample when untyped)
    PromType type = PromType::Untyped;
    QString help;           // escapes resolved
    QList<PromSample> samples;
};

struct PromText {
    QList<PromFamily> families;

    // The family named `name`, or nullptr.
    const PromFamily* family(const QString& name) const;
    // Every sample named exactly `sampleName`, whatever its family.
    QList<const PromSample*> samples(const QString& sampleName) const;
    // True when some sample is named `sampleName`.
    bool has(const QString& sampleName) const { return !samples(sampleName).isEmpty(); }
};

struct PromParseResult {
    PromText text;          // empty when !ok
    bool ok = false;
    int errorLine = 0;      // 1-based; 0 when ok
    QString error;          // "line 12: label value is missing its closing quote"
};

PromParseResult parsePrometheusText(QByteArrayView body);

} // namespace weir::remote

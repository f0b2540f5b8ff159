#include "monitor/SizingAdvisor.h"

#include <QLocale>

#include "engine/models/kv_access.h"

namespace weir::desktop {
namespace {

qint64 ceilTo(qint64 value, qint64 multiple) {
    return multiple > 0 ? (value + multiple - 1) / multiple * multiple : value;
}

KvDtype dtypeFromName(const QString& name) {
    for (KvDtype t : {KvDtype::F16, KvDtype::Q8_0, KvDtype::F32, KvDtype::FP8_E4M3})
        if (name == QLatin1String(kvDtypeName(t))) return t;
    return KvDtype::F16;
}

QVariantMap term(const QString& label, const QString& formula, qint64 tokens) {
    return {{"label", label}, {"formula", formula}, {"tokens", tokens}};
}

} // namespace

SizingAdvisor::SizingAdvisor(QObject* parent) : QObject(parent) {
    connect(this, &SizingAdvisor::inputsChanged, this, &SizingAdvisor::recompute);
    recompute();
}

void SizingAdvisor::setModelInfo(const QVariantMap& info) {
    slidingWindow_ = info.value("slidingWindow").toInt();
    fullLayers_ = info.value("fullLayers").toInt();
    slidingLayers_ = info.value("slidingLayers").toInt();
    kvHeads_ = info.value("kvHeads").toInt();
    headDim_ = info.value("headDimK").toInt();
    contextLength_ = info.value("contextLength").toInt();
    emit inputsChanged();
}

double SizingAdvisor::bytesPerTokenPerLayer() const {
    const int64_t elems = int64_t(kvHeads_) * headDim_;
    return elems > 0 ? 2.0 * double(kvRowBytes(dtypeFromName(kvDtype_), elems)) : 0.0;  // K and V
}

double SizingAdvisor::fullBytesPerToken() const { return bytesPerTokenPerLayer() * fullLayers_; }
double SizingAdvisor::windowBytesPerToken() const { return bytesPerTokenPerLayer() * slidingLayers_; }

void SizingAdvisor::recompute() {
    // The concurrency-aware floor of the window pool (see kv-pools notes):
    //   per_request = ceil_P(W) + P + E*D + P
    //   floor       = ceil_P(R * per_request + K * C + P)
    const qint64 W = slidingWindow_, P = std::max(1, pageSize_), R = std::max(1, maxRunning_);
    const qint64 C = std::max(1, prefillChunk_), K = std::max(1, chunksInFlight_), E = std::max(1, retainGap_);
    const qint64 D = 1;
    const QLocale l;
    windowTerms_.clear();
    if (applicable()) {
        perRequest_ = ceilTo(W, P) + P + E * D + P;
        windowFloor_ = ceilTo(R * perRequest_ + K * C + P, P);
        windowTerms_ = {
            term(QStringLiteral("Window, rounded up to pages"), QStringLiteral("ceil_P(W) = ceil_%1(%2)").arg(P).arg(W),
                 ceilTo(W, P)),
            term(QStringLiteral("Release boundary rounds down a page"), QStringLiteral("P"), P),
            term(QStringLiteral("Written since the last release"), QStringLiteral("E\u00b7D = %1\u00b7%2").arg(E).arg(D), E * D),
            term(QStringLiteral("Next decode page"), QStringLiteral("P"), P),
            term(QStringLiteral("Per request \u00d7 max running"),
                 QStringLiteral("%1 \u00d7 %2").arg(l.toString(perRequest_)).arg(R), R * perRequest_),
            term(QStringLiteral("Prefill chunks in flight"), QStringLiteral("K\u00b7C = %1\u00b7%2").arg(K).arg(C), K * C),
            term(QStringLiteral("One spare page"), QStringLiteral("P"), P),
        };
        const qint64 S = effectiveWindowTokens();
        largestMaxRunning_ = perRequest_ > 0 ? int(std::max<qint64>(0, (S - K * C - P) / perRequest_)) : 0;
    } else {
        perRequest_ = windowFloor_ = 0;
        largestMaxRunning_ = 0;
    }
    // The full pool keeps every token of a running request: one request of the
    // longest allowed context, plus a page, must fit.
    const qint64 context = maxContext_ > 0 ? maxContext_ : contextLength_;
    fullFloor_ = context > 0 ? ceilTo(context, P) + P : 0;
    emit resultsChanged();
}

} // namespace weir::desktop

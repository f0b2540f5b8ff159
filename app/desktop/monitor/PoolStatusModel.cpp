#include "monitor/PoolStatusModel.h"

#include <QLocale>
#include <algorithm>

namespace weir::desktop {
namespace {

float fraction(int64_t part, int64_t whole) {
    return whole > 0 ? float(std::clamp(double(part) / double(whole), 0.0, 1.0)) : 0.f;
}

// How far back "recent" preemptions and refusals count for the banner.
constexpr double kPressureMemorySeconds = 15.0;
// A pool with less than this fraction free counts as nearly full.
constexpr double kNearlyFull = 0.10;
// The chart never spans less than this, so the first seconds are not a sliver.
constexpr double kMinViewSeconds = 10.0;

} // namespace

PoolStatusModel::PoolStatusModel(QObject* parent) : QObject(parent) { clock_.start(); }

double PoolStatusModel::now() const { return double(clock_.nsecsElapsed()) / 1e9; }

void PoolStatusModel::clear() {
    samples_.clear();
    last_ = {};
    preemptionHistory_.clear();
    refusalHistory_.clear();
    requests_.update(last_);
    ++revision_;
    emit updated();
    updatePressure(now());
}

void PoolStatusModel::addSnapshot(const CacheStatus& status) { addSnapshot(status, now()); }

namespace {

bool sameLevels(const PoolStatusModel::Sample& a, const PoolStatusModel::Sample& b) {
    return a.fullOwned == b.fullOwned && a.fullCached == b.fullCached && a.windowOwned == b.windowOwned &&
           a.windowCached == b.windowCached;
}

bool samePool(const PoolStatus& a, const PoolStatus& b) {
    return a.capacityTokens == b.capacityTokens && a.ownedTokens == b.ownedTokens && a.cachedTokens == b.cachedTokens &&
           a.freeTokens == b.freeTokens && a.floorTokens == b.floorTokens;
}

// Everything a view shows apart from the chart's history.
bool sameNumbers(const CacheStatus& a, const CacheStatus& b) {
    return samePool(a.full, b.full) && samePool(a.window, b.window) && a.deferrals == b.deferrals &&
           a.preemptions == b.preemptions && a.refusals == b.refusals && a.prefixHitTokens == b.prefixHitTokens &&
           a.integrityChecks == b.integrityChecks && a.violations == b.violations && a.running == b.running &&
           a.waiting == b.waiting && a.requests.empty() && b.requests.empty();
}

} // namespace

void PoolStatusModel::addSnapshot(const CacheStatus& status, double t) {
    const Sample sample{t, fraction(status.full.ownedTokens, status.full.capacityTokens),
                        fraction(status.full.cachedTokens, status.full.capacityTokens),
                        fraction(status.window.ownedTokens, status.window.capacityTokens),
                        fraction(status.window.cachedTokens, status.window.capacityTokens)};
    const bool numbersChanged = samples_.empty() || !sameNumbers(last_, status);
    const bool levelsChanged = samples_.empty() || !sameLevels(samples_.back(), sample);
    last_ = status;
    samples_.push_back(sample);
    // Keep a little more than the visible minute so the left edge is drawn.
    while (samples_.size() > 2 && samples_[1].t < t - historySeconds()) samples_.pop_front();
    preemptionHistory_.push_back({t, status.preemptions});
    refusalHistory_.push_back({t, status.refusals});
    while (!preemptionHistory_.empty() && preemptionHistory_.front().first < t - kPressureMemorySeconds)
        preemptionHistory_.pop_front();
    while (!refusalHistory_.empty() && refusalHistory_.front().first < t - kPressureMemorySeconds)
        refusalHistory_.pop_front();
    // An idle engine sends the same snapshot four times a second. Views are
    // told only when a number or a level changes, so an idle monitor draws
    // nothing: scrolling a flat minute on every snapshot kept a software-
    // rendered window busy. The chart then stands still with its right edge
    // at the last change, whose levels are still the current ones; the next
    // change scrolls it to the present at once, the samples taken meanwhile
    // included.
    if (numbersChanged || levelsChanged) {
        requests_.update(status);
        ++revision_;
        emit updated();
    }
    updatePressure(t);  // recent preemptions age out of the banner all the same
}

QVariantMap PoolStatusModel::poolMap(const PoolStatus& p) {
    const int64_t used = p.ownedTokens;
    return {{"name", QString::fromLatin1(poolKindName(p.kind))},
            {"capacity", qint64(p.capacityTokens)},
            {"used", qint64(used)},
            {"cached", qint64(p.cachedTokens)},
            {"free", qint64(p.freeTokens)},
            {"floor", qint64(p.floorTokens)},
            {"bytesPerToken", qulonglong(p.bytesPerToken)},
            {"totalBytes", qulonglong(p.totalBytes)},
            {"usedFraction", double(fraction(used, p.capacityTokens))},
            {"cachedFraction", double(fraction(p.cachedTokens, p.capacityTokens))},
            {"freeFraction", double(fraction(p.freeTokens, p.capacityTokens))}};
}

QVariantMap PoolStatusModel::counters() const {
    return {{"deferrals", qulonglong(last_.deferrals)},
            {"preemptions", qulonglong(last_.preemptions)},
            {"refusals", qulonglong(last_.refusals)},
            {"prefixHitTokens", qulonglong(last_.prefixHitTokens)},
            {"integrityChecks", qulonglong(last_.integrityChecks)},
            {"violations", qulonglong(last_.violations)},
            {"running", last_.running},
            {"waiting", last_.waiting}};
}

QStringList PoolStatusModel::violationDetails() const {
    QStringList out;
    for (const std::string& s : last_.violationDetails) out.append(QString::fromStdString(s));
    return out;
}

double PoolStatusModel::updatesPerSecond() const {
    if (samples_.size() < 2) return 0;
    const double span = samples_.back().t - samples_.front().t;
    return span > 0 ? double(samples_.size() - 1) / span : 0;
}

float PoolStatusModel::level(const Sample& s, bool full, int lvl) const {
    const float owned = full ? s.fullOwned : s.windowOwned;
    const float cached = full ? s.fullCached : s.windowCached;
    switch (lvl) {
    case 1: return owned;
    case 2: return std::min(1.f, owned + cached);
    default: return 0.f;
    }
}

double PoolStatusModel::viewSeconds() const {
    if (samples_.size() < 2) return kMinViewSeconds;
    return std::clamp(samples_.back().t - samples_.front().t, kMinViewSeconds, historySeconds());
}

double PoolStatusModel::viewTop(const QString& pool) const {
    const bool full = pool != u"window";
    const double capacity = double((full ? last_.full : last_.window).capacityTokens);
    if (capacity <= 0) return 1.0;
    float peak = 0;
    for (const Sample& s : samples_) peak = std::max(peak, level(s, full, 2));
    // The smallest round token count (1, 2 or 5 times a power of ten) that
    // keeps the peak under 80% of the height, no less than 1% of the pool;
    // the whole pool once that would be half of it or more.
    const double want = std::max(double(peak) * capacity / 0.8, capacity * 0.01);
    for (double decade = 1; decade < capacity; decade *= 10)
        for (double step : {1.0, 2.0, 5.0})
            if (step * decade >= want) return step * decade < capacity / 2 ? step * decade / capacity : 1.0;
    return 1.0;
}

QPolygonF PoolStatusModel::line(const QString& pool, int lvl, qreal w, qreal h, double top) const {
    QPolygonF out;
    if (samples_.empty() || w <= 0 || h <= 0 || top <= 0) return out;
    const bool full = pool != u"window";
    const double span = viewSeconds();
    const double start = samples_.back().t - span;
    out.reserve(int(samples_.size()));
    for (const Sample& s : samples_) {
        const qreal x = std::max<qreal>(0, w * (s.t - start) / span);
        out.append({x, h * (1 - std::min(1.0, double(level(s, full, lvl)) / top))});
    }
    return out;
}

QPolygonF PoolStatusModel::band(const QString& pool, int lower, int upper, qreal w, qreal h, double top) const {
    QPolygonF upperEdge = line(pool, upper, w, h, top);
    if (upperEdge.isEmpty()) return upperEdge;
    const QPolygonF bottom = line(pool, lower, w, h, top);
    for (auto it = bottom.crbegin(); it != bottom.crend(); ++it) upperEdge.append(*it);
    upperEdge.append(upperEdge.first());
    return upperEdge;
}

void PoolStatusModel::dismissPressure() {
    dismissed_ = pressureKind_;
    pressure_.clear();
    emit pressureChanged();
}

void PoolStatusModel::updatePressure(double) {
    QString text, kind;
    bool error = false;
    const uint64_t preempted = preemptionHistory_.empty()
                                   ? 0 : preemptionHistory_.back().second - preemptionHistory_.front().second;
    const uint64_t refused = refusalHistory_.empty() ? 0 : refusalHistory_.back().second - refusalHistory_.front().second;
    const auto nearlyFull = [](const PoolStatus& p) {
        return p.capacityTokens > 0 && double(p.freeTokens + p.cachedTokens) < kNearlyFull * double(p.capacityTokens);
    };
    if (last_.violations > 0) {
        error = true;
        kind = QStringLiteral("violation");
        const QString detail = last_.violationDetails.empty() ? tr("see the pool monitor")
                                                              : QString::fromStdString(last_.violationDetails.front());
        text = last_.violations == 1 ? tr("KV integrity check found 1 violation: %1").arg(detail)
                                     : tr("KV integrity check found %1 violations: %2").arg(last_.violations).arg(detail);
    } else if (preempted > 0) {
        kind = QStringLiteral("preemption");
        const QString advice = tr("Fewer running requests or a larger window pool avoid this.");
        text = (preempted == 1 ? tr("Memory pressure: 1 request preempted in the last %1 s and restarted from its prompt.")
                                     .arg(int(kPressureMemorySeconds))
                               : tr("Memory pressure: %1 requests preempted in the last %2 s and restarted from their prompts.")
                                     .arg(preempted)
                                     .arg(int(kPressureMemorySeconds))) +
               QLatin1Char(' ') + advice;
    } else if (refused > 0) {
        kind = QStringLiteral("refusal");
        text = refused == 1 ? tr("1 request refused in the last %1 s: it could never fit in the KV pools.")
                                  .arg(int(kPressureMemorySeconds))
                            : tr("%1 requests refused in the last %2 s: they could never fit in the KV pools.")
                                  .arg(refused)
                                  .arg(int(kPressureMemorySeconds));
    } else if (nearlyFull(last_.window) || nearlyFull(last_.full)) {
        const PoolStatus& p = nearlyFull(last_.window) ? last_.window : last_.full;
        kind = QStringLiteral("full:") + QString::fromLatin1(poolKindName(p.kind));
        text = tr("The %1 pool is nearly full (%2% in use); new requests wait for space.")
                   .arg(QString::fromLatin1(poolKindName(p.kind)))
                   .arg(qRound(100.0 * double(p.ownedTokens) / double(p.capacityTokens)));
    }
    // A dismissed kind of pressure stays hidden until it goes away.
    if (!kind.isEmpty() && kind == dismissed_) text.clear();
    if (kind.isEmpty()) dismissed_.clear();
    pressureKind_ = kind;
    if (text == pressure_ && error == pressureIsError_) return;
    pressure_ = text;
    pressureIsError_ = error;
    emit pressureChanged();
}

} // namespace weir::desktop

#pragma once
// PoolStatusModel keeps a minute of engine status snapshots (both KV pools: in
// use, cached, free) for the live chart, the current counters, per-request
// usage, and turns signs of pressure into a one-line banner text.
#include <QElapsedTimer>
#include <QObject>
#include <QPolygonF>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <deque>

#include "weir/engine.h"
#include "monitor/RequestUsageModel.h"

namespace weir::desktop {

class PoolStatusModel : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("PoolStatusModel is created by the app")
    Q_PROPERTY(QVariantMap full READ full NOTIFY updated)
    Q_PROPERTY(QVariantMap window READ window NOTIFY updated)
    Q_PROPERTY(QVariantMap counters READ counters NOTIFY updated)
    Q_PROPERTY(QStringList violationDetails READ violationDetails NOTIFY updated)
    Q_PROPERTY(RequestUsageModel* requests READ requests CONSTANT)
    Q_PROPERTY(int revision READ revision NOTIFY updated)
    Q_PROPERTY(bool hasData READ hasData NOTIFY updated)
    Q_PROPERTY(double historySeconds READ historySeconds CONSTANT)
    Q_PROPERTY(double updatesPerSecond READ updatesPerSecond NOTIFY updated)
    Q_PROPERTY(QString pressure READ pressure NOTIFY pressureChanged)
    Q_PROPERTY(bool pressureIsError READ pressureIsError NOTIFY pressureChanged)

public:
    explicit PoolStatusModel(QObject* parent = nullptr);

    // Feed one snapshot (connected to EngineHost::statusUpdated).
    void addSnapshot(const CacheStatus& status);
    void addSnapshot(const CacheStatus& status, double atSeconds);  // explicit time (tests)
    Q_INVOKABLE void clear();

    QVariantMap full() const { return poolMap(last_.full); }
    QVariantMap window() const { return poolMap(last_.window); }
    QVariantMap counters() const;
    QStringList violationDetails() const;
    RequestUsageModel* requests() { return &requests_; }
    int revision() const { return revision_; }
    bool hasData() const { return !samples_.empty(); }
    double historySeconds() const { return 60.0; }
    double updatesPerSecond() const;
    QString pressure() const { return pressure_; }
    bool pressureIsError() const { return pressureIsError_; }
    int sampleCount() const { return int(samples_.size()); }

    // The chart: a closed polygon for one pool ("full" or "window") between two
    // stacked levels, scaled into a w x h box (time runs left to right over
    // historySeconds, capacity at the top). Levels: 0 = zero, 1 = in use,
    // 2 = in use + cached. band(pool, 0, 1) is the in-use area, band(pool, 1, 2)
    // the cached area stacked on it.
    // `top` is the fraction of capacity at the top of the box (viewTop()).
    Q_INVOKABLE QPolygonF band(const QString& pool, int lower, int upper, qreal w, qreal h, double top = 1.0) const;
    // The top edge of a level as a polyline (the chart's outline).
    Q_INVOKABLE QPolygonF line(const QString& pool, int level, qreal w, qreal h, double top = 1.0) const;
    // Seconds the chart spans: the history so far (at least 10 s, so the
    // first seconds fill the chart instead of a sliver), up to historySeconds.
    Q_INVOKABLE double viewSeconds() const;
    // The fraction of a pool's capacity at the top of its chart: 1 (the whole
    // pool) unless everything in view stayed low, then a round token count
    // (1, 2 or 5 times a power of ten) that keeps the peak under 80% of the
    // height, so a big pool's activity is still visible and the axis reads
    // in round numbers.
    Q_INVOKABLE double viewTop(const QString& pool) const;
    Q_INVOKABLE void dismissPressure();

signals:
    void updated();
    void pressureChanged();

public:
    // One snapshot as the chart draws it.
    struct Sample {
        double t;
        float fullOwned, fullCached, windowOwned, windowCached;  // fractions of capacity
    };

private:
    static QVariantMap poolMap(const PoolStatus& p);
    double now() const;
    float level(const Sample& s, bool full, int level) const;
    void updatePressure(double t);

    QElapsedTimer clock_;
    std::deque<Sample> samples_;
    CacheStatus last_;
    RequestUsageModel requests_;
    int revision_ = 0;
    QString pressure_;
    bool pressureIsError_ = false;
    QString dismissed_, pressureKind_;
    std::deque<std::pair<double, uint64_t>> preemptionHistory_, refusalHistory_;
};

} // namespace weir::desktop

#include "monitor/SizingAdvisor.h"

#include <QLocale>

#include "weir/types/engine_limits.h"

namespace weir::desktop {
namespace {

KvDtype dtypeFromName(const QString& name) {
    for (KvDtype t : {KvDtype::F16, KvDtype::Q8_0, KvDtype::F32, KvDtype::FP8_E4M3})
        if (name == QLatin1String(kvDtypeName(t))) return t;
    return KvDtype::F16;
}

QVariantMap term(const QString& label, const QString& formula, qint64 tokens, bool part = false) {
    return {{"label", label}, {"formula", formula}, {"tokens", tokens}, {"part", part}};
}

} // namespace

SizingAdvisor::SizingAdvisor(QObject* parent) : QObject(parent) {
    connect(this, &SizingAdvisor::inputsChanged, this, &SizingAdvisor::recompute);
    recompute();
}

void SizingAdvisor::setModelInfo(const QVariantMap& info) {
    ModelConfig m;
    const QString pattern = info.value("layerPattern").toString();  // S sliding, F full
    m.nLayer = int32_t(pattern.size());
    for (QChar c : pattern) m.layerSlides.push_back(c == u'S');
    m.slidingWindow = info.value("slidingWindow").toInt();
    m.nHeadKv = info.value("kvHeads").toInt();
    m.headDimK = info.value("headDimK").toInt();
    m.headDimV = info.value("headDimV", m.headDimK).toInt();
    m.nCtxTrain = info.value("contextLength").toInt();
    model_ = m;
    recompute();
}

int SizingAdvisor::largestMaxRunning() const {
    return applicable() ? int(kv::maxRunningForWindowPool(plan_.windowTokens, plan_.windowInput)) : 0;
}

void SizingAdvisor::recompute() {
    EngineOptions o;
    o.threads = threads_;
    o.maxRunningRequests = maxRunning_;
    o.pageSize = pageSize_;
    o.prefillChunk = prefillChunk_;
    o.retainGap = retainGap_;
    o.maxContext = maxContext_;
    o.swaTokens = windowPoolTokens_;
    o.kvReserveTokens = fullPoolTokens_;
    o.kvDtype = dtypeFromName(kvDtype_);
    plan_ = kv::planPools(o, model_);
    if (const std::string bad = validateEngineOptions(o); !bad.empty())
        problems_ = QString::fromStdString(bad);
    else
        problems_ = hasModel() ? QString::fromStdString(kv::checkPoolPlan(plan_)).trimmed() : QString();

    terms_.clear();
    if (applicable()) {
        const kv::WindowFloor& f = plan_.windowFloor;
        const kv::WindowFloorInput& in = plan_.windowInput;
        const QLocale l;
        terms_ = {
            term(tr("Window, in whole pages"), QStringLiteral("ceil_P(W %1)").arg(in.window), f.windowTokens, true),
            term(tr("Release boundary rounds down a page"), QStringLiteral("P"), f.boundaryPage, true),
            term(tr("Written between releases"),
                 QStringLiteral("E\u00b7D = %1\u00b7%2").arg(in.retainGap).arg(in.tokensPerDecodeStep), f.retainTokens, true),
            term(tr("Next decode page"), QStringLiteral("P"), f.nextDecodePage, true),
            term(tr("Per request \u00d7 max running"),
                 QStringLiteral("%1 \u00d7 R %2").arg(l.toString(f.perRequest)).arg(in.maxRunning), f.requestsTerm),
            term(tr("Prefill chunks in flight"),
                 QStringLiteral("K %1 \u00d7 C %2").arg(in.chunksInFlight).arg(in.prefillChunk), f.chunkTerm),
            term(tr("Partly filled last page"), QStringLiteral("P"), f.slackPage),
        };
    }
    emit resultsChanged();
}

} // namespace weir::desktop

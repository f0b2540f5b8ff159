#include "monitor/SizingAdvisor.h"

#include <QLocale>

#include "weir/types/engine_limits.h"
#include "weir/types/memory_fit.h"

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

// The first line of an engine message with its weir-cli flags named as the
// settings page labels them ("--page-size must be ..." -> "Page size must be ...").
QString inAppWords(const QString& engineMessage) {
    static const QList<QPair<QString, const char*>> labels = {
        {QStringLiteral("--max-running-requests"), QT_TR_NOOP("Max running requests")},
        {QStringLiteral("--prefill-chunk"), QT_TR_NOOP("Prefill chunk")},
        {QStringLiteral("--page-size"), QT_TR_NOOP("Page size")},
        {QStringLiteral("--kv-reserve-tokens"), QT_TR_NOOP("Full pool")},
        {QStringLiteral("--swa-full-tokens-ratio"), QT_TR_NOOP("Window pool ratio")},
        {QStringLiteral("--swa-tokens"), QT_TR_NOOP("Window pool")},
        {QStringLiteral("--retain-gap"), QT_TR_NOOP("Release gap")},
        {QStringLiteral("--max-context"), QT_TR_NOOP("Max context")},
        {QStringLiteral("--kv-cache-dtype"), QT_TR_NOOP("KV dtype")},
        {QStringLiteral("--threads"), QT_TR_NOOP("Threads")},
        {QStringLiteral("--max-waiting"), QT_TR_NOOP("Max waiting requests")},
    };
    QString line = engineMessage.section(u'\n', 0, 0).trimmed();
    for (const auto& [flag, label] : labels) line.replace(flag, SizingAdvisor::tr(label));
    if (!line.isEmpty()) line[0] = line[0].toUpper();
    if (!line.endsWith(u'.')) line += u'.';
    return line;
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
    const std::string bad = validateEngineOptions(o);
    if (!bad.empty())
        problems_ = QString::fromStdString(bad);
    else
        problems_ = hasModel() ? QString::fromStdString(kv::checkPoolPlan(plan_)).trimmed() : QString();
    // Where the pools would live: refused at load when they do not fit.
    memoryProblem_.clear();
    shrunkFullTokens_ = 0;
    largestFitting_ = 0;
    if (problems_.isEmpty() && hasModel() && deviceFreeBytes_ > 0) {
        kv::PoolPlan fitted = plan_;
        const uint64_t keepFree = deviceIsGpu_ ? (256ull << 20) : (512ull << 20);
        const kv::MemoryFit fit = kv::fitPoolsToMemory(fitted, fullPoolTokens_ == 0, uint64_t(deviceFreeBytes_), 0,
                                                       keepFree, deviceLabel_.toStdString());
        if (!fit.fits) {
            memoryProblem_ = QString::fromStdString(fit.message);
            problems_ = memoryProblem_;
            largestFitting_ = fit.largestFullTokens;
        } else if (fit.shrunk) {
            shrunkFullTokens_ = fitted.fullTokens;
        }
    }
    const QLocale locale;
    if (problems_.isEmpty())
        refusal_.clear();
    else if (!memoryProblem_.isEmpty())
        refusal_ = largestFitting_ > 0
                       ? tr("The KV pools do not fit in the free memory of %1: the largest full pool that fits is %2 tokens.")
                             .arg(deviceLabel_, locale.toString(largestFitting_))
                       : tr("The KV pools do not fit in the free memory of %1, even at their floors: lower Max context or Max running requests, or choose KV dtype q8_0.")
                             .arg(deviceLabel_);
    else if (bad.empty() && windowBelowFloor())
        refusal_ = tr("The window pool is too small for %1 conversations at once: it needs at least %2 tokens.")
                       .arg(maxRunning_).arg(locale.toString(windowFloor()));
    else if (bad.empty() && fullBelowFloor())
        refusal_ = tr("The full pool is too small for one conversation of the longest context: it needs at least %1 tokens.")
                       .arg(locale.toString(fullFloor()));
    else
        refusal_ = inAppWords(problems_);

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

#include "settings/AppSettings.h"

#include <QCoreApplication>
#include <QDir>
#include <QThread>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "app/common/inbox.h"
#include "weir/devices.h"
#include "weir/model_runner.h"
#include "weir/types/engine_limits.h"
#include "weir/types/kv_dtype.h"

namespace weir::desktop {
namespace {

const char* kEngineKeys[] = {"threads", "maxRunning", "prefillChunk", "pageSize", "fullPoolTokens",
                             "windowPoolTokens", "kvDtype", "retainGap", "maxContext", "device"};

// A stored number as an int32 option. Out of range saturates (never wraps),
// so validateEngineOptions sees a value that is out of range too.
int32_t int32Setting(const QVariant& v) {
    const qint64 n = v.toLongLong();
    return int32_t(std::clamp<qint64>(n, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}

} // namespace

AppSettings::AppSettings(const QString& dataDir, const QString& defaultModel, QObject* parent)
    : QObject(parent),
      settings_(QDir(dataDir).filePath(QStringLiteral("settings.ini")), QSettings::IniFormat),
      defaultModel_(defaultModel) {
    lookUpDevices();
}

namespace {
QVariantMap deviceEntry(const ComputeDevice& d) {
    const QString name = QString::fromStdString(d.name);
    const double gib = double(d.totalBytes) / double(1ull << 30);
    return {{"id", QString::fromStdString(d.id)},
            {"label", d.gpu ? QStringLiteral("%1 (%2, %3 GiB)").arg(name, QString::fromStdString(d.id)).arg(gib, 0, 'f', 0)
                            : QStringLiteral("CPU")},
            {"name", name},
            {"gpu", d.gpu},
            {"totalBytes", qint64(d.totalBytes)},
            {"freeBytes", qint64(d.freeBytes)},
            {"detail", QString::fromStdString(d.detail)}};
}
} // namespace

void AppSettings::lookUpDevices() {
    ComputeDevice cpu;
    cpu.id = "cpu";
    cpu.name = "CPU";
    devices_ = {QVariantMap{{"id", QString()}, {"label", tr("Automatic")}, {"gpu", false}}, deviceEntry(cpu)};
    // Off the GUI thread: the CUDA module and driver may take a while to
    // open. The answer (the devices, and why there is no GPU) comes back in
    // an inbox woken on this object's thread.
    using Found = std::pair<std::vector<ComputeDevice>, std::string>;
    auto answer = common::Inbox<Found>::create(common::Keep::Latest, this, [this](common::Inbox<Found>& inbox) {
        std::optional<Found> found = inbox.take();
        inbox.close();  // one answer: its wake-up target goes now
        if (!found) return;
        QVariantList list{QVariantMap{{"id", QString()}, {"label", tr("Automatic (first GPU, else CPU)")}, {"gpu", false}}};
        for (const ComputeDevice& d : found->first) list.push_back(deviceEntry(d));
        devices_ = list;
        gpuProblem_ = QString::fromStdString(found->second);
        emit devicesChanged();
    });
    lookup_ = QThread::create([answer] {
        std::string problem;
        std::vector<ComputeDevice> found;
        try {
            found = listComputeDevices(&problem);
        } catch (const std::exception& e) {
            problem = e.what();
        }
        answer->put({std::move(found), std::move(problem)});
    });
    lookup_->start();
}

AppSettings::~AppSettings() {
    if (lookup_) {
        lookup_->wait();
        delete lookup_;
    }
}

QVariantMap AppSettings::engineDefaults() const {
    const EngineOptions d;
    return {{"threads", d.threads},
            {"maxRunning", d.maxRunningRequests},
            {"prefillChunk", d.prefillChunk},
            {"pageSize", d.pageSize},
            {"fullPoolTokens", qint64(d.kvReserveTokens)},
            {"windowPoolTokens", qint64(d.swaTokens)},
            {"kvDtype", QString::fromLatin1(kvDtypeName(d.kvDtype))},
            {"retainGap", d.retainGap},
            {"maxContext", d.maxContext},
            {"device", QString::fromStdString(d.device)}};
}

QVariantMap AppSettings::engine() const {
    QVariantMap out = engineDefaults();
    settings_.beginGroup(QStringLiteral("engine"));
    for (const char* key : kEngineKeys) {
        const QString k = QString::fromLatin1(key);
        if (settings_.contains(k)) out[k] = settings_.value(k);
    }
    settings_.endGroup();
    return out;
}

QVariantMap AppSettings::engineLimits() const {
    using L = EngineLimits;
    return {{"threadsMax", L::maxThreads()},
            {"maxRunningMax", L::kMaxRunningRequests},
            {"prefillChunkMax", L::kMaxPrefillChunk},
            {"pageSizeMax", L::kMaxPageSize},
            {"poolTokensMax", qint64(L::kMaxPoolTokens)},
            {"retainGapMax", L::kMaxRetainGap},
            {"maxContextMax", qint64(L::kMaxPoolTokens)}};
}

QString AppSettings::setEngine(const QVariantMap& values) {
    QVariantMap merged = engine();
    for (auto it = values.begin(); it != values.end(); ++it) merged[it.key()] = it.value();
    const EngineOptions options = optionsFrom(merged);
    if (const std::string bad = validateEngineOptions(options); !bad.empty())
        return QString::fromStdString(bad);
    try {
        checkDeviceName(options.device);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    settings_.beginGroup(QStringLiteral("engine"));
    for (const char* key : kEngineKeys) {
        const QString k = QString::fromLatin1(key);
        if (values.contains(k)) settings_.setValue(k, values.value(k));
    }
    settings_.endGroup();
    settings_.sync();
    emit engineChanged();
    return {};
}

EngineOptions AppSettings::engineOptions() const { return optionsFrom(engine()); }

EngineOptions AppSettings::optionsFrom(const QVariantMap& e) {
    EngineOptions o;
    o.threads = int32Setting(e.value("threads"));
    o.maxRunningRequests = int32Setting(e.value("maxRunning"));
    o.prefillChunk = int32Setting(e.value("prefillChunk"));
    o.pageSize = int32Setting(e.value("pageSize"));
    o.kvReserveTokens = e.value("fullPoolTokens").toLongLong();
    o.swaTokens = e.value("windowPoolTokens").toLongLong();
    o.retainGap = int32Setting(e.value("retainGap"));
    o.maxContext = int32Setting(e.value("maxContext"));
    o.device = e.value("device").toString().toStdString();
    const QString dtype = e.value("kvDtype").toString();
    for (KvDtype t : {KvDtype::F16, KvDtype::Q8_0, KvDtype::F32, KvDtype::FP8_E4M3})
        if (dtype == QLatin1String(kvDtypeName(t))) o.kvDtype = t;
    return o;
}

EndpointConfig AppSettings::endpointConfig() const {
    EndpointConfig c;
    settings_.beginGroup(QStringLiteral("endpoint"));
    c.enabled = settings_.value(QStringLiteral("enabled"), c.enabled).toBool();
    c.host = settings_.value(QStringLiteral("host"), c.host).toString();
    c.port = settings_.value(QStringLiteral("port"), c.port).toInt();
    c.apiKey = settings_.value(QStringLiteral("apiKey"), c.apiKey).toString();
    c.corsOrigins = settings_.value(QStringLiteral("corsOrigins")).toStringList();
    settings_.endGroup();
    return c;
}

void AppSettings::setEndpointConfig(const EndpointConfig& c) {
    settings_.beginGroup(QStringLiteral("endpoint"));
    settings_.setValue(QStringLiteral("enabled"), c.enabled);
    settings_.setValue(QStringLiteral("host"), c.host);
    settings_.setValue(QStringLiteral("port"), c.port);
    settings_.setValue(QStringLiteral("apiKey"), c.apiKey);
    settings_.setValue(QStringLiteral("corsOrigins"), c.corsOrigins);
    settings_.endGroup();
    settings_.sync();
}

QStringList AppSettings::recentModels() const {
    QStringList out;
    for (const QString& p : settings_.value(QStringLiteral("models/recent")).toStringList())
        if (QFileInfo::exists(p)) out.append(p);
    return out;
}

QString AppSettings::lastModel() const {
    const QStringList recent = recentModels();
    return recent.isEmpty() ? QString() : recent.first();
}

void AppSettings::addRecentModel(const QString& path) {
    QStringList recent = settings_.value(QStringLiteral("models/recent")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 8) recent.removeLast();
    settings_.setValue(QStringLiteral("models/recent"), recent);
    emit recentModelsChanged();
}

void AppSettings::removeRecentModel(const QString& path) {
    QStringList recent = settings_.value(QStringLiteral("models/recent")).toStringList();
    if (recent.removeAll(QFileInfo(path).absoluteFilePath()) == 0) return;
    settings_.setValue(QStringLiteral("models/recent"), recent);
    emit recentModelsChanged();
}

qint64 AppSettings::lastConversation() const {
    return settings_.value(QStringLiteral("session/lastConversation"), 0).toLongLong();
}

void AppSettings::setLastConversation(qint64 id) {
    if (id == lastConversation()) return;
    settings_.setValue(QStringLiteral("session/lastConversation"), id);
    emit lastConversationChanged();
}

QRect AppSettings::windowGeometry() const { return settings_.value(QStringLiteral("window/geometry")).toRect(); }

void AppSettings::setWindowGeometry(const QRect& r) {
    if (r == windowGeometry()) return;
    settings_.setValue(QStringLiteral("window/geometry"), r);
    emit windowGeometryChanged();
}

bool AppSettings::windowMaximized() const { return settings_.value(QStringLiteral("window/maximized")).toBool(); }

void AppSettings::setWindowMaximized(bool m) {
    if (m == windowMaximized()) return;
    settings_.setValue(QStringLiteral("window/maximized"), m);
    emit windowGeometryChanged();
}

QString AppSettings::contextPolicy() const { return settings_.value(QStringLiteral("chat/contextPolicy")).toString(); }

void AppSettings::setContextPolicy(const QString& policy) { settings_.setValue(QStringLiteral("chat/contextPolicy"), policy); }

QString AppSettings::draft(qint64 conversationId) const {
    return settings_.value(QStringLiteral("drafts/%1").arg(conversationId)).toString();
}

void AppSettings::setDraft(qint64 conversationId, const QString& text) {
    const QString key = QStringLiteral("drafts/%1").arg(conversationId);
    if (text.isEmpty()) settings_.remove(key);
    else settings_.setValue(key, text);
}

int AppSettings::sidebarWidth() const { return settings_.value(QStringLiteral("window/sidebarWidth"), 272).toInt(); }

void AppSettings::setSidebarWidth(int w) {
    if (w == sidebarWidth()) return;
    settings_.setValue(QStringLiteral("window/sidebarWidth"), w);
    emit sidebarWidthChanged();
}

bool AppSettings::sidebarCollapsed() const { return settings_.value(QStringLiteral("window/sidebarCollapsed"), false).toBool(); }

void AppSettings::setSidebarCollapsed(bool c) {
    if (c == sidebarCollapsed()) return;
    settings_.setValue(QStringLiteral("window/sidebarCollapsed"), c);
    emit sidebarCollapsedChanged();
}

QString AppSettings::theme() const {
    const QString t = settings_.value(QStringLiteral("appearance/theme")).toString();
    return t == QLatin1String("light") || t == QLatin1String("dark") ? t : QStringLiteral("system");
}

void AppSettings::setTheme(const QString& theme) {
    const QString t = theme == QLatin1String("light") || theme == QLatin1String("dark") ? theme : QStringLiteral("system");
    if (t == this->theme()) return;
    settings_.setValue(QStringLiteral("appearance/theme"), t);
    emit themeChanged();
}

double AppSettings::zoom() const {
    const double z = settings_.value(QStringLiteral("appearance/zoom"), 1.0).toDouble();
    return std::isfinite(z) ? std::clamp(z, kZoomMin, kZoomMax) : 1.0;
}

void AppSettings::setZoom(double zoom) {
    if (!std::isfinite(zoom)) return;
    const double z = std::clamp(std::round(zoom * 20.0) / 20.0, kZoomMin, kZoomMax);
    if (z == this->zoom()) return;
    settings_.setValue(QStringLiteral("appearance/zoom"), z);
    emit zoomChanged();
}

int AppSettings::hardwareThreads() const { return int(std::max(1u, std::thread::hardware_concurrency())); }

int AppSettings::physicalCores() const { return int(weir::EngineLimits::physicalCores()); }

QString AppSettings::cpuFeatures() const {
    QStringList f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) f << QStringLiteral("AVX2");
    if (__builtin_cpu_supports("fma")) f << QStringLiteral("FMA");
    if (__builtin_cpu_supports("avx512f")) f << QStringLiteral("AVX-512");
    if (__builtin_cpu_supports("avx512vnni")) f << QStringLiteral("VNNI");
    // AMX-INT8: CPUID leaf 7 EDX bit 25 (libgcc's check also wants the OS to
    // have granted the tile state, which Linux does only on request).
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 25 & 1u)) f << QStringLiteral("AMX");
#endif
    return f.join(QStringLiteral(", "));
}

QString AppSettings::cpuKernels() const {
    const QString k = QString::fromLatin1(weir::cpuKernelsInUse());
    if (k == QLatin1String("avx512-vnni+amx")) return tr("AVX-512 VNNI, AMX tiles for prompts and several replies at once");
    if (k == QLatin1String("avx512-vnni+tiles")) return tr("AVX-512 VNNI, prompts in tiles");
    if (k == QLatin1String("avx512-vnni")) return tr("AVX-512 VNNI");
    if (k == QLatin1String("avx2")) return tr("AVX2");
    return tr("portable");
}

} // namespace weir::desktop

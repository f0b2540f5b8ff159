// weir-cli serve: the OpenAI-compatible endpoint without the app. Loads the
// model into one Engine and serves it until SIGINT/SIGTERM, then shuts down
// gracefully (ApiServer::stop: streams end with an error event and [DONE],
// waiting requests get 503 with Retry-After) and exits 0. Prints the base
// URL on stdout once listening ("listening on http://127.0.0.1:8719/v1"), so
// scripts started with --port 0 can read the port chosen.
#include <QCoreApplication>
#include <QStringList>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/common/quit_on_signal.h"
#include "app/logging/engine_log_bridge.h"
#include "app/server/api_server.h"
#include "app/server/cors_origin.h"
#include "weir/engine.h"
#include "weir/base/error.h"

namespace {

int seconds(weir::cli::Args& args, const char* flag, int defMs) {
    return int(args.intValue(flag, defMs / 1000, 1, 3600) * 1000);
}

int run(const std::vector<std::string>& argv) {
    weir::cli::Args args(argv);
    weir::EngineOptions eo;
    weir::cli::readEngineFlags(args, eo);
    eo.checkIntegrityEveryStep = args.flag("--check-integrity");

    weir::server::ServerOptions so;
    so.host = QString::fromStdString(args.value("--host", so.host.toStdString()));
    const long long port = args.intValue("--port", weir::server::kDefaultPort, 0, 65535);
    std::string key = args.value("--api-key", "");
    if (key.empty())
        if (const char* env = std::getenv("WEIR_API_KEY")) key = env;
    so.apiKey = QString::fromStdString(key);
    so.http.maxBodyBytes = args.intValue("--max-body-bytes", so.http.maxBodyBytes, 1024, 1ll << 30);
    so.modelId = QString::fromStdString(args.value("--model-id", ""));
    so.defaultMaxTokens = args.intValue("--default-max-tokens", 0, 0, 1 << 20);
    so.http.maxConnections = int(args.intValue("--max-connections", so.http.maxConnections, 1, 100000));
    so.http.headerTimeoutMs = seconds(args, "--header-timeout", so.http.headerTimeoutMs);
    so.http.bodyTimeoutMs = seconds(args, "--body-timeout", so.http.bodyTimeoutMs);
    so.http.bodyDeadlineMs = seconds(args, "--body-deadline", so.http.bodyDeadlineMs);
    so.http.bodyMinBytesPerSecond =
        args.intValue("--body-min-rate", so.http.bodyMinBytesPerSecond, 1, 1ll << 30);
    so.http.reservedConnections =
        int(args.intValue("--reserved-connections", so.http.reservedConnections, 0, 100000));
    so.http.idleTimeoutMs = seconds(args, "--idle-timeout", so.http.idleTimeoutMs);
    // --allowed-host may be repeated or hold a comma-separated list.
    for (const std::string& h : args.values("--allowed-host"))
        so.allowedHosts += QString::fromStdString(h).split(QLatin1Char(','), Qt::SkipEmptyParts);
    // --cors-origins ORIGIN[,ORIGIN] ("*": any web page), may be repeated too; none by default.
    for (const std::string& o : args.values("--cors-origins"))
        so.corsOrigins += QString::fromStdString(o).split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& o : so.corsOrigins)
        if (auto why = weir::server::invalidCorsOrigin(o)) {
            std::fprintf(stderr, "serve: --cors-origins: %s\n", qPrintable(*why));
            return 1;
        }
    args.rejectUnknown();
    so.port = quint16(port);

    int qargc = 1;
    char name[] = "weir-cli";
    char* qargv[] = {name, nullptr};
    QCoreApplication app(qargc, qargv);
    // The engine's lines and one line per answered request go to stderr.
    weir::logging::routeEngineLogToQt();
    // Hooked before the model loads: a signal during the load ends the
    // program as soon as the event loop runs.
    if (!weir::common::quitOnTerminationSignals(app))
        std::fprintf(stderr, "serve: WARNING: SIGTERM/SIGINT could not be hooked; they will end the process abruptly\n");

    std::unique_ptr<weir::Engine> engine;
    try {
        engine = std::make_unique<weir::Engine>(eo);
    } catch (const weir::Error& e) {
        std::fprintf(stderr, "serve: cannot start the engine:\n%s\n", e.what());
        return 2;
    }
    weir::server::ApiServer server(*engine, so);
    QString error, warning;
    if (!server.start(&error, &warning)) {
        std::fprintf(stderr, "serve: %s\n", qPrintable(error));
        return 2;
    }
    if (!warning.isEmpty()) std::fprintf(stderr, "serve: WARNING: %s\n", qPrintable(warning));
    const weir::CacheStatus st = engine->cacheStatus();
    std::fprintf(stderr, "serve: model %s; full pool %lld tokens, window pool %lld tokens; %d running at most%s\n",
                 qPrintable(server.modelId()), (long long)st.full.capacityTokens,
                 (long long)st.window.capacityTokens, eo.maxRunningRequests,
                 so.apiKey.isEmpty() ? "" : "; API key required");
    std::printf("listening on %s\n", qPrintable(server.url()));
    std::fflush(stdout);

    const int rc = app.exec();
    std::fprintf(stderr, "serve: shutting down\n");
    server.stop();
    std::fprintf(stderr, "serve: stopped\n");
    return rc;
}

weir::cli::Command reg{"serve",
                       "OpenAI-compatible HTTP endpoint: [--host H] [--port P (8719)] [--api-key K] "
                       "[--max-body-bytes N] [--model-id ID] [--default-max-tokens N] [--check-integrity] "
                       "[--max-connections N (256)] [--reserved-connections N (32)] [--header-timeout S (15)] "
                       "[--body-timeout S (30)] [--body-deadline S (120)] [--body-min-rate BYTES_PER_S (16384)] "
                       "[--idle-timeout S (15)] [--allowed-host NAME[,NAME]] [--cors-origins ORIGIN[,ORIGIN] | '*'] "
                       "and the engine flags",
                       &run};

} // namespace

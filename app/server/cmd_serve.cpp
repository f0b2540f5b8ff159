// weir-cli serve: the OpenAI-compatible endpoint without the app. Loads the
// model into one Engine and serves it until SIGINT/SIGTERM. Prints the base
// URL on stdout once listening ("listening on http://127.0.0.1:8719/v1"), so
// scripts started with --port 0 can read the port chosen.
#include <QCoreApplication>
#include <QSocketNotifier>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

#include "app/cli/command.h"
#include "app/server/api_server.h"
#include "engine/engine.h"
#include "engine/util/error.h"

namespace {

int signalPipe[2] = {-1, -1};

void onSignal(int) {
    const char c = 1;
    [[maybe_unused]] ssize_t n = ::write(signalPipe[1], &c, 1);
}

weir::KvDtype parseKvDtype(const std::string& s) {
    if (s == "f16") return weir::KvDtype::F16;
    if (s == "q8_0") return weir::KvDtype::Q8_0;
    if (s == "f32") return weir::KvDtype::F32;
    throw weir::Error("--kv-cache-dtype must be f16, q8_0 or f32, got '" + s + "'");
}

int run(const std::vector<std::string>& argv) {
    weir::cli::Args args(argv);
    weir::EngineOptions eo;
    eo.modelPath = args.value("-m", weir::cli::defaultModelPath());
    eo.threads = int32_t(args.intValue("--threads", 0));
    eo.maxRunningRequests = int32_t(args.intValue("--max-running-requests", eo.maxRunningRequests));
    eo.prefillChunk = int32_t(args.intValue("--prefill-chunk", eo.prefillChunk));
    eo.pageSize = int32_t(args.intValue("--page-size", eo.pageSize));
    eo.kvReserveTokens = args.intValue("--kv-reserve-tokens", 0);
    eo.swaFullTokensRatio = args.floatValue("--swa-full-tokens-ratio", 0.0);
    eo.swaTokens = args.intValue("--swa-tokens", 0);
    eo.kvDtype = parseKvDtype(args.value("--kv-cache-dtype", "f16"));
    eo.maxContext = int32_t(args.intValue("--max-context", 0));
    eo.maxWaiting = int32_t(args.intValue("--max-waiting", eo.maxWaiting));
    eo.checkIntegrityEveryStep = args.flag("--check-integrity");

    weir::server::ServerOptions so;
    so.host = QString::fromStdString(args.value("--host", so.host.toStdString()));
    const long long port = args.intValue("--port", weir::server::kDefaultPort);
    std::string key = args.value("--api-key", "");
    if (key.empty())
        if (const char* env = std::getenv("WEIR_API_KEY")) key = env;
    so.apiKey = QString::fromStdString(key);
    so.maxBodyBytes = args.intValue("--max-body-bytes", so.maxBodyBytes);
    so.modelId = QString::fromStdString(args.value("--model-id", ""));
    so.defaultMaxTokens = args.intValue("--default-max-tokens", 0);
    args.rejectUnknown();
    if (port < 0 || port > 65535) throw weir::Error("--port must be between 0 and 65535");
    if (so.maxBodyBytes < 1024) throw weir::Error("--max-body-bytes must be at least 1024");
    if (eo.maxWaiting < 0) throw weir::Error("--max-waiting must be at least 0");
    so.port = quint16(port);

    int qargc = 1;
    char name[] = "weir-cli";
    char* qargv[] = {name, nullptr};
    QCoreApplication app(qargc, qargv);

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

    // SIGINT/SIGTERM end the event loop from the main thread.
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, signalPipe) == 0) {
        auto* notifier = new QSocketNotifier(signalPipe[0], QSocketNotifier::Read, &app);
        QObject::connect(notifier, &QSocketNotifier::activated, &app, [] { QCoreApplication::quit(); });
        std::signal(SIGINT, onSignal);
        std::signal(SIGTERM, onSignal);
    }
    const int rc = app.exec();
    server.stop();
    std::fprintf(stderr, "serve: stopped\n");
    return rc;
}

weir::cli::Command reg{"serve",
                       "OpenAI-compatible HTTP endpoint: [-m FILE] [--host H] [--port P (8719)] [--api-key K] "
                       "[--max-running-requests N] [--prefill-chunk N] [--page-size N] [--kv-reserve-tokens N] "
                       "[--swa-full-tokens-ratio R] [--swa-tokens N] [--kv-cache-dtype f16|q8_0|f32] [--threads N] "
                       "[--max-context N] [--max-waiting N] [--max-body-bytes N] [--model-id ID] "
                       "[--default-max-tokens N] [--check-integrity]",
                       &run};

} // namespace

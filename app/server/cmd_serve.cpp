// weir-cli serve: the OpenAI-compatible endpoint without the app. Loads the
// model into one Engine and serves it until SIGINT/SIGTERM. Prints the base
// URL on stdout once listening ("listening on http://127.0.0.1:8719/v1"), so
// scripts started with --port 0 can read the port chosen.
#include <QCoreApplication>
#include <QSocketNotifier>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/server/api_server.h"
#include "weir/engine.h"
#include "weir/base/error.h"

namespace {

int signalPipe[2] = {-1, -1};

void onSignal(int) {
    const char c = 1;
    [[maybe_unused]] ssize_t n = ::write(signalPipe[1], &c, 1);
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
    so.maxBodyBytes = args.intValue("--max-body-bytes", so.maxBodyBytes, 1024, 1ll << 30);
    so.modelId = QString::fromStdString(args.value("--model-id", ""));
    so.defaultMaxTokens = args.intValue("--default-max-tokens", 0, 0, 1 << 20);
    args.rejectUnknown();
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
                       "OpenAI-compatible HTTP endpoint: [--host H] [--port P (8719)] [--api-key K] "
                       "[--max-body-bytes N] [--model-id ID] [--default-max-tokens N] [--check-integrity] "
                       "and the engine flags",
                       &run};

} // namespace

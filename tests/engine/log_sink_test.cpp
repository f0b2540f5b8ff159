// The engine's logging hook (weir/log.h): an installed sink receives the
// engine's lines with their level and subsystem, an empty sink drops them,
// and replacing the sink while other threads log loses no line and delivers
// none twice.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/util/log.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"
#include "weir/engine.h"
#include "weir/log.h"
#include "weir/model_file.h"

using namespace weir;

namespace {

struct Line {
    LogLevel level;
    std::string subsystem, message;
};

// Collects lines from any thread.
struct Collector {
    std::mutex mutex;
    std::vector<Line> lines;
    LogSink sink() {
        return [this](LogLevel level, std::string_view subsystem, std::string_view message) {
            std::lock_guard<std::mutex> lock(mutex);
            lines.push_back({level, std::string(subsystem), std::string(message)});
        };
    }
    const Line* find(std::string_view subsystem, std::string_view part) {
        std::lock_guard<std::mutex> lock(mutex);
        for (const Line& l : lines)
            if (l.subsystem == subsystem && l.message.find(part) != std::string::npos) return &l;
        return nullptr;
    }
};

std::string writeModel(const weirtest::TempDir& dir) {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    const std::string path = (dir.path() / "log-test-gemma3.gguf").string();
    writeSyntheticModel(spec, path);
    return path;
}

EngineOptions smallEngine(const std::string& model) {
    EngineOptions o;
    o.modelPath = model;
    o.threads = 1;
    o.maxRunningRequests = 2;
    o.maxContext = 512;
    return o;
}

} // namespace

WEIR_TEST(LogSink, engineLoadWritesModelAndPoolLines) {
    weirtest::TempDir dir;
    const std::string model = writeModel(dir);
    Collector c;
    setLogSink(c.sink());
    {
        Engine engine(smallEngine(model));
        CHECK(engine.clearPrefixCache().ok());
    }
    setLogSink({});
    const Line* loaded = c.find("model", "loaded " + model);
    REQUIRE_MSG(loaded != nullptr, "no 'loaded' line from the model subsystem");
    CHECK(loaded->level == LogLevel::Info);
    CHECK(loaded->message.find("gemma3") != std::string::npos);
    CHECK(loaded->message.find("2 layers") != std::string::npos);
    const Line* pools = c.find("kv", "full pool ");
    REQUIRE_MSG(pools != nullptr, "no pool sizing line from the kv subsystem");
    CHECK(pools->message.find("window pool ") != std::string::npos);
    CHECK(pools->message.find("2 running at most") != std::string::npos);
    CHECK(c.find("kv", "prefix cache cleared") != nullptr);
}

WEIR_TEST(LogSink, noSinkNoLines) {
    weirtest::TempDir dir;
    const std::string model = writeModel(dir);
    Collector c;
    setLogSink(c.sink());
    setLogSink({});
    CHECK(!logEnabled());
    { Engine engine(smallEngine(model)); }
    CHECK_EQ(c.lines.size(), size_t(0));
}

WEIR_TEST(LogSink, levelNames) {
    CHECK_EQ(std::string(logLevelName(LogLevel::Debug)), std::string("debug"));
    CHECK_EQ(std::string(logLevelName(LogLevel::Info)), std::string("info"));
    CHECK_EQ(std::string(logLevelName(LogLevel::Warning)), std::string("warning"));
    CHECK_EQ(std::string(logLevelName(LogLevel::Error)), std::string("error"));
}

WEIR_TEST(LogSink, replacingTheSinkWhileThreadsLogLosesNothing) {
    Collector a, b;
    std::atomic<int> delivered{0};
    auto counting = [&delivered](Collector& c) {
        return [&delivered, sink = c.sink()](LogLevel l, std::string_view s, std::string_view m) {
            sink(l, s, m);
            ++delivered;
        };
    };
    setLogSink(counting(a));
    constexpr int kThreads = 4, kLines = 2000;
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t)
        writers.emplace_back([t] {
            for (int i = 0; i < kLines; ++i) logLine(LogLevel::Debug, "test", std::to_string(t) + ":" + std::to_string(i));
        });
    for (int swap = 0; swap < 200; ++swap) setLogSink(swap % 2 ? counting(a) : counting(b));
    for (auto& w : writers) w.join();
    setLogSink({});
    CHECK_EQ(delivered.load(), kThreads * kLines);
    CHECK_EQ(a.lines.size() + b.lines.size(), size_t(kThreads * kLines));
}

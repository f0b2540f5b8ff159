// The scheduler through the public Engine API, on a tiny random-weight Gemma 3
// (sliding window 32, one global layer) written to a temporary directory:
// batching, prefix sharing, defer, preempt, refuse, cancel, terminal events,
// stop strings, the pool floor at startup and the concurrent multi-turn
// workload scaled down (weir-cli's soak drivers, app/cli). Pool integrity is
// checked after every step.
#include "app/cli/mixed_soak.h"
#include "app/cli/soak.h"
#include "engine/api/engine_access.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cstdio>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "weir/engine.h"
#include "engine/kv/page_pool.h"
#include "engine/tokenizer/tokenizer.h"
#include "weir/base/error.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;
using weir::cli::MixedSoakOptions;
using weir::cli::MixedSoakReport;
using weir::cli::SoakOptions;
using weir::cli::SoakReport;

namespace {

// Everything one request delivered, filled on the engine thread.
struct Collected {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int32_t> tokens;
    std::vector<std::optional<TokenLogprobs>> logprobs;  // one per token event
    std::string text;
    int terminals = 0;
    int afterTerminal = 0;
    Event terminal;

    EventSink sink() {
        return [this](const Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (terminals > 0) ++afterTerminal;
            if (ev.kind == Event::Kind::Token) {
                if (ev.token >= 0) tokens.push_back(ev.token);
                logprobs.push_back(ev.logprobs);
                text += ev.text;
            } else {
                ++terminals;
                terminal = ev;
            }
            cv.notify_all();
        };
    }
    void waitTerminal() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return terminals > 0; });
    }
    void waitTokens(size_t n) {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return tokens.size() >= n || terminals > 0; });
    }
};

SamplingParams greedy() {
    SamplingParams s;
    s.temperature = 0.0f;
    return s;
}

// Ordinary vocabulary ids (past the control and byte tokens).
std::vector<int32_t> randomPrompt(std::mt19937_64& rng, int32_t n, int32_t vocab) {
    std::vector<int32_t> p{2};  // BOS
    for (int32_t i = 1; i < n; ++i) p.push_back(262 + int32_t(rng() % uint64_t(vocab - 262)));
    return p;
}

} // namespace

static weirtest::TempDir dir_;
static std::string model_;

static EngineOptions options() {
    EngineOptions o;
    o.modelPath = model_;
    o.threads = 2;
    o.maxRunningRequests = 4;
    o.prefillChunk = 64;
    o.pageSize = 16;
    o.maxContext = 1024;
    o.checkIntegrityEveryStep = true;
    return o;
}

GenerateRequest request(std::vector<int32_t> prompt, int32_t maxTokens) {
    GenerateRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling = greedy();
    r.stopAtEndOfGeneration = false;
    return r;
}

// Runs one request alone on `engine` and returns what it produced.
std::vector<int32_t> runAlone(Engine& engine, const std::vector<int32_t>& prompt, int32_t maxTokens,
                              Usage* usage = nullptr) {
    Collected c;
    engine.submit(request(prompt, maxTokens), c.sink());
    c.waitTerminal();
    if (c.terminal.kind != Event::Kind::Done) std::printf("  %s\n", c.terminal.text.c_str());
    if (usage) *usage = c.terminal.usage;
    return c.tokens;
}

static void expectClean(Engine& engine) {
    engine.clearPrefixCache();
    const CacheStatus st = engine.cacheStatus();
    for (const auto& d : st.violationDetails) std::printf("  violation: %s\n", d.c_str());
    REQUIRE_EQ(st.violations, uint64_t(0));
    REQUIRE(st.integrityChecks > 0);
    REQUIRE_EQ(st.running, 0);
    REQUIRE_EQ(st.waiting, 0);
    REQUIRE_EQ(st.full.freeTokens, st.full.capacityTokens);
    REQUIRE_EQ(st.window.freeTokens, st.window.capacityTokens);
}

WEIR_TEST_SUITE_SETUP(Scheduler) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny-gemma3.gguf");
    test::writeTinyGemma3(model_);
}

WEIR_TEST(Scheduler, batchedDecodeEqualsSequential) {
    std::mt19937_64 rng(1);
    Engine one([&] { auto o = options(); o.maxRunningRequests = 1; return o; }());
    const int32_t vocab = one.modelConfig().nVocab;
    std::vector<std::vector<int32_t>> prompts;
    for (int32_t n : {40, 75, 130, 33}) prompts.push_back(randomPrompt(rng, n, vocab));
    std::vector<std::vector<int32_t>> alone;
    for (const auto& p : prompts) alone.push_back(runAlone(one, p, 24));
    // The tiny model must not be degenerate, or equal outputs prove little.
    for (const auto& out : alone) {
        const std::set<int32_t> distinct(out.begin(), out.end());
        REQUIRE_MSG(distinct.size() >= 6, "the tiny model repeats itself");
    }
    REQUIRE(alone[0] != alone[1]);

    Engine four(options());
    std::vector<std::unique_ptr<Collected>> c;
    for (const auto& p : prompts) {
        c.push_back(std::make_unique<Collected>());
        four.submit(request(p, 24), c.back()->sink());
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
        c[i]->waitTerminal();
        REQUIRE_EQ(int(c[i]->terminal.kind), int(Event::Kind::Done));
        REQUIRE_EQ(c[i]->tokens.size(), size_t(24));
        REQUIRE_EQ(c[i]->tokens, alone[i]);
        REQUIRE_EQ(c[i]->terminal.usage.completionTokens, 24);
        REQUIRE_EQ(c[i]->terminal.usage.promptTokens, int32_t(prompts[i].size()));
    }
    expectClean(one);
    expectClean(four);
}

WEIR_TEST(Scheduler, prefixSharing) {
    auto o = options();
    o.swaTokens = 4096;  // room to keep every cached window page
    Engine engine(o);
    std::mt19937_64 rng(2);
    const std::vector<int32_t> system = randomPrompt(rng, 300, engine.modelConfig().nVocab);
    std::vector<int32_t> a = system, b = system;
    for (int i = 0; i < 20; ++i) a.push_back(300 + i);
    for (int i = 0; i < 20; ++i) b.push_back(400 + i);

    Usage first, again, other;
    const auto outA = runAlone(engine, a, 16, &first);
    const auto outAgain = runAlone(engine, a, 16, &again);
    const auto outB = runAlone(engine, b, 16, &other);
    REQUIRE_EQ(first.cachedPromptTokens, 0);
    // The whole prompt but its last token, in whole pages.
    REQUIRE_EQ(again.cachedPromptTokens, int32_t((a.size() - 1) / 16 * 16));
    REQUIRE_EQ(outAgain, outA);
    // A different conversation with the same system prompt reuses the system prompt.
    REQUIRE(other.cachedPromptTokens >= int32_t(system.size() / 16 * 16));
    REQUIRE(other.cachedPromptTokens < int32_t(b.size()));

    // The same prompt on a fresh engine (nothing cached) gives the same output.
    Engine fresh(o);
    REQUIRE_EQ(runAlone(fresh, b, 16), outB);
    REQUIRE(engine.cacheStatus().prefixHitTokens > 0);
    expectClean(engine);
}

WEIR_TEST(Scheduler, deferUnderPressure) {
    // A full pool of 16 pages cannot hold two 150-token prompts growing
    // to 190: admission keeps the pages the older one still needs, so the
    // newer waits (deferred) instead of starting, outgrowing the pool and
    // being preempted; both produce exactly what they produce alone.
    auto o = options();
    o.maxContext = 256;
    o.kvReserveTokens = 256;
    Engine engine(o);
    std::mt19937_64 rng(3);
    const auto pa = randomPrompt(rng, 150, engine.modelConfig().nVocab);
    const auto pb = randomPrompt(rng, 150, engine.modelConfig().nVocab);
    Collected a, b;
    engine.submit(request(pa, 40), a.sink());
    engine.submit(request(pb, 40), b.sink());
    a.waitTerminal();
    b.waitTerminal();
    REQUIRE_EQ(int(a.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(int(b.terminal.kind), int(Event::Kind::Done));
    const CacheStatus st = engine.cacheStatus();
    REQUIRE_MSG(st.deferrals >= 1, "the newer request should have waited for pages");
    REQUIRE_EQ(st.preemptions, uint64_t(0));

    auto big = options();
    Engine roomy(big);
    REQUIRE_EQ(a.tokens, runAlone(roomy, pa, 40));
    REQUIRE_EQ(b.tokens, runAlone(roomy, pb, 40));
    expectClean(engine);
}

WEIR_TEST(Scheduler, preemptMidDecodeKeepsOutput) {
    // Two 100-token prompts fit together, but growing to 180 tokens each
    // they do not: the newer is preempted while decoding, recomputed later
    // and continues exactly as it would have alone, sampler state included.
    auto o = options();
    o.maxContext = 256;
    o.kvReserveTokens = 256;
    Engine engine(o);
    std::mt19937_64 rng(11);
    const auto pa = randomPrompt(rng, 100, engine.modelConfig().nVocab);
    const auto pb = randomPrompt(rng, 100, engine.modelConfig().nVocab);
    auto sampled = [&](const std::vector<int32_t>& p, uint64_t seed) {
        GenerateRequest r = request(p, 80);
        r.sampling.temperature = 1.0f;
        r.sampling.topK = 0;
        r.sampling.topP = 1.0f;
        r.sampling.minP = 0.0f;
        r.sampling.seed = seed;
        return r;
    };
    Collected a, b;
    engine.submit(sampled(pa, 21), a.sink());
    engine.submit(sampled(pb, 22), b.sink());
    a.waitTerminal();
    b.waitTerminal();
    REQUIRE_EQ(int(a.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(int(b.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(b.tokens.size(), size_t(80));
    REQUIRE(engine.cacheStatus().preemptions >= 1);

    Engine roomy(options());
    Collected soloA, soloB;
    roomy.submit(sampled(pa, 21), soloA.sink());
    soloA.waitTerminal();
    roomy.submit(sampled(pb, 22), soloB.sink());
    soloB.waitTerminal();
    REQUIRE_EQ(a.tokens, soloA.tokens);
    REQUIRE_EQ(b.tokens, soloB.tokens);
    expectClean(engine);
}

WEIR_TEST(Scheduler, refuseWhatCanNeverFit) {
    auto o = options();
    o.maxContext = 256;
    o.kvReserveTokens = 256;
    Engine engine(o);
    std::mt19937_64 rng(4);
    Collected big, small;
    engine.submit(request(randomPrompt(rng, 300, engine.modelConfig().nVocab), 8), big.sink());
    engine.submit(request(randomPrompt(rng, 50, engine.modelConfig().nVocab), 8), small.sink());
    big.waitTerminal();
    small.waitTerminal();
    REQUIRE_EQ(int(big.terminal.kind), int(Event::Kind::Error));
    REQUIRE_MSG(big.terminal.text.find("full KV pool") != std::string::npos, big.terminal.text.c_str());
    REQUIRE(big.terminal.text.find("300") != std::string::npos);
    REQUIRE_EQ(int(small.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(small.tokens.size(), size_t(8));
    REQUIRE(engine.cacheStatus().refusals >= 1);

    // A token id outside the vocabulary fails that request only.
    Collected bad, good;
    auto prompt = randomPrompt(rng, 30, engine.modelConfig().nVocab);
    prompt[5] = engine.modelConfig().nVocab + 3;
    engine.submit(request(prompt, 4), bad.sink());
    engine.submit(request(randomPrompt(rng, 30, engine.modelConfig().nVocab), 4), good.sink());
    bad.waitTerminal();
    good.waitTerminal();
    REQUIRE_EQ(int(bad.terminal.kind), int(Event::Kind::Error));
    REQUIRE_MSG(bad.terminal.text.find("outside the vocabulary") != std::string::npos, bad.terminal.text.c_str());
    REQUIRE_EQ(int(good.terminal.kind), int(Event::Kind::Done));
    expectClean(engine);
}

WEIR_TEST(Scheduler, windowPoolBelowFloorRefusedAtStartup) {
    int64_t floor = 0;
    {
        Engine atDefault(options());  // no ratio, no --swa-tokens: the floor itself
        const CacheStatus st = atDefault.cacheStatus();
        floor = st.window.floorTokens;
        REQUIRE(floor > 0);
        REQUIRE_EQ(st.window.capacityTokens, floor);
    }
    auto below = options();
    below.swaTokens = floor - 16;
    try {
        Engine refused(below);
        FAIL("a window pool below its floor was accepted");
    } catch (const Error& e) {
        const std::string msg = e.what();
        REQUIRE_MSG(msg.find("window KV pool too small") != std::string::npos, e.what());
        REQUIRE_MSG(msg.find(std::to_string(floor)) != std::string::npos, e.what());
        REQUIRE_MSG(msg.find("per request") != std::string::npos, e.what());
    }
    auto at = options();
    at.swaTokens = floor;
    Engine engine(at);
    std::mt19937_64 rng(5);
    std::vector<std::unique_ptr<Collected>> c;
    for (int i = 0; i < 4; ++i) {
        c.push_back(std::make_unique<Collected>());
        engine.submit(request(randomPrompt(rng, 90 + 10 * i, engine.modelConfig().nVocab), 40), c.back()->sink());
    }
    for (auto& x : c) {
        x->waitTerminal();
        REQUIRE_EQ(int(x->terminal.kind), int(Event::Kind::Done));
    }
    expectClean(engine);
}

WEIR_TEST(Scheduler, cancelFreesPagesAtOnce) {
    auto o = options();
    o.maxRunningRequests = 1;
    Engine engine(o);
    std::mt19937_64 rng(6);
    Collected running, queued;
    const uint64_t a = engine.submit(request(randomPrompt(rng, 100, engine.modelConfig().nVocab), 100000),
                                     running.sink());
    const uint64_t b = engine.submit(request(randomPrompt(rng, 50, engine.modelConfig().nVocab), 10), queued.sink());
    running.waitTokens(3);
    // The queued one never ran: cancelled while waiting.
    engine.cancel(b);
    queued.waitTerminal();
    REQUIRE_EQ(int(queued.terminal.kind), int(Event::Kind::Cancelled));
    REQUIRE(queued.tokens.empty());

    engine.cancel(a);
    running.waitTerminal();
    REQUIRE_EQ(int(running.terminal.kind), int(Event::Kind::Cancelled));
    // By the time the terminal event arrives no page is owned by a request
    // any more; what remains is only the evictable prefix cache.
    const CacheStatus st = engine.cacheStatus();
    REQUIRE_EQ(st.full.ownedTokens, int64_t(0));
    REQUIRE_EQ(st.window.ownedTokens, int64_t(0));
    REQUIRE_EQ(st.full.freeTokens + st.full.cachedTokens, st.full.capacityTokens);
    REQUIRE_EQ(st.window.freeTokens + st.window.cachedTokens, st.window.capacityTokens);
    REQUIRE_EQ(st.running, 0);
    engine.cancel(a);      // again: nothing happens
    engine.cancel(99999);  // unknown: nothing happens
    expectClean(engine);
    REQUIRE_EQ(running.terminals, 1);
    REQUIRE_EQ(running.afterTerminal, 0);
    REQUIRE_EQ(queued.terminals, 1);
}

WEIR_TEST(Scheduler, doubleFreeCaughtAtTheCall) {
    kv::IntegrityLog log;
    kv::PagePool pool(kv::PoolKind::Full, 16, 8, &log);
    std::vector<kv::PageRef> pages;
    REQUIRE_EQ(int(pool.allocate(7, 2, pages)), int(kv::KvResult::Ok));
    REQUIRE_EQ(int(pool.release(pages[0], 7)), int(kv::KvResult::Ok));
    REQUIRE_EQ(pool.freeCount(), 7);
    // The second release of the same page is refused where it happens.
    REQUIRE_EQ(int(pool.release(pages[0], 7)), int(kv::KvResult::Violation));
    REQUIRE_EQ(log.violations, uint64_t(1));
    REQUIRE_MSG(log.details.front().find("double free") != std::string::npos, log.details.front().c_str());
    REQUIRE_EQ(pool.freeCount(), 7);
    // A page listed twice in one batched free: nothing is released.
    const std::vector<kv::PageRef> twice{pages[1], pages[1]};
    REQUIRE_EQ(int(pool.releaseMany(twice, 7)), int(kv::KvResult::Violation));
    REQUIRE_EQ(pool.freeCount(), 7);
    REQUIRE_EQ(log.violations, uint64_t(2));
    REQUIRE(pool.checkCounters());
}

WEIR_TEST(Scheduler, exactlyOneTerminalEventUnderRandomCancels) {
    auto o = options();
    o.maxRunningRequests = 3;
    Engine engine(o);
    const int32_t vocab = engine.modelConfig().nVocab;
    constexpr int kRequests = 36;
    std::vector<std::unique_ptr<Collected>> c(kRequests);
    std::vector<std::atomic<uint64_t>> ids(kRequests);
    for (auto& x : c) x = std::make_unique<Collected>();
    auto client = [&](int part) {
        std::mt19937_64 rng(100 + uint64_t(part));
        for (int i = part; i < kRequests; i += 3) {
            GenerateRequest r = request(randomPrompt(rng, 10 + int32_t(rng() % 150), vocab),
                                        4 + int32_t(rng() % 40));
            r.sampling.temperature = 0.9f;
            r.sampling.seed = rng();
            Collected* col = c[size_t(i)].get();
            const int mode = int(rng() % 4);  // 0 none, 1 at once, 2 from the sink, 3 later
            EventSink inner = col->sink();
            Engine* e = &engine;
            const size_t after = 1 + rng() % 5;
            EventSink sink = [inner, mode, e, col, after](const Event& ev) {
                inner(ev);
                if (mode == 2 && ev.kind == Event::Kind::Token && col->tokens.size() == after) e->cancel(ev.request);
            };
            ids[size_t(i)] = engine.submit(std::move(r), sink);
            if (mode == 1) engine.cancel(ids[size_t(i)]);
            if (mode == 3) {
                col->waitTokens(after);
                engine.cancel(ids[size_t(i)]);
                engine.cancel(ids[size_t(i)]);
            }
        }
    };
    std::vector<std::thread> threads;
    for (int p = 0; p < 3; ++p) threads.emplace_back(client, p);
    for (auto& t : threads) t.join();
    for (auto& x : c) x->waitTerminal();
    engine.clearPrefixCache();  // a barrier: every event has been delivered
    int cancelled = 0, done = 0;
    for (auto& x : c) {
        std::lock_guard<std::mutex> lock(x->mutex);
        REQUIRE_EQ(x->terminals, 1);
        REQUIRE_EQ(x->afterTerminal, 0);
        REQUIRE(x->terminal.kind != Event::Kind::Error);
        cancelled += x->terminal.kind == Event::Kind::Cancelled;
        done += x->terminal.kind == Event::Kind::Done;
    }
    REQUIRE_EQ(cancelled + done, kRequests);
    REQUIRE(cancelled > 0);
    expectClean(engine);
}

WEIR_TEST(Scheduler, throwingSinkDoesNotStopTheEngine) {
    Engine engine(options());
    std::mt19937_64 rng(7);
    std::atomic<int> events{0}, terminals{0};
    engine.submit(request(randomPrompt(rng, 40, engine.modelConfig().nVocab), 6), [&](const Event& ev) {
        ++events;
        if (ev.isTerminal()) ++terminals;
        throw std::runtime_error("client bug");
    });
    Collected after;
    engine.submit(request(randomPrompt(rng, 40, engine.modelConfig().nVocab), 6), after.sink());
    after.waitTerminal();
    engine.clearPrefixCache();
    REQUIRE_EQ(int(after.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(terminals.load(), 1);
    REQUIRE_EQ(events.load(), 7);
    expectClean(engine);
}

WEIR_TEST(Scheduler, stopStringEndsTheOutput) {
    Engine engine(options());
    std::mt19937_64 rng(8);
    const auto prompt = engine.tokenize("the operator shall record every change", true);
    REQUIRE(prompt.size() > 3);
    Collected plain;
    engine.submit(request(prompt, 30), plain.sink());
    plain.waitTerminal();
    REQUIRE_EQ(int(plain.terminal.finish), int(FinishReason::Length));
    const std::string text = plain.text;
    if (text.size() < 12) SKIP("the tiny model produced too little text for a stop string");
    // A stop string from the middle of the greedy output.
    const std::string stop = text.substr(text.size() / 2, 3);
    const size_t at = text.find(stop);
    GenerateRequest r = request(prompt, 30);
    r.stop = {stop};
    Collected stopped;
    engine.submit(std::move(r), stopped.sink());
    stopped.waitTerminal();
    REQUIRE_EQ(int(stopped.terminal.kind), int(Event::Kind::Done));
    REQUIRE_EQ(int(stopped.terminal.finish), int(FinishReason::StopString));
    REQUIRE_EQ(stopped.text, text.substr(0, at));
    expectClean(engine);
}

WEIR_TEST(Scheduler, chatPromptHasExactlyOneBos) {
    Engine engine(options());
    const std::vector<Message> messages = {{"system", "You are a careful assistant", {}},
                                               {"user", "hello world", {}}};
    const std::string rendered = engine.renderChat(messages, true);
    REQUIRE(rendered.find("<start_of_turn>") != std::string::npos);
    const auto ids = engine.tokenizeChat(messages);
    const int32_t bos = weir::EngineAccess::tokenizer(engine).bos();
    REQUIRE(!ids.empty());
    REQUIRE_EQ(ids.front(), bos);
    REQUIRE_EQ(std::count(ids.begin(), ids.end(), bos), std::ptrdiff_t(1));
}

WEIR_TEST(Scheduler, resizePoolsLive) {
    std::mt19937_64 rng(10);
    Engine reference(options());
    const int32_t vocab = reference.modelConfig().nVocab;
    std::vector<std::vector<int32_t>> prompts, alone;
    for (int32_t n : {60, 90, 120, 45}) prompts.push_back(randomPrompt(rng, n, vocab));
    for (const auto& p : prompts) alone.push_back(runAlone(reference, p, 40));

    Engine engine(options());
    const CacheStatus st = engine.cacheStatus();
    const int64_t floor = st.window.floorTokens;
    const MaintenanceResult grown = engine.resizePool(PoolKind::Window, floor * 3);
    REQUIRE_MSG(grown.ok(), grown.message.c_str());
    REQUIRE_EQ(grown.message, std::string());
    REQUIRE_EQ(engine.cacheStatus().window.capacityTokens, floor * 3);
    const MaintenanceResult refused = engine.resizePool(PoolKind::Window, floor - 16);
    REQUIRE_EQ(int(refused.code), int(MaintenanceCode::Refused));
    REQUIRE_MSG(refused.message.find("floor") != std::string::npos, refused.message.c_str());
    REQUIRE_EQ(engine.cacheStatus().window.capacityTokens, floor * 3);

    // Grow and shrink both pools while four requests run: pages move,
    // outputs must not change.
    std::vector<std::unique_ptr<Collected>> c;
    for (const auto& p : prompts) {
        c.push_back(std::make_unique<Collected>());
        engine.submit(request(p, 40), c.back()->sink());
    }
    for (int round = 0; round < 6; ++round) {
        engine.resizePool(PoolKind::Window, round % 2 ? floor : floor * 2);
        engine.resizePool(PoolKind::Full, round % 2 ? st.full.capacityTokens : st.full.capacityTokens / 2);
        c[size_t(round % 4)]->waitTokens(size_t(5 * round));
    }
    for (size_t i = 0; i < c.size(); ++i) {
        c[i]->waitTerminal();
        REQUIRE_EQ(int(c[i]->terminal.kind), int(Event::Kind::Done));
        REQUIRE_EQ(c[i]->tokens, alone[i]);
    }
    expectClean(engine);
}

WEIR_TEST(Scheduler, concurrentConversationsWithWindowPoolAtFloor) {
    // The failure scenario, scaled down: 4 conversations sharing a long
    // system prompt, tool-result turns, max running 4, the window pool at
    // its floor, integrity checked after every step.
    auto o = options();
    o.maxContext = 2048;
    Engine engine(o);
    const CacheStatus start = engine.cacheStatus();
    REQUIRE_EQ(start.window.capacityTokens, start.window.floorTokens);
    SoakOptions so;
    so.conversations = 4;
    so.systemPromptTokens = 600;  // ~19 windows of the tiny model
    so.requests = 40;
    so.maxTokens = 12;
    so.turnsPerConversation = 5;
    so.toolEvery = 2;
    const SoakReport r = weir::cli::runSoak(engine, so);
    std::printf("  %s\n", r.toJson().c_str());
    REQUIRE_EQ(r.requests, uint64_t(40));
    REQUIRE_EQ(r.badTerminations, uint64_t(0));
    REQUIRE_EQ(r.failed, uint64_t(0));
    REQUIRE_EQ(r.done, uint64_t(40));
    REQUIRE_EQ(r.violations, uint64_t(0));
    REQUIRE(r.integrityChecks > 40);
    REQUIRE_EQ(r.leakedFullPages, int64_t(0));
    REQUIRE_EQ(r.leakedWindowPages, int64_t(0));
    REQUIRE(r.systemPromptTokens >= 600);
    // Later turns and later conversations reuse cached prefixes even with
    // the window pool at its floor.
    REQUIRE(r.cachedPromptTokens > r.promptTokens / 2);
    expectClean(engine);
}

WEIR_TEST(Scheduler, concurrentConversationsWithCancels) {
    auto o = options();
    o.maxContext = 2048;
    Engine engine(o);
    SoakOptions so;
    so.conversations = 4;
    so.systemPromptTokens = 300;
    so.requests = 40;
    so.maxTokens = 16;
    so.cancelFraction = 0.4;
    so.seed = 9;
    const SoakReport r = weir::cli::runSoak(engine, so);
    std::printf("  %s\n", r.toJson().c_str());
    REQUIRE_EQ(r.requests, uint64_t(40));
    REQUIRE_EQ(r.badTerminations, uint64_t(0));
    REQUIRE_EQ(r.failed, uint64_t(0));
    REQUIRE_EQ(r.done + r.cancelled, uint64_t(40));
    REQUIRE_EQ(r.violations, uint64_t(0));
    REQUIRE_EQ(r.leakedFullPages, int64_t(0));
    REQUIRE_EQ(r.leakedWindowPages, int64_t(0));
}

WEIR_TEST(Scheduler, mixedLoadAtTheContextLimit) {
    // Issue 16's mixed load scaled down (the twin of `weir-cli soak
    // --mixed`): page size 1, a full pool of exactly one context, the
    // window pool at its floor, 4 running, chunk 64, 8 streaming clients,
    // near-limit prompts, shared prefixes, cancels and disconnects.
    auto o = options();
    o.pageSize = 1;
    o.maxContext = 256;
    o.kvReserveTokens = 256;
    o.maxWaiting = 8;
    Engine engine(o);
    MixedSoakOptions mo;
    mo.clients = 8;
    mo.requests = 160;
    mo.maxTokens = 20;
    mo.cancelFraction = 0.15;
    mo.disconnectFraction = 0.1;
    mo.seed = 16;
    const MixedSoakReport r = weir::cli::runMixedSoak(engine, mo);
    std::printf("  %s\n", r.toJson().c_str());
    for (const auto& d : r.details) std::printf("  %s\n", d.c_str());
    REQUIRE_EQ(r.context, 256);
    REQUIRE_EQ(r.requests, uint64_t(160));
    REQUIRE_EQ(r.wrongRefusals, uint64_t(0));
    REQUIRE_EQ(r.wrongLengths, uint64_t(0));
    REQUIRE_EQ(r.hung, uint64_t(0));
    REQUIRE_EQ(r.badTerminations, uint64_t(0));
    REQUIRE_EQ(r.violations, uint64_t(0));
    REQUIRE_EQ(r.leakedFullPages, int64_t(0));
    REQUIRE_EQ(r.leakedWindowPages, int64_t(0));
    REQUIRE(r.integrityChecks > 160);
    // The workload did what it is for: requests stopped by the context, cancels.
    REQUIRE(r.doneAtContext > 0);
    REQUIRE(r.cancelled > 0);
    REQUIRE_EQ(r.done + r.cancelled + r.errors, uint64_t(160));
    REQUIRE_EQ(r.errors, r.refusedTooLong + r.queueFull);
}

// Log probabilities ride on the token events when asked for: greedy picks the
// most likely token, so the chosen one is the first alternative; asking for
// them changes nothing in the output; a logit bias that bans the greedy
// choice makes the next best come instead, while the log probabilities (of the
// raw logits) still show the banned token on top.
WEIR_TEST(Scheduler, logprobsAndLogitBias) {
    Engine engine(options());
    std::mt19937_64 rng(5);
    const std::vector<int32_t> prompt = randomPrompt(rng, 30, engine.modelConfig().nVocab);
    const std::vector<int32_t> plain = runAlone(engine, prompt, 6);

    GenerateRequest r = request(prompt, 6);
    r.topLogprobs = 3;
    Collected c;
    engine.submit(r, c.sink());
    c.waitTerminal();
    REQUIRE_EQ(c.tokens, plain);
    REQUIRE_EQ(c.logprobs.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i) {
        REQUIRE(c.logprobs[i].has_value());
        const TokenLogprobs& lp = *c.logprobs[i];
        REQUIRE_EQ(lp.chosen.token, plain[i]);
        REQUIRE_EQ(lp.top.size(), size_t(3));
        REQUIRE_EQ(lp.top[0].token, plain[i]);
        REQUIRE_EQ(lp.top[0].logprob, lp.chosen.logprob);
        REQUIRE(lp.chosen.logprob <= 0.0f);
        REQUIRE(lp.top[1].logprob <= lp.top[0].logprob && lp.top[2].logprob <= lp.top[1].logprob);
        REQUIRE(!lp.chosen.bytes.empty());
    }
    Collected none;
    engine.submit(request(prompt, 2), none.sink());
    none.waitTerminal();
    for (const auto& lp : none.logprobs) REQUIRE(!lp.has_value());

    GenerateRequest banned = request(prompt, 1);
    banned.topLogprobs = 2;
    banned.sampling.logitBias = {{plain[0], -100.0f}};
    Collected b;
    engine.submit(banned, b.sink());
    b.waitTerminal();
    REQUIRE_EQ(b.tokens.size(), size_t(1));
    REQUIRE_EQ(b.tokens[0], c.logprobs[0]->top[1].token);
    REQUIRE_EQ(b.logprobs[0]->top[0].token, plain[0]);
    expectClean(engine);
}

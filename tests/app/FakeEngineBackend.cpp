#include "FakeEngineBackend.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "weir/base/error.h"

namespace weir::desktop::testing {

std::string tagText(const ClientTag& tag) { return std::to_string(tag.kind) + ":" + std::to_string(tag.id); }

std::string fakeReplyFor(const std::string& lastUser) {
    std::string topic = lastUser.substr(0, 40);
    return "You asked about " + topic + ". Here is a **short** answer with a list:\n\n"
           "- first point\n- second point\n\n"
           "```python\ndef answer(x):\n    return x * 2  # doubled\n```\n\n"
           "That is all.";
}

void addFakeDrafts(const std::vector<std::string>& words, size_t count, Usage* usage) {
    constexpr size_t kDraftMax = 4;
    count = std::min(count, words.size());
    size_t i = 1;  // the word to write next
    while (i < count) {
        size_t earlier = i - 1;
        while (earlier > 0 && words[earlier - 1] != words[i - 1]) --earlier;
        if (earlier == 0) {  // no earlier occurrence: a plain step
            ++i;
            continue;
        }
        const size_t drafted = std::min(kDraftMax, i - earlier);  // only words already written
        size_t kept = 0;
        while (kept < drafted && i + kept < count && words[earlier + kept] == words[i + kept]) ++kept;
        usage->draftTokens += int32_t(drafted);
        usage->acceptedDraftTokens += int32_t(kept);
        i += kept + 1;  // the kept drafts and the step's own token
    }
}

namespace {

// Words with their trailing whitespace, so joining them gives the text back.
std::vector<std::string> splitWords(const std::string& text) {
    std::vector<std::string> out;
    std::string current;
    for (char c : text) {
        current += c;
        if (c == ' ' || c == '\n') {
            out.push_back(current);
            current.clear();
        }
    }
    if (!current.empty()) out.push_back(current);
    return out;
}

} // namespace

FakeEngineBackend::FakeEngineBackend(const EngineOptions& options, FakeEngineConfig config)
    : options_(options), fake_(std::move(config)) {
    if (fake_.loadDelayMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(fake_.loadDelayMs));
    if (!fake_.failLoad.empty()) throw Error(fake_.failLoad);
    config_.architecture = "gemma3";
    config_.name = "Fake Gemma";
    config_.nLayer = 18;
    config_.nEmbd = 640;
    config_.nHead = 4;
    config_.nHeadKv = 1;
    config_.headDimK = config_.headDimV = 256;
    config_.nVocab = 262144;
    config_.nCtxTrain = 32768;
    config_.slidingWindow = 512;
    config_.parameterCount = 268000000;
    config_.quantization = "Q4_K_M";
    for (int i = 0; i < config_.nLayer; ++i) config_.layerSlides.push_back((i + 1) % 6 != 0);
    thread_ = std::thread([this] { run(); });
}

FakeEngineBackend::~FakeEngineBackend() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

EngineFactory FakeEngineBackend::factory(FakeEngineConfig config) {
    return [config](const EngineOptions& options) -> std::unique_ptr<EngineBackend> {
        return std::make_unique<FakeEngineBackend>(options, config);
    };
}

std::vector<int32_t> FakeEngineBackend::tokenizeChat(const std::vector<Message>& messages) const {
    // One token per word plus two for each turn's framing.
    if (fake_.record) {
        std::lock_guard lock(fake_.record->mutex);
        fake_.record->chats.push_back(messages);
        fake_.record->continuations.push_back(false);
    }
    std::vector<int32_t> out;
    for (const Message& m : messages)
        for (size_t i = 0; i < splitWords(m.content).size() + 2; ++i) out.push_back(int32_t(i));
    return out;
}

std::vector<int32_t> FakeEngineBackend::tokenizeChatContinuation(const std::vector<Message>& messages) const {
    if (messages.empty() || messages.back().role != "assistant" || messages.back().content.empty())
        throw Error("nothing to continue");
    if (fake_.record) {
        std::lock_guard lock(fake_.record->mutex);
        fake_.record->chats.push_back(messages);
        fake_.record->continuations.push_back(true);
    }
    // As tokenizeChat, without the end-of-turn token of the open last message.
    std::vector<int32_t> out;
    for (const Message& m : messages)
        for (size_t i = 0; i < splitWords(m.content).size() + 2; ++i) out.push_back(int32_t(i));
    out.pop_back();
    return out;
}

PreparedChat FakeEngineBackend::prepareChat(const ChatPromptInput& input) const {
    if (fake_.record) {
        std::lock_guard lock(fake_.record->mutex);
        fake_.record->toolChats.push_back(input);
    }
    PreparedChat out;
    for (size_t i = 0; i < splitWords(input.messagesJson).size(); ++i) out.prompt.push_back(int32_t(i));
    out.stop = {"<end_of_turn>"};
    out.toolsActive = !input.toolsJson.empty() && input.toolsJson != "[]";
    return out;
}

uint64_t FakeEngineBackend::submit(GenerateRequest request, EventSink sink) {
    if (fake_.record) {
        std::lock_guard lock(fake_.record->mutex);
        fake_.record->requests.push_back(request);
    }
    std::lock_guard lock(mutex_);
    Request r;
    r.id = nextId_++;
    // The reply depends only on the client label and prompt length, which the
    // tests control; that keeps it deterministic.
    std::string reply = fakeReplyFor(tagText(request.tag) + " (" + std::to_string(request.prompt.size()) + " tokens)");
    if (fake_.endless) {
        std::string longer;
        for (int i = 0; i < 200; ++i) longer += "word" + std::to_string(i) + " ";
        reply = longer;
    }
    if (fake_.script) {
        std::lock_guard scriptLock(fake_.script->mutex);
        if (!fake_.script->replies.empty()) {
            reply = fake_.script->replies.front();
            fake_.script->replies.pop_front();
        }
    }
    r.words = splitWords(reply);
    r.request = std::move(request);
    r.sink = std::move(sink);
    requests_.push_back(std::move(r));
    wake_.notify_all();
    return requests_.back().id;
}

void FakeEngineBackend::recordUsage(const Usage& usage) {
    if (!fake_.record) return;
    std::lock_guard lock(fake_.record->mutex);
    fake_.record->usages.push_back(usage);
}

void FakeEngineBackend::cancel(uint64_t id) {
    std::lock_guard lock(mutex_);
    for (Request& r : requests_)
        if (r.id == id) r.cancelled = true;
    wake_.notify_all();
}

void FakeEngineBackend::run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
        if (requests_.empty()) {
            wake_.wait(lock);
            continue;
        }
        // One "forward pass": every running request gets a token.
        std::vector<std::pair<EventSink, Event>> events;
        int running = 0;
        for (auto it = requests_.begin(); it != requests_.end();) {
            Request& r = *it;
            Event e;
            e.request = r.id;
            // Every terminal event carries usage, as the real scheduler's do.
            e.usage.promptTokens = int32_t(r.request.prompt.size());
            e.usage.completionTokens = int32_t(r.next);
            if (r.cancelled) {
                e.kind = Event::Kind::Cancelled;
                addFakeDrafts(r.words, r.next, &e.usage);
                recordUsage(e.usage);
                events.emplace_back(r.sink, e);
                it = requests_.erase(it);
                continue;
            }
            if (running >= options_.maxRunningRequests) {
                if (!r.admitted) ++deferrals_;
                ++it;
                continue;
            }
            ++running;
            if (!r.admitted) {
                r.admitted = true;
                prefixHits_ += r.request.prompt.size() / 2;
                if (fake_.refuseTagKind != 0 && r.request.tag.kind == fake_.refuseTagKind &&
                    (fake_.refuseTagId == 0 || r.request.tag.id == fake_.refuseTagId)) {
                    e.kind = Event::Kind::Error;
                    e.text = "request refused: it can never fit in the KV pools";
                    events.emplace_back(r.sink, e);
                    it = requests_.erase(it);
                    continue;
                }
            }
            const bool atEnd = r.next >= r.words.size() || int(r.next) >= r.request.maxTokens;
            if (atEnd && fake_.endless) r.next = 0;
            if (atEnd && !fake_.endless) {
                e.kind = Event::Kind::Done;
                e.usage.promptTokens = int32_t(r.request.prompt.size());
                e.usage.completionTokens = int32_t(r.next);
                e.usage.cachedPromptTokens = int32_t(r.request.prompt.size() / 2);
                e.usage.timeToFirstTokenMs = 12.5;
                e.usage.decodeTokensPerSecond = 250.0;
                addFakeDrafts(r.words, r.next, &e.usage);
                recordUsage(e.usage);
                e.finish = int(r.next) >= r.request.maxTokens ? FinishReason::Length : FinishReason::Stop;
                events.emplace_back(r.sink, e);
                it = requests_.erase(it);
                continue;
            }
            e.kind = Event::Kind::Token;
            e.token = int32_t(r.next);
            e.text = r.words[r.next++];
            events.emplace_back(r.sink, e);
            ++it;
        }
        // Sinks run without the lock, like the real engine's callbacks.
        lock.unlock();
        for (auto& [sink, e] : events) sink(e);
        std::this_thread::sleep_for(std::chrono::milliseconds(fake_.tokenIntervalMs));
        lock.lock();
    }
}

void FakeEngineBackend::clearPrefixCache() {
    std::lock_guard lock(mutex_);
    cacheCleared_ = true;
}

CacheStatus FakeEngineBackend::cacheStatus() const {
    std::lock_guard lock(mutex_);
    CacheStatus s;
    s.full.kind = PoolKind::Full;
    s.window.kind = PoolKind::Window;
    s.full.capacityTokens = options_.kvReserveTokens > 0 ? options_.kvReserveTokens : 32768;
    s.window.capacityTokens = options_.swaTokens > 0 ? options_.swaTokens : 8192;
    s.window.floorTokens = 4 * (512 + 16 + 1 + 16) + 2 * options_.prefillChunk + 16;
    s.full.bytesPerToken = 3 * 2 * 256 * 2;
    s.window.bytesPerToken = 15 * 2 * 256 * 2;
    s.full.totalBytes = s.full.capacityTokens * s.full.bytesPerToken;
    s.window.totalBytes = s.window.capacityTokens * s.window.bytesPerToken;
    int running = 0, waiting = 0;
    for (const Request& r : requests_) {
        RequestStatus rs;
        rs.id = r.id;
        rs.tag = r.request.tag;
        rs.promptTokens = int32_t(r.request.prompt.size());
        rs.generatedTokens = int32_t(r.next);
        if (r.admitted) {
            ++running;
            rs.state = RequestState::Decode;
            rs.fullTokens = rs.promptTokens + rs.generatedTokens;
            rs.windowTokens = std::min<int64_t>(rs.fullTokens, 512 + 16);
            rs.prefixHitTokens = rs.promptTokens / 2;
            s.full.ownedTokens += rs.fullTokens;
            s.window.ownedTokens += rs.windowTokens;
        } else {
            ++waiting;
            rs.state = RequestState::Waiting;
        }
        s.requests.push_back(rs);
    }
    const int64_t cached = cacheCleared_ ? 0 : 64;
    s.full.cachedTokens = std::min<int64_t>(s.full.capacityTokens - s.full.ownedTokens, cached);
    s.window.cachedTokens = std::min<int64_t>(s.window.capacityTokens - s.window.ownedTokens, cached);
    s.full.freeTokens = s.full.capacityTokens - s.full.ownedTokens - s.full.cachedTokens;
    s.window.freeTokens = s.window.capacityTokens - s.window.ownedTokens - s.window.cachedTokens;
    s.running = running;
    s.waiting = waiting;
    s.deferrals = deferrals_;
    s.prefixHitTokens = prefixHits_;
    s.integrityChecks = nextId_ - 1;
    return s;
}

} // namespace weir::desktop::testing

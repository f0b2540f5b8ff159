// Why a request failed, as Event::error tells a client (the HTTP server maps
// it to 503, 400 or 500): a full wait queue, a prompt that can never fit, a
// request without room to generate; and GenerateRequest::showSpecialTokens,
// which puts control tokens' text into the deltas so stop strings see them.
#include <QTemporaryDir>
#include <QtTest>

#include <condition_variable>
#include <mutex>

#include "engine/api/engine_access.h"
#include "weir/engine.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/stop_strings.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;

namespace {

struct Terminal {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    Event event;
    std::string text;

    EventSink sink() {
        return [this](const Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (ev.kind == Event::Kind::Token) {
                text += ev.text;
                return;
            }
            event = ev;
            done = true;
            cv.notify_all();
        };
    }
    Event wait() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return done; });
        return event;
    }
};

}  // namespace

class ErrorCodesTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;

    EngineOptions options() const {
        EngineOptions o;
        o.modelPath = model_;
        o.threads = 2;
        o.maxRunningRequests = 2;
        o.maxContext = 256;
        o.checkIntegrityEveryStep = true;
        return o;
    }

    static GenerateRequest request(std::vector<int32_t> prompt, int32_t maxTokens) {
        GenerateRequest r;
        r.prompt = std::move(prompt);
        r.maxTokens = maxTokens;
        r.sampling.temperature = 0;
        r.stopAtEndOfGeneration = false;
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny.gguf").toStdString();
        test::writeTinyGemma3(model_);
    }

    void queueFull() {
        EngineOptions o = options();
        o.maxWaiting = 0;
        Engine engine(o);
        Terminal t;
        engine.submit(request({2, 300, 301}, 4), t.sink());
        const Event ev = t.wait();
        QCOMPARE(ev.kind, Event::Kind::Error);
        QCOMPARE(ev.error, ErrorCode::QueueFull);
        QVERIFY(ev.text.find("wait queue") != std::string::npos);
    }

    void tooLongAndBadRequest() {
        Engine engine(options());
        Terminal longPrompt, empty, noTokens, outOfVocabulary, fine;
        engine.submit(request(std::vector<int32_t>(400, 300), 4), longPrompt.sink());
        engine.submit(request({}, 4), empty.sink());
        engine.submit(request({2, 300}, 0), noTokens.sink());
        engine.submit(request({2, weir::EngineAccess::tokenizer(engine).vocabSize() + 5}, 4), outOfVocabulary.sink());
        engine.submit(request({2, 300, 301}, 3), fine.sink());
        QCOMPARE(longPrompt.wait().error, ErrorCode::TooLong);
        QCOMPARE(empty.wait().error, ErrorCode::BadRequest);
        QCOMPARE(noTokens.wait().error, ErrorCode::BadRequest);
        QCOMPARE(outOfVocabulary.wait().error, ErrorCode::BadRequest);
        const Event ok = fine.wait();
        QCOMPARE(ok.kind, Event::Kind::Done);
        QCOMPARE(ok.error, ErrorCode::None);
    }

    // showSpecialTokens: the text deltas a request emits come from its
    // detokenizer; with the flag it shows control tokens (so stop strings
    // like "<start_function_response>" can match), without it hides them.
    void specialTokensInText() {
        Engine engine(options());
        const Tokenizer& tok = weir::EngineAccess::tokenizer(engine);
        const int32_t sot = tok.find("<start_of_turn>");
        QVERIFY(sot >= 0 && tok.isControl(sot));
        const int32_t word = tok.find("\xE2\x96\x81hello");
        QVERIFY(word >= 0);
        for (bool show : {true, false}) {
            GenerateRequest r = request({2, 300}, 4);
            r.showSpecialTokens = show;
            ActiveRequest a(1, r, {}, &tok);
            QVERIFY(a.detokenizer);
            const std::string text = a.detokenizer->push(word) + a.detokenizer->push(sot);
            QCOMPARE(QByteArray::fromStdString(text), show ? QByteArray(" hello<start_of_turn>") : QByteArray(" hello"));
            // The stop-string matcher sees exactly that text.
            StopStringMatcher stops({"<start_of_turn>"});
            QCOMPARE(stops.push(text).stopped, show);
        }
    }
};

QTEST_GUILESS_MAIN(ErrorCodesTest)
#include "error_codes_test.moc"

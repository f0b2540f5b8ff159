// The HTTP answer to an Engine maintenance call: the status follows the
// result's code and never its message, and results a real engine gives
// (a resize below the floor, a resize as asked, a cache clear) map as the
// endpoint documents them.
#include <QtTest>

#include <QTemporaryDir>

#include "app/server/maintenance_answer.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "weir/engine.h"

using weir::MaintenanceCode;
using weir::MaintenanceResult;
using weir::server::httpStatusFor;
using weir::server::maintenanceError;

class MaintenanceAnswerTest : public QObject {
    Q_OBJECT

private slots:
    void statusOfEveryCode_data() {
        QTest::addColumn<int>("code");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("errorCode");
        QTest::addColumn<QString>("errorType");
        QTest::newRow("clamped") << int(MaintenanceCode::Clamped) << 409 << "clamped" << "invalid_request_error";
        QTest::newRow("refused") << int(MaintenanceCode::Refused) << 400 << "refused" << "invalid_request_error";
        QTest::newRow("shutting down") << int(MaintenanceCode::ShuttingDown) << 503 << "shutting_down" << "server_error";
        QTest::newRow("failed") << int(MaintenanceCode::Failed) << 500 << "failed" << "server_error";
    }
    void statusOfEveryCode() {
        QFETCH(int, code);
        QFETCH(int, status);
        QFETCH(QString, errorCode);
        QFETCH(QString, errorType);
        const auto c = MaintenanceCode(code);
        QCOMPARE(httpStatusFor(c), status);
        const weir::server::ApiError e = maintenanceError(MaintenanceResult::because(c, "what happened"));
        QCOMPARE(e.status, status);
        QCOMPARE(e.code, errorCode);
        QCOMPARE(e.type, errorType);
        QCOMPARE(e.message, QStringLiteral("what happened"));
    }

    void okIs200() { QCOMPARE(httpStatusFor(MaintenanceCode::Ok), 200); }

    // A message that reads like another outcome changes nothing: the old
    // contract (an empty string meant success) is gone with its text matching.
    void messageTextNeverDecides() {
        QCOMPARE(maintenanceError(MaintenanceResult::because(MaintenanceCode::Refused,
                                                             "the engine has shut down; failed"))
                     .status,
                 400);
        QCOMPARE(maintenanceError(MaintenanceResult::because(MaintenanceCode::Failed, "")).status, 500);
        QCOMPARE(maintenanceError(MaintenanceResult::because(MaintenanceCode::ShuttingDown, "below its floor")).status,
                 503);
    }

    // What a real engine answers, mapped: grow the window pool (done), shrink
    // it below its floor (refused, nothing changed), clear the cache (done).
    void realEngineResults() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string model = dir.filePath("tiny-gemma3.gguf").toStdString();
        weir::test::writeTinyGemma3(model);
        weir::EngineOptions o;
        o.modelPath = model;
        o.threads = 1;
        weir::Engine engine(o);
        const int64_t floor = engine.cacheStatus().window.floorTokens;
        QVERIFY(floor > 0);

        const MaintenanceResult grown = engine.resizePool(weir::PoolKind::Window, floor * 2);
        QVERIFY2(grown.ok(), grown.message.c_str());
        QCOMPARE(httpStatusFor(grown.code), 200);

        const MaintenanceResult refused = engine.resizePool(weir::PoolKind::Window, floor - 1);
        QCOMPARE(int(refused.code), int(MaintenanceCode::Refused));
        QVERIFY(!refused.message.empty());
        const weir::server::ApiError e = maintenanceError(refused);
        QCOMPARE(e.status, 400);
        QCOMPARE(e.message, QString::fromStdString(refused.message));
        QCOMPARE(engine.cacheStatus().window.capacityTokens, floor * 2);

        const MaintenanceResult cleared = engine.clearPrefixCache();
        QVERIFY2(cleared.ok(), cleared.message.c_str());
        QCOMPARE(httpStatusFor(cleared.code), 200);
    }
};

QTEST_GUILESS_MAIN(MaintenanceAnswerTest)
#include "maintenance_answer_test.moc"

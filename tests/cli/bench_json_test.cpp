// weir-cli bench as a user runs it: one JSON line with prefill and decode
// speed, the bytes a decode step reads and the machine's read bandwidth, and
// decode as a fraction of the limit those two give (consistent with each other);
// with --speculative both, each prompt's replies with speculation off and on:
// the same tokens, drafts kept no more than drafted, the rate their ratio;
// the thread pool's round trips per decode step (none with one thread), and
// one line on stderr when --threads is more than the physical cores; with
// --step-split, where a prefill pass's and a decode step's time went, each
// part inside the whole and the profiled steps making the same round trips.
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

class BenchJsonTest : public QObject {
    Q_OBJECT
private slots:
    void decodeAgainstTheBandwidthLimit() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli";
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (!QFileInfo(cli).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
        if (!QFileInfo::exists(model)) QSKIP("SKIPPED: default model not present (WEIR_MODEL)");
        QProcess p;
        p.start(cli, {"bench", "-m", model, "--pp", "16", "--tg", "4", "--threads", "1"});
        QVERIFY(p.waitForFinished(120000 * qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE")));
        QCOMPARE(p.exitCode(), 0);
        const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(lines.last(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        for (const char* key : {"prefill_tokens_per_s", "decode_tokens_per_s", "decode_bytes_per_token", "output_head_bytes",
                                "read_bandwidth_gb_per_s", "decode_limit_tokens_per_s", "decode_fraction_of_bandwidth_limit"})
            QVERIFY2(o.value(key).toDouble() > 0, key);
        const double bytes = o["decode_bytes_per_token"].toDouble(), bandwidth = o["read_bandwidth_gb_per_s"].toDouble() * 1e9;
        QVERIFY(bytes > QFileInfo(model).size() * 0.5);  // most of the file is read per token
        QVERIFY(qAbs(o["decode_limit_tokens_per_s"].toDouble() - bandwidth / bytes) < 1e-2 * bandwidth / bytes);
        const double fraction = o["decode_tokens_per_s"].toDouble() / o["decode_limit_tokens_per_s"].toDouble();
        QVERIFY(qAbs(o["decode_fraction_of_bandwidth_limit"].toDouble() - fraction) < 1e-2 * fraction + 1e-6);
    }

    void speculativeOffAndOn() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli";
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (!QFileInfo(cli).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
        if (!QFileInfo::exists(model)) QSKIP("SKIPPED: default model not present (WEIR_MODEL)");
        QProcess p;
        p.start(cli, {"bench", "-m", model, "--pp", "8", "--tg", "2", "--threads", "1", "--no-bandwidth",
                      "--speculative", "both", "--spec-tg", "16"});
        QVERIFY(p.waitForFinished(180000 * qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE")));
        QCOMPARE(p.exitCode(), 0);
        const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
        QJsonParseError error;
        const QJsonObject spec = QJsonDocument::fromJson(lines.last(), &error).object()["speculative"].toObject();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(spec["tokens"].toInt(), 16);
        for (const char* name : {"quoting", "plain", "plain_sampled"}) {
            const QJsonObject c = spec[name].toObject();
            QVERIFY2(c["identical"].toBool(), name);
            QVERIFY2(c["speedup"].toDouble() > 0, name);
            const QJsonObject off = c["off"].toObject(), on = c["on"].toObject();
            QCOMPARE(off["draft_tokens"].toInt(), 0);
            QVERIFY2(off["decode_tokens_per_s"].toDouble() > 0 && on["decode_tokens_per_s"].toDouble() > 0, name);
            const int drafted = on["draft_tokens"].toInt(), kept = on["accepted_draft_tokens"].toInt();
            QVERIFY2(kept >= 0 && kept <= drafted, name);
            QVERIFY2(qAbs(on["acceptance_rate"].toDouble() - (drafted ? double(kept) / drafted : 0.0)) < 1e-3, name);
        }
        // Code written again is mostly drafts kept.
        QVERIFY(spec["quoting"].toObject()["on"].toObject()["accepted_draft_tokens"].toInt() > 0);
        // A bad mode is refused by name.
        QProcess bad;
        bad.start(cli, {"bench", "-m", model, "--speculative", "maybe"});
        QVERIFY(bad.waitForFinished(60000 * qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE")));
        QCOMPARE(bad.exitCode(), 1);
        QVERIFY(bad.readAllStandardError().contains("--speculative must be off, on or both"));
    }

    void poolRoundTripsAndPhysicalCores() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli";
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (!QFileInfo(cli).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
        if (!QFileInfo::exists(model)) QSKIP("SKIPPED: default model not present (WEIR_MODEL)");
        struct Result {
            QJsonObject json;
            QByteArray err;
        };
        auto bench = [&](int threads) {
            QProcess p;
            p.start(cli, {"bench", "-m", model, "--pp", "8", "--tg", "3", "--threads", QString::number(threads), "--no-bandwidth"});
            if (!p.waitForFinished(120000 * qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE")) || p.exitCode() != 0) return Result{};
            return Result{QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last()).object(),
                          p.readAllStandardError()};
        };
        const Result one = bench(1);
        QCOMPARE(one.json["threads"].toInt(), 1);
        const int cores = one.json["physical_cores"].toInt();
        QVERIFY(cores >= 1);
        QCOMPARE(one.json["oversubscribed"].toBool(), false);
        QCOMPARE(one.json["pool_round_trips_per_decode_step"].toDouble(), 0.0);  // one thread: nothing to hand off
        QVERIFY(one.json["pool_inline_calls_per_decode_step"].toDouble() > 0);
        QVERIFY(one.err.isEmpty());

        // One thread more than the cores: said once on stderr, and in the JSON.
        const Result over = bench(cores + 1);
        QCOMPARE(over.json["threads"].toInt(), cores + 1);
        QCOMPARE(over.json["oversubscribed"].toBool(), true);
        QCOMPARE(over.err.count('\n'), 1);
        QVERIFY(over.err.contains("--threads " + QByteArray::number(cores + 1) + " is more than the " +
                                  QByteArray::number(cores) + " physical cores"));
        // Every decode step makes the same kernel calls: a whole number of round
        // trips per step, each handing out at least two chunks.
        const double trips = over.json["pool_round_trips_per_decode_step"].toDouble();
        QVERIFY(trips >= 1);
        QCOMPARE(trips, double(qRound(trips)));
        QVERIFY(over.json["pool_chunks_per_decode_step"].toDouble() >= 2 * trips);
        QVERIFY(over.json["pool_stolen_chunks_per_decode_step"].toDouble() <= over.json["pool_chunks_per_decode_step"].toDouble());
    }

    void stepSplit() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli";
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (!QFileInfo(cli).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
        if (!QFileInfo::exists(model)) QSKIP("SKIPPED: default model not present (WEIR_MODEL)");
        QProcess p;
        p.start(cli, {"bench", "-m", model, "--pp", "24", "--tg", "5", "--threads", "2", "--no-bandwidth", "--step-split"});
        QVERIFY(p.waitForFinished(120000 * qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE")));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject o = QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last()).object();
        QVERIFY(o["profiled_prefill_tokens_per_s"].toDouble() > 0 && o["profiled_decode_tokens_per_s"].toDouble() > 0);
        const QJsonObject decode = o["decode_step_split"].toObject(), prefill = o["prefill_pass_split"].toObject();
        QCOMPARE(decode["steps"].toInt(), 5);
        QCOMPARE(decode["forward_passes"].toInt(), 5);
        QCOMPARE(prefill["forward_passes"].toInt(), 1);  // 24 tokens: one pass
        for (const QJsonObject& split : {decode, prefill}) {
            const QJsonObject ops = split["ops_ms"].toObject();
            for (const char* op : {"embed", "norms", "projections", "rope_and_store", "attention", "output_head", "gather"})
                QVERIFY2(ops.contains(op) && ops[op].toDouble() >= 0, op);
            double sum = 0;
            for (const QJsonValue v : ops) sum += v.toDouble();
            const double forward = split["forward_ms"].toDouble(), step = split["step_ms"].toDouble();
            // Printed to 3 decimals: allow their rounding.
            QVERIFY2(ops["projections"].toDouble() > 0 && ops["output_head"].toDouble() > 0, "the big matmuls took no time");
            QVERIFY2(sum <= forward + 0.01 && forward <= step + 0.001, "a part is larger than its whole");
            QVERIFY(qAbs(split["between_ops_ms"].toDouble() - (forward - sum)) < 0.01);
            const QJsonObject pool = split["pool"].toObject();
            QVERIFY(pool["busy_fraction"].toDouble() > 0 && pool["busy_fraction"].toDouble() <= 1.0);
            QVERIFY(pool["in_round_trips_ms"].toDouble() <= sum + 0.01);
            // Per op kind: alone + in round trips = its time (to the printed decimals).
            const QJsonObject opsPool = split["ops_pool"].toObject();
            for (auto it = ops.begin(); it != ops.end(); ++it) {
                const QJsonObject op = opsPool[it.key()].toObject();
                QVERIFY2(qAbs(op["alone_ms"].toDouble() + op["in_round_trips_ms"].toDouble() - it.value().toDouble()) < 0.01,
                         qPrintable(it.key()));
                QVERIFY2(op["busy_fraction"].toDouble() >= 0 && op["busy_fraction"].toDouble() <= 1.0, qPrintable(it.key()));
            }
            QVERIFY(opsPool["output_head"].toObject()["in_round_trips_ms"].toDouble() > 0);
        }
        // The profiled steps are the same steps: the same round trips as the unprofiled ones.
        QCOMPARE(decode["pool"].toObject()["round_trips_per_step"].toDouble(), o["pool_round_trips_per_decode_step"].toDouble());
    }
};

QTEST_GUILESS_MAIN(BenchJsonTest)
#include "bench_json_test.moc"

// The Prometheus text exposition parser: the format's rules one by one, the
// /metrics pages of vLLM, SGLang and llama.cpp's server (fixtures/), and
// malformed input refused with its line number.
#include <QtTest>

#include <QFile>
#include <cmath>

#include "app/remote/prometheus_text.h"

using namespace weir::remote;

namespace {

QByteArray fixture(const char* name) {
    QFile f(QStringLiteral(WEIR_REMOTE_FIXTURES "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s missing", name);
    return f.readAll();
}

double only(const PromText& t, const char* sample) {
    const QList<const PromSample*> s = t.samples(QLatin1String(sample));
    if (s.size() != 1) qFatal("%s: %d samples, expected 1", sample, int(s.size()));
    return s.first()->value;
}

} // namespace

class PrometheusTextTest : public QObject {
    Q_OBJECT
private slots:
    void helpTypeAndSamples() {
        const PromParseResult r = parsePrometheusText(
            "# HELP http_requests_total The total number of HTTP requests.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
            "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
            "\n"
            "# A comment that is neither HELP nor TYPE\n"
            "metric_without_timestamp_and_labels 12.47\n");
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.text.families.size(), 2);
        const PromFamily* f = r.text.family(QStringLiteral("http_requests_total"));
        QVERIFY(f);
        QCOMPARE(f->type, PromType::Counter);
        QCOMPARE(f->help, QStringLiteral("The total number of HTTP requests."));
        QCOMPARE(f->samples.size(), 2);
        QCOMPARE(f->samples[1].label(QStringLiteral("code")), QStringLiteral("400"));
        QCOMPARE(f->samples[1].value, 3.0);
        QCOMPARE(f->samples[1].timestampMs.value_or(0), qint64(1395066363000));
        const PromFamily* g = r.text.family(QStringLiteral("metric_without_timestamp_and_labels"));
        QVERIFY(g);
        QCOMPARE(g->type, PromType::Untyped);
        QCOMPARE(g->samples[0].value, 12.47);
        QVERIFY(!g->samples[0].timestampMs);
        QVERIFY(g->samples[0].label(QStringLiteral("code")).isNull());
    }

    void labelEscapesAndHelpEscapes() {
        const PromParseResult r = parsePrometheusText(
            "# HELP msdos_file_access_time_seconds Time with a \\\\ backslash,\\nnew line and \\\" kept.\n"
            "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
            "spaced { a = \"1\" , b=\"x y\", } -0.5\n");
        QVERIFY2(r.ok, qPrintable(r.error));
        const PromFamily* f = r.text.family(QStringLiteral("msdos_file_access_time_seconds"));
        QVERIFY(f);
        // In HELP only \\ and \n are escapes.
        QCOMPARE(f->help, QStringLiteral("Time with a \\ backslash,\nnew line and \\\" kept."));
        QCOMPARE(f->samples[0].label(QStringLiteral("path")), QStringLiteral("C:\\DIR\\FILE.TXT"));
        QCOMPARE(f->samples[0].label(QStringLiteral("error")), QStringLiteral("Cannot find file:\n\"FILE.TXT\""));
        QCOMPARE(f->samples[0].value, 1.458255915e9);
        const PromSample& s = r.text.family(QStringLiteral("spaced"))->samples[0];
        QCOMPARE(s.labels.size(), 2);
        QCOMPARE(s.label(QStringLiteral("b")), QStringLiteral("x y"));
        QCOMPARE(s.value, -0.5);
    }

    void specialValues() {
        const PromParseResult r = parsePrometheusText(
            "a NaN\nb +Inf\nc -Inf\nd 1e-3\ne -1.5E+2\nf +7\ng 0\nh{x=\"\"} 3 -12\n");
        QVERIFY2(r.ok, qPrintable(r.error));
        QVERIFY(std::isnan(only(r.text, "a")));
        QCOMPARE(only(r.text, "b"), std::numeric_limits<double>::infinity());
        QCOMPARE(only(r.text, "c"), -std::numeric_limits<double>::infinity());
        QCOMPARE(only(r.text, "d"), 1e-3);
        QCOMPARE(only(r.text, "e"), -150.0);
        QCOMPARE(only(r.text, "f"), 7.0);
        QCOMPARE(only(r.text, "g"), 0.0);
        const PromSample* h = r.text.samples(QStringLiteral("h")).first();
        QCOMPARE(h->timestampMs.value_or(0), qint64(-12));
        QVERIFY(!h->label(QStringLiteral("x")).isNull());   // present, empty
        QVERIFY(h->label(QStringLiteral("x")).isEmpty());
    }

    void histogramAndSummaryGroupUnderTheirFamily() {
        const PromParseResult r = parsePrometheusText(
            "# TYPE rpc_duration_seconds summary\n"
            "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
            "rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
            "rpc_duration_seconds_sum 1.7560473e+07\n"
            "rpc_duration_seconds_count 2693\n"
            "# TYPE http_request_duration_seconds histogram\n"
            "http_request_duration_seconds_bucket{le=\"0.05\"} 24054\n"
            "http_request_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
            "http_request_duration_seconds_sum 53423\n"
            "http_request_duration_seconds_count 144320\n"
            "# TYPE jobs counter\n"
            "jobs_total 5\n");
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.text.families.size(), 3);
        const PromFamily* s = r.text.family(QStringLiteral("rpc_duration_seconds"));
        QCOMPARE(s->type, PromType::Summary);
        QCOMPARE(s->samples.size(), 4);
        const PromFamily* h = r.text.family(QStringLiteral("http_request_duration_seconds"));
        QCOMPARE(h->type, PromType::Histogram);
        QCOMPARE(h->samples.size(), 4);
        QCOMPARE(h->samples[1].label(QStringLiteral("le")), QStringLiteral("+Inf"));
        QCOMPARE(only(r.text, "http_request_duration_seconds_count"), 144320.0);
        const PromFamily* c = r.text.family(QStringLiteral("jobs"));
        QCOMPARE(c->samples.size(), 1);
        QCOMPARE(c->samples[0].name, QStringLiteral("jobs_total"));
    }

    void crlfAndNoFinalNewline() {
        const PromParseResult r = parsePrometheusText("# TYPE x gauge\r\nx 1\r\ny 2");
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(only(r.text, "x"), 1.0);
        QCOMPARE(only(r.text, "y"), 2.0);
    }

    void malformedInputNamesTheLine_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("words");
        QTest::newRow("value not a number") << QByteArray("ok 1\nbad abc\n") << 2 << "'abc' is not a number";
        QTest::newRow("no value") << QByteArray("# TYPE x gauge\nx\n") << 2 << "x has no value";
        QTest::newRow("unclosed quote") << QByteArray("x{a=\"1} 2\n") << 1 << "closing quote";
        QTest::newRow("unknown escape") << QByteArray("\nx{a=\"\\t\"} 2\n") << 2 << "unknown escape";
        QTest::newRow("unquoted label value") << QByteArray("x{a=1} 2\n") << 1 << "not in double quotes";
        QTest::newRow("label without =") << QByteArray("x{a} 2\n") << 1 << "has no '='";
        QTest::newRow("unclosed label set") << QByteArray("x{a=\"1\"") << 1 << "missing its closing '}'";
        QTest::newRow("duplicate label") << QByteArray("x{a=\"1\",a=\"2\"} 2\n") << 1 << "label a appears twice";
        QTest::newRow("bad metric name") << QByteArray("\n\n9lives 1\n") << 3 << "cannot start with '9'";
        QTest::newRow("colon in label name") << QByteArray("x{a:b=\"1\"} 1\n") << 1 << "':' is not allowed in label name a";
        QTest::newRow("junk after label") << QByteArray("x{a=\"1\" b=\"2\"} 1\n") << 1 << "expected ',' or '}' after label a";
        QTest::newRow("bad timestamp") << QByteArray("x 1 soon\n") << 1 << "'soon' is not a timestamp";
        QTest::newRow("trailing text") << QByteArray("x 1 2 3\n") << 1 << "unexpected text after the timestamp";
        QTest::newRow("unknown type") << QByteArray("# TYPE x meter\n") << 1 << "unknown metric type 'meter'";
        QTest::newRow("second TYPE") << QByteArray("# TYPE x gauge\n# TYPE x counter\n") << 2 << "second # TYPE for x";
        QTest::newRow("TYPE after samples") << QByteArray("x 1\n# TYPE x gauge\n") << 2 << "comes after its samples";
        QTest::newRow("bucket without le") << QByteArray("# TYPE h histogram\nh_bucket 1\n") << 2 << "no 'le' label";
        QTest::newRow("bucket le not a number") << QByteArray("# TYPE h histogram\nh_bucket{le=\"big\"} 1\n") << 2
                                                << "le=\"big\", not a number";
        QTest::newRow("summary without quantile") << QByteArray("# TYPE s summary\ns 1\n") << 2 << "without a 'quantile'";
        QTest::newRow("hex value") << QByteArray("x 0x10\n") << 1 << "'0x10' is not a number";
    }
    void malformedInputNamesTheLine() {
        QFETCH(QByteArray, body);
        QFETCH(int, line);
        QFETCH(QString, words);
        const PromParseResult r = parsePrometheusText(body);
        QVERIFY(!r.ok);
        QCOMPARE(r.errorLine, line);
        QVERIFY2(r.error.startsWith(QStringLiteral("line %1: ").arg(line)), qPrintable(r.error));
        QVERIFY2(r.error.contains(words), qPrintable(r.error));
        QVERIFY(r.text.families.isEmpty());
    }

    void vllmPage() {
        const PromParseResult r = parsePrometheusText(fixture("vllm_v1.prom"));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(only(r.text, "vllm:kv_cache_usage_perc"), 0.4125);
        QCOMPARE(only(r.text, "vllm:num_requests_running"), 3.0);
        QCOMPARE(only(r.text, "vllm:num_requests_waiting"), 2.0);
        QCOMPARE(only(r.text, "vllm:prefix_cache_hits_total"), 3000.0);
        QCOMPARE(only(r.text, "vllm:generation_tokens_total"), 4500.0);
        QCOMPARE(r.text.family(QStringLiteral("vllm:request_success_total"))->samples.size(), 3);
        QCOMPARE(r.text.family(QStringLiteral("python_gc_objects_collected_total"))->samples.size(), 3);
        QCOMPARE(only(r.text, "process_resident_memory_bytes"), 1.2582912e+09);
        QCOMPARE(r.text.family(QStringLiteral("vllm:request_success_created"))->type, PromType::Gauge);
        const PromFamily* ttft = r.text.family(QStringLiteral("vllm:time_to_first_token_seconds"));
        QVERIFY(ttft);
        QCOMPARE(ttft->type, PromType::Histogram);
        QCOMPARE(ttft->samples.size(), 6);
        const PromSample* info = r.text.samples(QStringLiteral("vllm:cache_config_info")).first();
        QCOMPARE(info->label(QStringLiteral("num_gpu_blocks")), QStringLiteral("2048"));
    }

    void sglangPage() {
        const PromParseResult r = parsePrometheusText(fixture("sglang.prom"));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(only(r.text, "sglang:token_usage"), 0.31);
        QCOMPARE(only(r.text, "sglang:num_running_reqs"), 37.0);
        QCOMPARE(only(r.text, "sglang:num_queue_reqs"), 12.0);
        QCOMPARE(only(r.text, "sglang:cache_hit_rate"), 0.4172930293042116);
        QCOMPARE(only(r.text, "sglang:generation_tokens_total"), 4.902113e+06);
        // _sum before the buckets is still the histogram's.
        QCOMPARE(r.text.family(QStringLiteral("sglang:time_to_first_token_seconds"))->samples.size(), 5);
    }

    void llamaCppPage() {
        const PromParseResult r = parsePrometheusText(fixture("llamacpp.prom"));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(only(r.text, "llamacpp:kv_cache_usage_ratio"), 0.25);
        QCOMPARE(only(r.text, "llamacpp:requests_processing"), 1.0);
        QCOMPARE(only(r.text, "llamacpp:requests_deferred"), 2.0);
        QCOMPARE(only(r.text, "llamacpp:tokens_predicted_total"), 2750.0);
        QCOMPARE(r.text.family(QStringLiteral("llamacpp:prompt_tokens_seconds"))->type, PromType::Gauge);
    }
};

QTEST_GUILESS_MAIN(PrometheusTextTest)
#include "prometheus_text_test.moc"

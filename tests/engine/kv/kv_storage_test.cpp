// KvStorage's byte counts: a size whose product of row bytes, page size and
// pages does not fit a size_t is refused, never wrapped into a small buffer
// that rows would then be written past.
#include <QtTest>

#include "engine/kv/kv_storage.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::kv;

class KvStorageTest : public QObject {
    Q_OBJECT
private slots:
    void sizesThatFitAreAllocated() {
        KvStorage s(KvDtype::F32, 16, 4, {{0, 64}, {1, 64}});
        QCOMPARE(s.bytesPerToken(), size_t(2 * 2 * 64 * 4));
        QCOMPARE(s.totalBytes(), size_t(2 * 2 * 64 * 4) * 16 * 4);
        QVERIFY(s.layer(1).k != nullptr);
        QVERIFY(s.resize(8));
        QCOMPARE(s.totalBytes(), size_t(2 * 2 * 64 * 4) * 16 * 8);
    }

    // Before: 2^36 row bytes x 2^20 x 2^12 pages wrapped to 16 bytes and was "allocated".
    void byteCountThatWrapsIsRefused() {
        QVERIFY_THROWS_EXCEPTION(Error, KvStorage(KvDtype::F32, 1 << 20, 1 << 12, {{0, int64_t(1) << 34}}));
        KvStorage s(KvDtype::F32, 1 << 20, 0, {{0, int64_t(1) << 34}});
        QVERIFY(!s.resize(1 << 12));  // the same wrap through resize
        QCOMPARE(s.totalBytes(), size_t(0));
        QVERIFY(s.resize(0));
    }
};

QTEST_GUILESS_MAIN(KvStorageTest)
#include "kv_storage_test.moc"

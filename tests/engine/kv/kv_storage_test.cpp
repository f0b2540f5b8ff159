// KvStorage's byte counts: a size whose product of row bytes, page size and
// pages does not fit a size_t is refused, never wrapped into a small buffer
// that rows would then be written past.
#include "tests/support/weir_test.h"

#include "engine/kv/kv_storage.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::kv;

WEIR_TEST(KvStorage, sizesThatFitAreAllocated) {
    KvStorage s(KvDtype::F32, 16, 4, {{0, 64}, {1, 64}});
    REQUIRE_EQ(s.bytesPerToken(), size_t(2 * 2 * 64 * 4));
    REQUIRE_EQ(s.totalBytes(), size_t(2 * 2 * 64 * 4) * 16 * 4);
    REQUIRE(s.layer(1).k != nullptr);
    REQUIRE(s.resize(8));
    REQUIRE_EQ(s.totalBytes(), size_t(2 * 2 * 64 * 4) * 16 * 8);
}

// Before: 2^36 row bytes x 2^20 x 2^12 pages wrapped to 16 bytes and was "allocated".
WEIR_TEST(KvStorage, byteCountThatWrapsIsRefused) {
    REQUIRE_THROWS(Error, KvStorage(KvDtype::F32, 1 << 20, 1 << 12, {{0, int64_t(1) << 34}}));
    KvStorage s(KvDtype::F32, 1 << 20, 0, {{0, int64_t(1) << 34}});
    REQUIRE(!s.resize(1 << 12));  // the same wrap through resize
    REQUIRE_EQ(s.totalBytes(), size_t(0));
    REQUIRE(s.resize(0));
}

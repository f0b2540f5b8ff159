// The CUDA backend's step metadata: one flat array of words per step, with
// each token's page tables reachable through fixed-place offsets.
#include "tests/support/weir_test.h"

#include <map>
#include <vector>

#include "engine/backend/cuda/step_metadata.h"
#include "weir/base/error.h"

using namespace weir;
using weir::cudabackend::flattenStep;
using weir::cudabackend::StepLayout;

namespace {

// Page tables per (layer, sequence); layers 0 (full pool) and 1 (window pool).
class FakeKv : public KvAccess {
public:
    std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> tables;
    mutable int lookups = 0;
    int32_t pageSize() const override { return 16; }
    KvLayerStorage layer(int32_t) const override { return {}; }
    std::span<const int32_t> pageTable(int32_t layer, int32_t seq) const override {
        ++lookups;
        auto it = tables.find({layer, seq});
        if (it == tables.end()) return {};
        return it->second;
    }
};

std::vector<int32_t> tableAt(const std::vector<int32_t>& words, int32_t offset, size_t n) {
    return std::vector<int32_t>(words.begin() + offset, words.begin() + offset + int64_t(n));
}

} // namespace

WEIR_TEST(CudaStepMetadata, sectionsHaveFixedPlacesAndTablesFollow) {
    FakeKv kv;
    kv.tables[{0, 7}] = {5, 2, 9};
    kv.tables[{0, 3}] = {4};
    kv.tables[{1, 7}] = {-1, 11, 12};  // released page at the start of the window
    kv.tables[{1, 3}] = {6};
    Batch batch;
    batch.add(100, 7, 33, false);
    batch.add(101, 7, 34, true);  // a prefill chunk of sequence 7...
    batch.add(200, 3, 5, true);   // ...and a decode of sequence 3
    const std::vector<int32_t> outputs{1, 2};
    StepInfo step;
    step.batch = &batch;
    step.kv = &kv;
    step.fullLayer = 0;
    step.windowLayer = 1;
    step.outputRows = outputs;

    std::vector<int32_t> words;
    const StepLayout L = flattenStep(step, words);
    CHECK_EQ(L.tokens, 3);
    CHECK_EQ(L.outputs, 2);
    CHECK_EQ(L.tokenIds, 0);
    CHECK_EQ(L.positions, 3);
    CHECK_EQ(L.outputRows, 6);
    CHECK_EQ(L.fullTables, 8);
    CHECK_EQ(L.windowTables, 11);
    CHECK_EQ(L.words, int32_t(words.size()));
    CHECK_EQ(tableAt(words, L.tokenIds, 3), (std::vector<int32_t>{100, 101, 200}));
    CHECK_EQ(tableAt(words, L.positions, 3), (std::vector<int32_t>{33, 34, 5}));
    CHECK_EQ(tableAt(words, L.outputRows, 2), (std::vector<int32_t>{1, 2}));
    // Both tokens of sequence 7 point at one copy of its table.
    CHECK_EQ(words[size_t(L.fullTables)], words[size_t(L.fullTables + 1)]);
    CHECK_EQ(words[size_t(L.windowTables)], words[size_t(L.windowTables + 1)]);
    CHECK_EQ(tableAt(words, words[size_t(L.fullTables)], 3), (std::vector<int32_t>{5, 2, 9}));
    CHECK_EQ(tableAt(words, words[size_t(L.fullTables + 2)], 1), (std::vector<int32_t>{4}));
    CHECK_EQ(tableAt(words, words[size_t(L.windowTables)], 3), (std::vector<int32_t>{-1, 11, 12}));
    CHECK_EQ(tableAt(words, words[size_t(L.windowTables + 2)], 1), (std::vector<int32_t>{6}));
    // Tables start after the fixed sections; four distinct copies, 8 words.
    CHECK_EQ(L.words, 14 + 8);
    for (int32_t i = 0; i < 3; ++i) {
        CHECK(words[size_t(L.fullTables + i)] >= 14);
        CHECK(words[size_t(L.windowTables + i)] >= 14);
    }
    CHECK_EQ(kv.lookups, 4);  // each (pool, sequence) read once
}

WEIR_TEST(CudaStepMetadata, missingPoolGetsMinusOneOffsets) {
    FakeKv kv;
    kv.tables[{0, 1}] = {3, 4};
    Batch batch;
    batch.add(9, 1, 20, true);
    const std::vector<int32_t> outputs{0};
    StepInfo step;
    step.batch = &batch;
    step.kv = &kv;
    step.fullLayer = 0;
    step.windowLayer = -1;  // no sliding layers
    step.outputRows = outputs;
    std::vector<int32_t> words;
    const StepLayout L = flattenStep(step, words);
    CHECK_EQ(words[size_t(L.windowTables)], -1);
    CHECK_EQ(tableAt(words, words[size_t(L.fullTables)], 2), (std::vector<int32_t>{3, 4}));
    CHECK_EQ(L.words, 5 + 2);  // ids, positions, output row, two offsets; the table
}

WEIR_TEST(CudaStepMetadata, sameShapeKeepsSectionPlaces) {
    // Two decode steps of the same shape put every fixed section at the same
    // word, whatever their tables hold: the precondition of graph replay.
    FakeKv kv;
    kv.tables[{0, 1}] = {3};
    kv.tables[{0, 2}] = {8, 1, 0, 4};
    Batch a, b;
    a.add(1, 1, 3, true);
    a.add(2, 2, 50, true);
    b.add(5, 2, 51, true);
    b.add(6, 1, 4, true);
    const std::vector<int32_t> outputs{0, 1};
    StepInfo sa, sb;
    sa.batch = &a;
    sb.batch = &b;
    sa.kv = sb.kv = &kv;
    sa.fullLayer = sb.fullLayer = 0;
    sa.outputRows = sb.outputRows = outputs;
    std::vector<int32_t> wa, wb;
    const StepLayout la = flattenStep(sa, wa), lb = flattenStep(sb, wb);
    CHECK_EQ(la.positions, lb.positions);
    CHECK_EQ(la.outputRows, lb.outputRows);
    CHECK_EQ(la.fullTables, lb.fullTables);
    CHECK_EQ(la.windowTables, lb.windowTables);
    CHECK_EQ(tableAt(wb, wb[size_t(lb.fullTables)], 4), (std::vector<int32_t>{8, 1, 0, 4}));
    CHECK_EQ(tableAt(wb, wb[size_t(lb.fullTables + 1)], 1), (std::vector<int32_t>{3}));
}

WEIR_TEST(CudaStepMetadata, refusesBadSteps) {
    FakeKv kv;
    kv.tables[{0, 1}] = {3};
    Batch batch;
    batch.add(1, 1, 3, true);
    batch.add(1, 2, 0, true);  // sequence 2 has no table
    const std::vector<int32_t> outputs{0, 1};
    StepInfo step;
    step.batch = &batch;
    step.kv = &kv;
    step.fullLayer = 0;
    step.outputRows = outputs;
    std::vector<int32_t> words;
    CHECK_THROWS(weir::Error, flattenStep(step, words));

    kv.tables[{0, 2}] = {4};
    const std::vector<int32_t> badOutputs{0, 2};  // row 2 is outside a batch of 2
    step.outputRows = badOutputs;
    CHECK_THROWS(weir::Error, flattenStep(step, words));

    StepInfo empty;
    CHECK_THROWS(weir::Error, flattenStep(empty, words));

    // A position past the table's last page (16 positions a page).
    step.outputRows = outputs;
    CHECK_EQ(flattenStep(step, words).tokens, 2);
    batch.tokens[0].pos = 16;
    CHECK_THROWS(weir::Error, flattenStep(step, words));
    batch.tokens[0].pos = -1;
    CHECK_THROWS(weir::Error, flattenStep(step, words));
}

// libFuzzer target for the GGUF reader: any input must either parse or throw
// weir::Error; anything else (crash, sanitizer report, other exception, a
// huge allocation caught by -malloc_limit_mb) is a bug.
#include <cstddef>
#include <cstdint>

#include "engine/gguf/gguf_file.h"
#include "weir/base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace weir::gguf;
    try {
        const auto f = GgufFile::fromMemory(data, size, "fuzz");
        // Touch what a caller would: every value's rendering, the getters, every tensor byte range.
        size_t sum = 0;
        for (const KeyValue& kv : f->metadata()) {
            sum += kv.value.toDisplayString(4).size();
            if (f->find(kv.key) == nullptr) __builtin_trap();
        }
        for (const TensorInfo& t : f->tensors()) {
            if (t.data < data || t.nbytes > size || t.data + t.nbytes > data + size) __builtin_trap();
            sum += t.data[0] + t.data[t.nbytes - 1];  // ASan checks both ends
            if (f->findTensor(t.name) != &t) __builtin_trap();
        }
        for (const char* key : {"general.architecture", "general.alignment", "tiny.tokens", "tiny.scores"}) {
            try {
                (void)f->getInt(key);
            } catch (const weir::Error&) {}
            try {
                (void)f->getStringArray(key);
            } catch (const weir::Error&) {}
            try {
                (void)f->getFloatArray(key);
            } catch (const weir::Error&) {}
            try {
                (void)f->getIntArray(key);
            } catch (const weir::Error&) {}
        }
        if (sum == size_t(-1)) __builtin_trap();  // keeps the reads above from being optimised away
    } catch (const weir::Error&) {
        // Rejected cleanly: the expected outcome for most inputs.
    }
    return 0;
}

#pragma once
// Hand-built malformed GGUF files shared by the reader test and the
// `weir-cli inspect` test. Each case is assembled byte by byte (not with our
// writer), and its expected error offset is the builder's position when it
// wrote the bad field, so the expectation does not come from the reader.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace weir::gguf::testing {

// Little-endian byte builder for GGUF pieces.
class RawGguf {
public:
    std::vector<uint8_t> b;
    uint64_t pos() const { return b.size(); }

    RawGguf& raw(std::string_view s) { b.insert(b.end(), s.begin(), s.end()); return *this; }
    template <class T> RawGguf& put(T v) {
        const size_t at = b.size();
        b.resize(at + sizeof(T));
        std::memcpy(b.data() + at, &v, sizeof(T));
        return *this;
    }
    RawGguf& u8(uint8_t v) { return put(v); }
    RawGguf& u32(uint32_t v) { return put(v); }
    RawGguf& u64(uint64_t v) { return put(v); }
    RawGguf& str(std::string_view s) { u64(s.size()); return raw(s); }
    RawGguf& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
        raw("GGUF");
        u32(version);
        u64(tensors);
        return u64(kvs);
    }
    RawGguf& kvU32(std::string_view key, uint32_t v) { str(key); u32(4); return u32(v); }
    // Tensor info: name, dims (innermost first), ggml type id, offset.
    RawGguf& tensor(std::string_view name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
        str(name);
        u32(uint32_t(dims.size()));
        for (uint64_t d : dims) u64(d);
        u32(type);
        return u64(offset);
    }
    RawGguf& padTo(uint64_t alignment) {
        while (b.size() % alignment) b.push_back(0);
        return *this;
    }
    RawGguf& zeros(size_t n) { b.resize(b.size() + n, 0); return *this; }
};

struct MalformedCase {
    std::string name;            // also the file name used in messages
    std::vector<uint8_t> bytes;
    uint64_t offset;             // expected "offset N" in the message
    std::string problem;         // text the message must contain
};

constexpr uint32_t kF32 = 0, kQ8_0 = 8, kQ4_K = 12;
constexpr uint32_t kTypeU32 = 4, kTypeBool = 7, kTypeString = 8, kTypeArray = 9, kTypeU8 = 0;

inline std::vector<MalformedCase> malformedCases() {
    std::vector<MalformedCase> cases;
    const auto add = [&](std::string name, const RawGguf& r, uint64_t off, std::string problem) {
        cases.push_back(MalformedCase{std::move(name), r.b, off, std::move(problem)});
    };
    uint64_t at = 0;

    { RawGguf r; r.raw("GGML").u32(3).u64(0).u64(0); add("bad_magic", r, 0, "bad magic"); }
    { RawGguf r; r.header(0, 0, 1); add("version_1", r, 4, "unsupported GGUF version 1"); }
    { RawGguf r; r.header(0, 0, 4); add("version_4", r, 4, "unsupported GGUF version 4"); }
    { RawGguf r; r.raw("GGUF").u32(0x03000000u).u64(0).u64(0); add("big_endian", r, 4, "big-endian"); }
    { RawGguf r; add("empty_file", r, 0, "truncated file"); }
    { RawGguf r; r.raw("GGUF").u32(3).u32(0); add("truncated_header", r, 8, "truncated file"); }
    {
        RawGguf r;
        r.header(0, 1).str("a.b").u32(kTypeU32);
        at = r.pos();
        r.u8(7).u8(0);
        add("truncated_value", r, at, "truncated file");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(2).u64(32);
        at = r.pos();
        r.u32(1);
        add("truncated_tensor_info", r, at, "truncated file");
    }
    {
        RawGguf r;
        r.header(0, 1);
        at = r.pos();
        r.u64(1000).raw("abcdefghijklmnopqrst");
        add("key_length_past_end", r, at, "string length 1000");
    }
    {
        RawGguf r;
        r.header(0, 1).str("k").u32(kTypeString);
        at = r.pos();
        r.u64(uint64_t(1) << 40).raw("xyz");
        add("string_value_past_end", r, at, "string length 1099511627776");
    }
    {
        RawGguf r;
        r.header(0, 1).str("k").u32(kTypeArray).u32(kTypeU32);
        at = r.pos();
        r.u64(1000).u64(0);
        add("array_count_past_end", r, at, "array count 1000");
    }
    {
        RawGguf r;
        r.header(0, 1).str("k").u32(kTypeArray).u32(kTypeString);
        at = r.pos();
        r.u64(uint64_t(1) << 62).u64(0).u64(0);
        add("array_count_huge", r, at, "array count 4611686018427387904");
    }
    { RawGguf r; r.header(0, uint64_t(1) << 60).zeros(64); add("kv_count_absurd", r, 16, "kv_count"); }
    { RawGguf r; r.header(uint64_t(1) << 60, 0).zeros(64); add("tensor_count_absurd", r, 8, "tensor_count"); }
    {
        RawGguf r;
        r.header(0, 1).str("k");
        at = r.pos();
        r.u32(13).u32(0);
        add("unknown_value_type", r, at, "unknown value type 13");
    }
    {
        RawGguf r;
        r.header(0, 1).str("k").u32(kTypeArray);
        at = r.pos();
        r.u32(42).u64(0);
        add("unknown_array_element_type", r, at, "unknown value type 42");
    }
    {
        // 12 nested arrays; the reader allows 8 levels, so the 9th array (depth 8) is refused.
        RawGguf r;
        r.header(0, 1).str("deep").u32(kTypeArray);
        const uint64_t first = r.pos();
        for (int level = 0; level < 12; ++level) r.u32(kTypeArray).u64(1);
        r.u32(kTypeU8).u64(0);
        add("array_nesting_too_deep", r, first + 8 * 12, "array nesting deeper than 8");
    }
    {
        RawGguf r;
        r.header(0, 2).kvU32("dup.key", 1);
        at = r.pos();
        r.kvU32("dup.key", 2);
        add("duplicate_key", r, at, "duplicate key 'dup.key'");
    }
    {
        RawGguf r;
        r.header(0, 2).kvU32("a\nb", 1);
        at = r.pos();
        r.kvU32("a\nb", 2);
        add("duplicate_key_with_newline", r, at, "duplicate key 'a\\x0ab'");
    }
    {
        RawGguf r;
        r.header(0, 1).str("general.alignment").u32(kTypeU32);
        at = r.pos();
        r.u32(48);
        add("alignment_not_power_of_two", r, at, "general.alignment 48 is not a power of two");
    }
    {
        RawGguf r;
        r.header(0, 1).str("general.alignment").u32(kTypeU32);
        at = r.pos();
        r.u32(0);
        add("alignment_zero", r, at, "general.alignment 0 is not a power of two");
    }
    {
        RawGguf r;
        r.header(0, 1).str("general.alignment").u32(kTypeString);
        at = r.pos();
        r.str("32");
        add("alignment_string", r, at, "general.alignment must be an integer");
    }
    {
        RawGguf r;
        r.header(0, 1).str("flag").u32(kTypeBool);
        at = r.pos();
        r.u8(2);
        add("bool_invalid", r, at, "bool value 2");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t");
        at = r.pos();
        r.u32(5).u64(1).u64(1).u64(1).u64(1).u64(1).u32(kF32).u64(0).padTo(32).zeros(32);
        add("too_many_dims", r, at, "5 dimensions");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(2).u64(4);
        at = r.pos();
        r.u64(0).u32(kF32).u64(0).padTo(32).zeros(32);
        add("zero_dim", r, at, "dimension 1 is zero");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(2).u64(4);
        at = r.pos();
        r.u64(~uint64_t(0)).u32(kF32).u64(0).padTo(32).zeros(32);
        add("negative_dim", r, at, "dimension 1 is negative");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(1).u64(8);
        at = r.pos();
        r.u32(99).u64(0).padTo(32).zeros(32);
        add("unknown_tensor_type", r, at, "unknown tensor type 99");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(2);
        at = r.pos();
        r.u64(100).u64(2).u32(kQ4_K).u64(0).padTo(32).zeros(512);
        add("dim_not_block_multiple", r, at, "not a multiple of the block size 256");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t");
        at = r.pos();
        r.u32(2).u64(uint64_t(1) << 32).u64(uint64_t(1) << 32).u32(kF32).u64(0).padTo(32);
        add("element_count_overflow", r, at, "element count overflows");
    }
    {
        RawGguf r;  // 2^62 elements fit in int64, 2^64 bytes do not fit in u64
        r.header(1, 0).str("t");
        at = r.pos();
        r.u32(2).u64(uint64_t(1) << 31).u64(uint64_t(1) << 31).u32(kF32).u64(0).padTo(32);
        add("byte_size_overflow", r, at, "byte size overflows");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(1).u64(8).u32(kF32);
        at = r.pos();
        r.u64(4).padTo(32).zeros(64);
        add("misaligned_offset", r, at, "misaligned");
    }
    {
        RawGguf r;
        r.header(1, 0).str("t").u32(1).u64(8).u32(kF32);
        at = r.pos();
        r.u64(uint64_t(1) << 40).padTo(32).zeros(64);
        add("tensor_data_outside_file", r, at, "lies outside the file");
    }
    {
        RawGguf r;  // 64 bytes declared, 32 present
        r.header(1, 0).str("t").u32(1).u64(16).u32(kF32);
        at = r.pos();
        r.u64(0).padTo(32).zeros(32);
        add("tensor_data_past_end", r, at, "lies outside the file");
    }
    {
        RawGguf r;
        r.header(2, 0).tensor("same", {8}, kF32, 0);
        at = r.pos();
        r.tensor("same", {8}, kF32, 32).padTo(32).zeros(64);
        add("duplicate_tensor_name", r, at, "duplicate tensor name 'same'");
    }
    {
        RawGguf r;  // "a" spans [0, 64), "b" starts at 32
        r.header(2, 0).tensor("a", {16}, kF32, 0).str("b").u32(1).u64(8).u32(kF32);
        at = r.pos();
        r.u64(32).padTo(32).zeros(96);
        add("overlapping_tensors", r, at, "tensor 'b' data overlaps tensor 'a'");
    }
    {
        RawGguf r;  // Q8_0 rows are 32 elements; 40 is not a multiple
        r.header(1, 0).str("q").u32(1);
        at = r.pos();
        r.u64(40).u32(kQ8_0).u64(0).padTo(32).zeros(64);
        add("q8_0_row_not_block_multiple", r, at, "not a multiple of the block size 32");
    }
    return cases;
}

} // namespace weir::gguf::testing

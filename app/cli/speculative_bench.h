#pragma once
// The speculative-decoding part of weir-cli bench: replies through the
// Engine (the scheduler path the app and the endpoint use) to a prompt that
// quotes itself (code repeated with one change) and to one that does not
// (greedy, where a small model soon repeats itself, and sampled),
// with prompt-lookup speculation on and/or off, as a JSON object: decode
// tokens/s, drafts verified and kept, and whether both replies are the same.
#include <cstdint>
#include <string>

namespace weir::cli {

enum class SpeculativeBench { Off, On, Both };

// JSON object text ("{...}") for the ",\"speculative\":" member of bench.
// Each reply is timed `reps` times (off and on alternately); the fastest counts.
std::string runSpeculativeBench(const std::string& modelPath, int32_t threads, int32_t tokens, int32_t reps,
                                SpeculativeBench mode);

} // namespace weir::cli

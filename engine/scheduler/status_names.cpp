// Names of the public status enums, as the endpoint's JSON and the app show them.
#include "weir/types/cache_status.h"

namespace weir {

const char* poolKindName(PoolKind pool) { return pool == PoolKind::Full ? "full" : "window"; }

const char* requestStateName(RequestState state) {
    switch (state) {
    case RequestState::Waiting: return "waiting";
    case RequestState::Prefill: return "prefill";
    case RequestState::Decode: return "decode";
    }
    return "unknown";
}

} // namespace weir

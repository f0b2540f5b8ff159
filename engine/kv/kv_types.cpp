#include "engine/kv/kv_types.h"

#include "engine/kv/page_pool.h"

namespace weir::kv {


const char* pageStateName(PageState s) {
    switch (s) {
    case PageState::Free: return "free";
    case PageState::Owned: return "owned";
    case PageState::Cached: return "cached";
    }
    return "?";
}

std::string holderName(Holder h) {
    if (h == kNoHolder) return "nobody";
    if (h == kTreeHolder) return "prefix cache";
    if (h == PagePool::kShared) return "several holders";
    return "request " + std::to_string(h);
}

const char* kvResultName(KvResult r) {
    switch (r) {
    case KvResult::Ok: return "ok";
    case KvResult::OutOfFullPages: return "out of full-pool pages";
    case KvResult::OutOfWindowPages: return "out of window-pool pages";
    case KvResult::Violation: return "integrity violation";
    case KvResult::BadArgument: return "bad argument";
    }
    return "?";
}

} // namespace weir::kv

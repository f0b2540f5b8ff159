#include "app/cli/engine_flags.h"

#include "weir/base/error.h"

namespace weir::cli {

KvDtype readKvDtypeFlag(Args& args, KvDtype def) {
    const std::string name = args.value("--kv-cache-dtype", kvDtypeName(def));
    KvDtype t = def;
    if (!kvDtypeFromName(name, t))
        throw Error("--kv-cache-dtype must be f16, q8_0, fp8_e4m3 or f32, got '" + name + "'");
    return t;
}

void readEngineFlags(Args& args, EngineOptions& o) {
    o.modelPath = args.value("-m", o.modelPath.empty() ? defaultModelPath() : o.modelPath);
    o.threads = int32_t(args.intValue("--threads", o.threads));
    o.maxRunningRequests = int32_t(args.intValue("--max-running-requests", o.maxRunningRequests));
    o.prefillChunk = int32_t(args.intValue("--prefill-chunk", o.prefillChunk));
    o.pageSize = int32_t(args.intValue("--page-size", o.pageSize));
    o.kvReserveTokens = args.intValue("--kv-reserve-tokens", o.kvReserveTokens);
    o.swaFullTokensRatio = args.floatValue("--swa-full-tokens-ratio", o.swaFullTokensRatio);
    o.swaTokens = args.intValue("--swa-tokens", o.swaTokens);
    o.kvDtype = readKvDtypeFlag(args, o.kvDtype);
    o.maxContext = int32_t(args.intValue("--max-context", o.maxContext));
    o.retainGap = int32_t(args.intValue("--retain-gap", o.retainGap));
    o.maxWaiting = int32_t(args.intValue("--max-waiting", o.maxWaiting));
}

} // namespace weir::cli

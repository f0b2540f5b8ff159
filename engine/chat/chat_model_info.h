#pragma once
// Reads what ChatTemplate::forModel needs from a GGUF file's metadata: the
// chat template (if any), the architecture, the BOS/EOS texts and the
// vocabulary's control tokens.
#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"

namespace weir {

// Throws weir::Error when bos/eos ids point outside the vocabulary.
ChatModelInfo chatModelInfoFromGguf(const gguf::GgufFile& file);

}  // namespace weir

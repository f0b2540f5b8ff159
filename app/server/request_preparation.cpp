#include "app/server/request_preparation.h"

#include <QRandomGenerator>
#include <algorithm>
#include <climits>

#include "app/server/chat_prompt.h"
#include "app/server/request_parser.h"

namespace weir::server {

namespace {

PreparedRequest failed(ApiError e) {
    PreparedRequest p;
    p.error = std::move(e);
    return p;
}

std::optional<ApiError> checkContext(size_t promptTokens, const PreparationContext& c, const char* param) {
    if (int64_t(promptTokens) < c.contextLimit) return std::nullopt;
    return ApiError::invalid(QString::fromLatin1(param),
                             QStringLiteral("The prompt is %1 tokens; this server's context limit is %2 tokens.")
                                 .arg(promptTokens)
                                 .arg(c.contextLimit),
                             QStringLiteral("context_length_exceeded"));
}

int32_t defaultMaxTokens(size_t promptTokens, const PreparationContext& c) {
    if (c.defaultMaxTokens > 0) return int32_t(std::min<qint64>(c.defaultMaxTokens, INT32_MAX));
    return int32_t(std::max<int64_t>(1, c.contextLimit - int64_t(promptTokens)));
}

void copyGeneration(const GenerationFields& gen, PreparedRequest& p) {
    p.generate.sampling = gen.sampling;
    if (!gen.seedGiven) p.generate.sampling.seed = QRandomGenerator::global()->generate64();
    p.generate.stopAtEndOfGeneration = !gen.ignoreEos;
    p.stream = gen.stream;
    p.includeUsage = gen.stream && gen.includeUsage;
}

} // namespace

PreparedRequest prepareChatCompletion(const QByteArray& body, const PreparationContext& c) {
    ChatRequest cr;
    ApiError err;
    if (!parseChatRequest(body, cr, err)) return failed(err);
    if (!c.model.matches(cr.model)) return failed(c.model.unknown(cr.model));
    PreparedChat prompt;
    if (!buildChatPrompt(cr, *c.engine, prompt, err)) return failed(err);
    PreparedRequest p;
    p.chat = true;
    p.model = cr.model;
    p.generate.prompt = std::move(prompt.prompt);
    if (auto e = checkContext(p.generate.prompt.size(), c, "messages")) return failed(*e);
    copyGeneration(cr.gen, p);
    p.generate.maxTokens = cr.gen.maxTokens ? int32_t(*cr.gen.maxTokens) : defaultMaxTokens(p.generate.prompt.size(), c);
    p.generate.stop = prompt.stop;
    p.generate.showSpecialTokens = prompt.showSpecialTokens;
    if (prompt.toolsActive) {
        p.reader = c.engine->toolCallReader(prompt.toolNames);
        p.reader->push(prompt.forcedPrefix);  // held: it opens a call
    }
    return p;
}

PreparedRequest prepareCompletion(const QByteArray& body, const PreparationContext& c) {
    CompletionRequest cr;
    ApiError err;
    if (!parseCompletionRequest(body, cr, err)) return failed(err);
    if (!c.model.matches(cr.model)) return failed(c.model.unknown(cr.model));
    PreparedRequest p;
    p.chat = false;
    p.model = cr.model;
    if (cr.promptIsTokens) {
        const int32_t vocab = c.engine->vocabSize();
        for (int32_t t : cr.promptTokens)
            if (t >= vocab)
                return failed(ApiError::invalid(
                    QStringLiteral("prompt"),
                    QStringLiteral("Token id %1 is outside the vocabulary (%2 tokens).").arg(t).arg(vocab),
                    QStringLiteral("invalid_value")));
        p.generate.prompt = cr.promptTokens;
        if (cr.echo) p.echo = c.engine->detokenize(cr.promptTokens);
    } else {
        // A raw prompt is the client's own template: its special tokens count.
        p.generate.prompt = c.engine->tokenizePrompt(cr.prompt);
        if (cr.echo) p.echo = cr.prompt;
    }
    if (auto e = checkContext(p.generate.prompt.size(), c, "prompt")) return failed(*e);
    copyGeneration(cr.gen, p);
    p.generate.maxTokens = int32_t(cr.gen.maxTokens.value_or(16));
    p.generate.stop = cr.gen.stop;
    return p;
}

} // namespace weir::server

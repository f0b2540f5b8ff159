#include "app/server/request_preparation.h"

#include <QRandomGenerator>
#include <algorithm>
#include <climits>

#include "app/server/anthropic_request.h"
#include "app/server/chat_prompt.h"
#include "app/server/embeddings_request.h"
#include "app/server/fill_in_middle.h"
#include "app/common/forced_tool_call.h"
#include "app/server/request_parser.h"
#include "app/server/responses_request.h"

namespace weir::server {

namespace {

PreparedRequest failed(ApiError e) {
    PreparedRequest p;
    p.error = std::move(e);
    return p;
}

// A prompt that leaves no room for one generated token. The wording is
// OpenAI's and vLLM's, which clients (LiteLLM's context-window fallback) look
// for; the completion's share is what was asked for (at least one token).
std::optional<ApiError> checkContext(size_t promptTokens, std::optional<int64_t> maxTokens,
                                     const PreparationContext& c, bool chat) {
    if (int64_t(promptTokens) < c.contextLimit) return std::nullopt;
    const int64_t completion = maxTokens.value_or(1);
    const QString where = chat ? QStringLiteral("messages") : QStringLiteral("prompt");
    return ApiError::invalid(where,
                             QStringLiteral("This model's maximum context length is %1 tokens. However, you requested "
                                            "%2 tokens (%3 in the %4, %5 in the completion). Please reduce the length "
                                            "of the %4 or completion.")
                                 .arg(c.contextLimit)
                                 .arg(int64_t(promptTokens) + completion)
                                 .arg(promptTokens)
                                 .arg(where)
                                 .arg(completion),
                             QStringLiteral("context_length_exceeded"));
}

// What the engine may generate: what was asked (or the default), never past
// the context, so prompt + completion tokens stay within the limit.
int32_t maxTokensFor(size_t promptTokens, std::optional<int64_t> asked, const PreparationContext& c) {
    const int64_t room = std::max<int64_t>(1, c.contextLimit - int64_t(promptTokens));
    int64_t n = room;
    if (asked) n = *asked;
    else if (c.defaultMaxTokens > 0) n = c.defaultMaxTokens;
    return int32_t(std::min<int64_t>({n, room, INT32_MAX}));
}

std::optional<ApiError> checkLogitBias(const GenerationFields& gen, const PreparationContext& c) {
    const int32_t vocab = c.engine->vocabSize();
    for (const LogitBias& b : gen.sampling.logitBias)
        if (b.token >= vocab)
            return ApiError::invalid(QStringLiteral("logit_bias"),
                                     QStringLiteral("Invalid value for 'logit_bias': token id %1 is outside the "
                                                    "vocabulary (%2 tokens).")
                                         .arg(b.token)
                                         .arg(vocab),
                                     QStringLiteral("invalid_value"));
    return std::nullopt;
}

// What the reply is held to: a call when one must come, else the
// response_format. Compiled here, off the engine thread, so that a schema
// the engine would refuse is a 400 naming the keyword before anything runs.
std::optional<ApiError> chooseConstraint(const ChatRequest& cr, OutputConstraint& out) {
    const bool call = common::forcesToolCall(cr.toolChoice);
    out = call ? OutputConstraint{OutputConstraint::Kind::JsonSchema,
                                  common::forcedCallSchema(cr.tools, cr.toolChoice, cr.parallelToolCalls, cr.toolsText)}
               : cr.responseFormat;
    const std::string problem = Engine::outputConstraintProblem(out);
    if (problem.empty()) return std::nullopt;
    if (call)
        return ApiError::invalid(QStringLiteral("tools"),
                                 QStringLiteral("The tool_choice asks for a call, which is constrained to the tool's "
                                                "parameters, and they cannot be: %1")
                                     .arg(QString::fromStdString(problem)),
                                 QStringLiteral("invalid_value"));
    return ApiError::invalid(QStringLiteral("response_format"),
                             QStringLiteral("Invalid schema for response_format: %1").arg(QString::fromStdString(problem)),
                             QStringLiteral("invalid_value"));
}

// tool_choice "auto": the model may answer in text, but a call it opens in
// its family's JSON syntax is held, from the opening marker on, to one of
// the tools with arguments valid for its parameters, then the closing marker
// (a lazy constraint). Tools whose parameters the compiler refuses leave the
// calls free, as before; so does a response_format, which holds the reply.
void armCallConstraint(const ChatRequest& cr, const PreparedChat& prompt, OutputConstraint& out) {
    if (cr.toolChoice.mode != ToolChoice::Mode::Auto || !prompt.toolsActive || prompt.callTriggers.empty() ||
        out.kind != OutputConstraint::Kind::None)
        return;
    ToolChoice any;
    any.mode = ToolChoice::Mode::Required;
    OutputConstraint lazy{OutputConstraint::Kind::JsonSchema, common::forcedCallSchema(cr.tools, any), prompt.callTriggers,
                          prompt.callClose};
    if (Engine::outputConstraintProblem(lazy).empty()) out = std::move(lazy);
}

void copyGeneration(const GenerationFields& gen, PreparedRequest& p) {
    p.stream = gen.stream;
    p.includeUsage = gen.stream && gen.includeUsage;
    p.logprobs = gen.logprobs;
}

// The n choices of one prompt: the same request, each with its own seed
// (consecutive from the client's seed, so a seeded request repeats).
void addChoices(GenerateRequest base, int prompt, const std::string& echo, const GenerationFields& gen,
                PreparedRequest& p) {
    base.stopAtEndOfGeneration = !gen.ignoreEos;
    base.topLogprobs = gen.logprobs ? gen.topLogprobs : -1;
    for (int i = 0; i < gen.n; ++i) {
        PreparedChoice choice;
        choice.generate = base;
        choice.generate.sampling.seed =
            gen.seedGiven ? gen.sampling.seed + uint64_t(i) : QRandomGenerator::global()->generate64();
        choice.prompt = prompt;
        choice.echo = echo;
        p.choices.push_back(std::move(choice));
    }
}

} // namespace

namespace {

// A chat request, however it came in, ready for the engine.
PreparedRequest prepareChat(const ChatRequest& cr, const PreparationContext& c, bool countOnly) {
    ApiError err;
    if (!cr.model.isEmpty() && !c.model.matches(cr.model)) return failed(c.model.unknown(cr.model));
    if (auto e = checkLogitBias(cr.gen, c)) return failed(*e);
    OutputConstraint constraint;
    if (auto e = chooseConstraint(cr, constraint)) return failed(*e);
    PreparedChat prompt;
    if (!buildChatPrompt(cr, *c.engine, prompt, err)) return failed(err);
    PreparedRequest p;
    p.promptTokens = int(prompt.prompt.size());
    if (countOnly) {
        p.countOnly = true;
        return p;
    }
    if (auto e = checkContext(prompt.prompt.size(), cr.gen.maxTokens, c, true)) return failed(*e);
    armCallConstraint(cr, prompt, constraint);
    p.chat = true;
    p.clientStops = cr.gen.stop;
    p.model = cr.model.isEmpty() ? c.model.id : cr.model;
    p.parallelToolCalls = cr.parallelToolCalls;
    copyGeneration(cr.gen, p);
    GenerateRequest base;
    base.sampling = cr.gen.sampling;
    base.maxTokens = maxTokensFor(prompt.prompt.size(), cr.gen.maxTokens, c);
    base.prompt = std::move(prompt.prompt);
    base.stop = prompt.stop;
    base.showSpecialTokens = prompt.showSpecialTokens;
    base.constraint = std::move(constraint);
    addChoices(std::move(base), 0, {}, cr.gen, p);
    if (common::forcesToolCall(cr.toolChoice)) {
        for (PreparedChoice& choice : p.choices) choice.forcedCall = true;
    } else if (prompt.toolsActive) {
        for (PreparedChoice& choice : p.choices) {
            choice.reader = c.engine->toolCallReader(prompt.toolNames);
            choice.reader->push(prompt.forcedPrefix);  // held: it opens a call
        }
    }
    return p;
}

PreparedRequest withDialect(PreparedRequest p, ApiDialect dialect) {
    p.dialect = dialect;
    return p;
}

} // namespace

PreparedRequest prepareChatCompletion(const QByteArray& body, const PreparationContext& c) {
    ChatRequest cr;
    ApiError err;
    if (!parseChatRequest(body, cr, err)) return failed(err);
    return prepareChat(cr, c, false);
}

PreparedRequest prepareAnthropicMessages(const QByteArray& body, const PreparationContext& c, bool countOnly) {
    QJsonObject chat;
    ChatRequest cr;
    ApiError err;
    if (!anthropicToChatBody(body, chat, err, countOnly) || !parseChatObject(chat, cr, err))
        return withDialect(failed(err), ApiDialect::Anthropic);
    keepToolsOrder(body, QStringLiteral("input_schema"), cr);
    // Coding agents name Claude models: whatever the name, the served model
    // answers, and the answer names it.
    cr.model.clear();
    return withDialect(prepareChat(cr, c, countOnly), ApiDialect::Anthropic);
}

PreparedRequest prepareResponses(const QByteArray& body, const PreparationContext& c) {
    QJsonObject chat, echo;
    ChatRequest cr;
    ApiError err;
    if (!responsesToChatBody(body, chat, echo, err) || !parseChatObject(chat, cr, err))
        return withDialect(failed(err), ApiDialect::Responses);
    keepSchemaOrder(body, {QStringLiteral("text"), QStringLiteral("format"), QStringLiteral("schema")},
                    cr.responseFormat);
    keepToolsOrder(body, QStringLiteral("parameters"), cr);
    PreparedRequest p = withDialect(prepareChat(cr, c, false), ApiDialect::Responses);
    p.echo = std::move(echo);
    return p;
}

PreparedRequest prepareEmbeddings(const QByteArray& body, const PreparationContext& c) {
    EmbeddingsRequest er;
    ApiError err;
    if (!parseEmbeddingsRequest(body, er, err)) return failed(err);
    if (!er.model.isEmpty() && !c.model.matches(er.model)) return failed(c.model.unknown(er.model));
    PreparedRequest p;
    p.chat = false;
    p.embeddings = true;
    p.base64 = er.base64;
    p.model = er.model.isEmpty() ? c.model.id : er.model;
    const int32_t vocab = c.engine->vocabSize();
    for (size_t i = 0; i < er.inputs.size(); ++i) {
        const CompletionPrompt& in = er.inputs[i];
        const QString param = er.inputs.size() > 1 ? QStringLiteral("input[%1]").arg(i) : QStringLiteral("input");
        PreparedChoice choice;
        if (in.isTokens) {
            for (int32_t t : in.tokens)
                if (t >= vocab)
                    return failed(ApiError::invalid(
                        param, QStringLiteral("Token id %1 is outside the vocabulary (%2 tokens).").arg(t).arg(vocab),
                        QStringLiteral("invalid_value")));
            choice.generate.prompt = in.tokens;
        } else {
            // Text to embed is text: control-token names in it stay text.
            choice.generate.prompt = c.engine->tokenize(in.text, true);
        }
        // The input and nothing else must fit (no completion token follows).
        if (int64_t(choice.generate.prompt.size()) >= c.contextLimit)
            return failed(ApiError::invalid(param,
                                            QStringLiteral("This model's maximum context length is %1 tokens, however "
                                                           "you requested %2 tokens in the input. Please reduce the "
                                                           "length of the input.")
                                                .arg(c.contextLimit)
                                                .arg(choice.generate.prompt.size()),
                                            QStringLiteral("context_length_exceeded")));
        choice.generate.embed = true;
        choice.prompt = int(i);
        if (i == 0) p.promptTokens = int(choice.generate.prompt.size());
        p.choices.push_back(std::move(choice));
    }
    return p;
}

PreparedRequest prepareCompletion(const QByteArray& body, const PreparationContext& c) {
    CompletionRequest cr;
    ApiError err;
    if (!parseCompletionRequest(body, cr, err)) return failed(err);
    if (!cr.model.isEmpty() && !c.model.matches(cr.model)) return failed(c.model.unknown(cr.model));
    if (auto e = checkLogitBias(cr.gen, c)) return failed(*e);
    PreparedRequest p;
    p.chat = false;
    p.dialect = ApiDialect::OpenAiCompletion;
    p.model = cr.model.isEmpty() ? c.model.id : cr.model;
    copyGeneration(cr.gen, p);
    const int32_t vocab = c.engine->vocabSize();
    if (cr.suffix && !fillInMiddlePrompt(*c.engine, {}, {}))
        return failed(ApiError::invalid(QStringLiteral("suffix"),
                                        QStringLiteral("Invalid value for 'suffix': the model %1 has no fill-in-the-middle "
                                                       "tokens (<|fim_prefix|>, <|fim_suffix|>, <|fim_middle|> or "
                                                       "<fim_prefix>, ...), so it cannot complete between a prompt and "
                                                       "a suffix.")
                                            .arg(c.model.id),
                                        QStringLiteral("invalid_value")));
    for (size_t i = 0; i < cr.prompts.size(); ++i) {
        const CompletionPrompt& prompt = cr.prompts[i];
        const QString param = cr.prompts.size() > 1 ? QStringLiteral("prompt[%1]").arg(i) : QStringLiteral("prompt");
        GenerateRequest base;
        std::string echo;
        if (prompt.isTokens) {
            for (int32_t t : prompt.tokens)
                if (t >= vocab)
                    return failed(ApiError::invalid(
                        param, QStringLiteral("Token id %1 is outside the vocabulary (%2 tokens).").arg(t).arg(vocab),
                        QStringLiteral("invalid_value")));
            base.prompt = prompt.tokens;
            if (cr.echo) echo = c.engine->detokenize(prompt.tokens);
        } else {
            // A raw prompt is the client's own template: its special tokens count.
            base.prompt = c.engine->tokenizePrompt(
                cr.suffix ? *fillInMiddlePrompt(*c.engine, prompt.text, *cr.suffix) : prompt.text);
            if (cr.echo) echo = prompt.text;
        }
        if (auto e = checkContext(base.prompt.size(), cr.gen.maxTokens, c, false)) {
            e->param = param;
            return failed(*e);
        }
        base.sampling = cr.gen.sampling;
        base.maxTokens = maxTokensFor(base.prompt.size(), cr.gen.maxTokens.value_or(16), c);
        base.stop = cr.gen.stop;
        // Special tokens are not text unless the client asks for them.
        base.showSpecialTokens = !cr.skipSpecialTokens;
        addChoices(std::move(base), int(i), echo, cr.gen, p);
    }
    return p;
}

} // namespace weir::server

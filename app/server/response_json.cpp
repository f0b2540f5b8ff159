#include "app/server/response_json.h"

#include "app/common/client_tag_kinds.h"

#include <QJsonDocument>
#include <cmath>
#include <cstring>

namespace weir::server {

namespace {

QString qs(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QJsonValue nullOr(const QString& s) { return s.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(s); }

QJsonObject poolJson(const PoolStatus& p) {
    QJsonObject o;
    o.insert(QStringLiteral("name"), QString::fromLatin1(poolKindName(p.kind)));
    o.insert(QStringLiteral("capacity_tokens"), qint64(p.capacityTokens));
    o.insert(QStringLiteral("free_tokens"), qint64(p.freeTokens));
    o.insert(QStringLiteral("owned_tokens"), qint64(p.ownedTokens));
    o.insert(QStringLiteral("cached_tokens"), qint64(p.cachedTokens));
    o.insert(QStringLiteral("floor_tokens"), qint64(p.floorTokens));
    o.insert(QStringLiteral("bytes_per_token"), qint64(p.bytesPerToken));
    o.insert(QStringLiteral("total_bytes"), qint64(p.totalBytes));
    return o;
}

} // namespace

QJsonObject usageJson(const Usage& u) {
    QJsonObject details;
    details.insert(QStringLiteral("cached_tokens"), u.cachedPromptTokens);
    QJsonObject o;
    o.insert(QStringLiteral("prompt_tokens"), u.promptTokens);
    o.insert(QStringLiteral("completion_tokens"), u.completionTokens);
    o.insert(QStringLiteral("total_tokens"), u.promptTokens + u.completionTokens);
    o.insert(QStringLiteral("prompt_tokens_details"), details);
    // The engine's own numbers under a name of its own (as llama.cpp's
    // server has "timings"): OpenAI's completion_tokens_details prediction
    // fields mean Predicted Outputs, which these drafts are not.
    QJsonObject weir;
    weir.insert(QStringLiteral("draft_tokens"), u.draftTokens);
    weir.insert(QStringLiteral("accepted_draft_tokens"), u.acceptedDraftTokens);
    o.insert(QStringLiteral("weir"), weir);
    return o;
}

QJsonArray toolCallsJson(const std::vector<ToolCall>& calls, int firstIndex, bool withIndex) {
    QJsonArray a;
    int index = firstIndex;
    for (const ToolCall& c : calls) {
        QJsonObject fn;
        fn.insert(QStringLiteral("name"), qs(c.name));
        fn.insert(QStringLiteral("arguments"), qs(c.arguments));
        QJsonObject o;
        if (withIndex) o.insert(QStringLiteral("index"), index);
        o.insert(QStringLiteral("id"), qs(c.id));
        o.insert(QStringLiteral("type"), QStringLiteral("function"));
        o.insert(QStringLiteral("function"), fn);
        a.append(o);
        ++index;
    }
    return a;
}

QJsonObject embeddingsJson(const QString& model, const std::vector<std::vector<float>>& vectors, bool base64,
                           const QString& pooling, int promptTokens) {
    QJsonArray data;
    for (size_t i = 0; i < vectors.size(); ++i) {
        QJsonValue embedding;
        if (base64) {
            QByteArray bytes;
            bytes.reserve(qsizetype(vectors[i].size() * 4));
            for (float f : vectors[i]) {
                uint32_t u;
                std::memcpy(&u, &f, 4);
                for (int b = 0; b < 4; ++b) bytes.append(char((u >> (8 * b)) & 0xff));
            }
            embedding = QString::fromLatin1(bytes.toBase64());
        } else {
            QJsonArray a;
            for (float f : vectors[i]) a.append(double(f));
            embedding = a;
        }
        data.append(QJsonObject{{QStringLiteral("object"), QStringLiteral("embedding")},
                                {QStringLiteral("index"), int(i)},
                                {QStringLiteral("embedding"), embedding}});
    }
    return {{QStringLiteral("object"), QStringLiteral("list")},
            {QStringLiteral("data"), data},
            {QStringLiteral("model"), model},
            {QStringLiteral("pooling"), pooling},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), promptTokens},
                                                  {QStringLiteral("total_tokens"), promptTokens}}}};
}

QString finishReasonName(FinishReason reason) {
    return reason == FinishReason::Length ? QStringLiteral("length") : QStringLiteral("stop");
}

namespace {

// OpenAI writes an impossible token's log probability as -9999.0 (JSON has no -inf).
double finiteLogprob(float lp) { return std::isfinite(lp) ? double(lp) : -9999.0; }

QString tokenString(const std::string& bytes) { return QString::fromUtf8(bytes.data(), qsizetype(bytes.size())); }

QJsonArray bytesJson(const std::string& bytes) {
    QJsonArray a;
    for (unsigned char b : bytes) a.append(int(b));
    return a;
}

QJsonObject tokenJson(const TokenLogprob& t) {
    return {{QStringLiteral("token"), tokenString(t.bytes)},
            {QStringLiteral("logprob"), finiteLogprob(t.logprob)},
            {QStringLiteral("bytes"), bytesJson(t.bytes)}};
}

void addHeader(QJsonObject& o, const AnswerHeader& h, const QString& object) {
    o.insert(QStringLiteral("id"), h.id);
    o.insert(QStringLiteral("object"), object);
    o.insert(QStringLiteral("created"), h.created);
    o.insert(QStringLiteral("model"), h.model);
    o.insert(QStringLiteral("system_fingerprint"), h.fingerprint);
}

} // namespace

QJsonObject chatLogprobsJson(const std::vector<TokenLogprobs>& tokens) {
    QJsonArray content;
    for (const TokenLogprobs& t : tokens) {
        QJsonObject o = tokenJson(t.chosen);
        QJsonArray top;
        for (const TokenLogprob& alt : t.top) top.append(tokenJson(alt));
        o.insert(QStringLiteral("top_logprobs"), top);
        content.append(o);
    }
    return {{QStringLiteral("content"), content}, {QStringLiteral("refusal"), QJsonValue::Null}};
}

qint64 textLength(const std::string& bytes) { return tokenString(bytes).toUcs4().size(); }

QJsonObject completionLogprobsJson(const std::vector<TokenLogprobs>& tokens, qint64 textOffset) {
    QJsonArray names, logprobs, tops, offsets;
    for (const TokenLogprobs& t : tokens) {
        names.append(tokenString(t.chosen.bytes));
        logprobs.append(finiteLogprob(t.chosen.logprob));
        // The alternatives and, as OpenAI's legacy API does, the chosen token.
        QJsonObject top;
        for (const TokenLogprob& alt : t.top) top.insert(tokenString(alt.bytes), finiteLogprob(alt.logprob));
        top.insert(tokenString(t.chosen.bytes), finiteLogprob(t.chosen.logprob));
        tops.append(top);
        offsets.append(textOffset);
        textOffset += textLength(t.chosen.bytes);
    }
    return {{QStringLiteral("tokens"), names},
            {QStringLiteral("token_logprobs"), logprobs},
            {QStringLiteral("top_logprobs"), tops},
            {QStringLiteral("text_offset"), offsets}};
}

QJsonObject chatCompletionJson(const AnswerHeader& h, const std::vector<ChatChoice>& choices, const Usage& usage) {
    QJsonArray list;
    for (size_t i = 0; i < choices.size(); ++i) {
        const ChatChoice& c = choices[i];
        QJsonObject message;
        message.insert(QStringLiteral("role"), QStringLiteral("assistant"));
        message.insert(QStringLiteral("content"), c.content.empty() && !c.calls.empty() ? QJsonValue(QJsonValue::Null)
                                                                                        : QJsonValue(qs(c.content)));
        if (!c.calls.empty()) message.insert(QStringLiteral("tool_calls"), toolCallsJson(c.calls, 0, false));
        QJsonObject choice;
        choice.insert(QStringLiteral("index"), int(i));
        choice.insert(QStringLiteral("message"), message);
        choice.insert(QStringLiteral("logprobs"), c.logprobs);
        choice.insert(QStringLiteral("finish_reason"), c.finishReason);
        list.append(choice);
    }
    QJsonObject o;
    addHeader(o, h, QStringLiteral("chat.completion"));
    o.insert(QStringLiteral("choices"), list);
    o.insert(QStringLiteral("usage"), usageJson(usage));
    return o;
}

QJsonObject chatChunkJson(const AnswerHeader& h, int index, const QJsonObject& delta, const QString& finishReason,
                          const QJsonValue& logprobs, bool withUsageNull) {
    QJsonObject choice;
    choice.insert(QStringLiteral("index"), index);
    choice.insert(QStringLiteral("delta"), delta);
    choice.insert(QStringLiteral("logprobs"), logprobs);
    choice.insert(QStringLiteral("finish_reason"), nullOr(finishReason));
    QJsonObject o;
    addHeader(o, h, QStringLiteral("chat.completion.chunk"));
    o.insert(QStringLiteral("choices"), QJsonArray{choice});
    if (withUsageNull) o.insert(QStringLiteral("usage"), QJsonValue::Null);
    return o;
}

QJsonObject usageChunkJson(const AnswerHeader& h, const QString& object, const Usage& usage) {
    QJsonObject o;
    addHeader(o, h, object);
    o.insert(QStringLiteral("choices"), QJsonArray{});
    o.insert(QStringLiteral("usage"), usageJson(usage));
    return o;
}

QJsonObject textCompletionJson(const AnswerHeader& h, const std::vector<TextChoice>& choices, const Usage* usage,
                               int firstIndex) {
    QJsonArray list;
    for (size_t i = 0; i < choices.size(); ++i) {
        QJsonObject choice;
        choice.insert(QStringLiteral("text"), qs(choices[i].text));
        choice.insert(QStringLiteral("index"), firstIndex + int(i));
        choice.insert(QStringLiteral("logprobs"), choices[i].logprobs);
        choice.insert(QStringLiteral("finish_reason"), nullOr(choices[i].finishReason));
        list.append(choice);
    }
    QJsonObject o;
    addHeader(o, h, QStringLiteral("text_completion"));
    o.insert(QStringLiteral("choices"), list);
    if (usage) o.insert(QStringLiteral("usage"), usageJson(*usage));
    return o;
}

QJsonObject cacheStatusJson(const CacheStatus& s, int maxRunning) {
    QJsonArray requests;
    for (const RequestStatus& r : s.requests) {
        QJsonObject o;
        o.insert(QStringLiteral("id"), qint64(r.id));
        // This server's requests by their key; the host app's own requests as "app".
        o.insert(QStringLiteral("client"), r.tag.kind == common::kApiRequestTagKind ? QStringLiteral("api:%1").arg(r.tag.id)
                                                                            : QStringLiteral("app"));
        o.insert(QStringLiteral("state"), QString::fromLatin1(requestStateName(r.state)));
        o.insert(QStringLiteral("full_tokens"), qint64(r.fullTokens));
        o.insert(QStringLiteral("window_tokens"), qint64(r.windowTokens));
        o.insert(QStringLiteral("prefix_hit_tokens"), qint64(r.prefixHitTokens));
        o.insert(QStringLiteral("prompt_tokens"), r.promptTokens);
        o.insert(QStringLiteral("generated_tokens"), r.generatedTokens);
        requests.append(o);
    }
    QJsonArray details;
    for (const std::string& d : s.violationDetails) details.append(qs(d));
    QJsonObject o;
    o.insert(QStringLiteral("full"), poolJson(s.full));
    o.insert(QStringLiteral("window"), poolJson(s.window));
    o.insert(QStringLiteral("requests"), requests);
    o.insert(QStringLiteral("running"), s.running);
    o.insert(QStringLiteral("max_running"), maxRunning);
    o.insert(QStringLiteral("waiting"), s.waiting);
    o.insert(QStringLiteral("device"), qs(s.device));  // where both pools live: "cpu" or "cuda:N"
    o.insert(QStringLiteral("device_name"), qs(s.deviceName));
    o.insert(QStringLiteral("deferrals"), qint64(s.deferrals));
    o.insert(QStringLiteral("preemptions"), qint64(s.preemptions));
    o.insert(QStringLiteral("refusals"), qint64(s.refusals));
    o.insert(QStringLiteral("prefix_hit_tokens"), qint64(s.prefixHitTokens));
    o.insert(QStringLiteral("integrity_checks"), qint64(s.integrityChecks));
    o.insert(QStringLiteral("violations"), qint64(s.violations));
    o.insert(QStringLiteral("violation_details"), details);
    return o;
}

QByteArray sseEvent(const QJsonObject& o) {
    return QByteArrayLiteral("data: ") + QJsonDocument(o).toJson(QJsonDocument::Compact) + QByteArrayLiteral("\n\n");
}

} // namespace weir::server

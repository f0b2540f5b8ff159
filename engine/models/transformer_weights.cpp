#include "engine/models/transformer_weights.h"

#include <string>

#include "weir/base/error.h"

namespace weir {

namespace {

const float* boundVector(ModelTensors& t, const std::string& name, int64_t n, Presence p) {
    if (p == Presence::Absent) return nullptr;
    return t.vector(name, n, p == Presence::Required);
}

} // namespace

TransformerWeights bindTransformerWeights(const std::string& path, const ModelConfig& c, ModelTensors& t,
                                          const TensorSet& set) {
    const int64_t E = c.nEmbd, V = c.nVocab, F = c.nFf, hd = c.headDimK;
    const int64_t qDim = c.nHead * hd, kvDim = c.nHeadKv * hd;

    TransformerWeights w;
    w.tokEmbd = t.matrix("token_embd.weight", E, V);
    w.outputNorm = t.vector("output_norm.weight", E);
    w.output = t.has("output.weight") ? t.matrix("output.weight", E, V) : w.tokEmbd;
    w.ropeFreqs = boundVector(t, "rope_freqs.weight", c.nRot / 2, set.ropeFreqs);
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        LayerWeights L;
        L.attnNorm = t.vector(p + "attn_norm.weight", E);
        L.wq = t.matrix(p + "attn_q.weight", E, qDim);
        L.wk = t.matrix(p + "attn_k.weight", E, kvDim);
        L.wv = t.matrix(p + "attn_v.weight", E, kvDim);
        L.wo = t.matrix(p + "attn_output.weight", qDim, E);
        L.bq = boundVector(t, p + "attn_q.bias", qDim, set.biases);
        L.bk = boundVector(t, p + "attn_k.bias", kvDim, set.biases);
        L.bv = boundVector(t, p + "attn_v.bias", kvDim, set.biases);
        L.bo = boundVector(t, p + "attn_output.bias", E, set.biases);
        L.qNorm = boundVector(t, p + "attn_q_norm.weight", hd, set.qkNorms);
        L.kNorm = boundVector(t, p + "attn_k_norm.weight", hd, set.qkNorms);
        if (!L.qNorm != !L.kNorm)
            throw Error(path + ": layer " + std::to_string(il) + " has only one of attn_q_norm/attn_k_norm");
        L.postAttnNorm = boundVector(t, p + "post_attention_norm.weight", E, set.postNorms);
        L.ffnNorm = t.vector(p + "ffn_norm.weight", E);
        L.gate = t.matrix(p + "ffn_gate.weight", E, F);
        L.up = t.matrix(p + "ffn_up.weight", E, F);
        L.down = t.matrix(p + "ffn_down.weight", F, E);
        L.postFfnNorm = boundVector(t, p + "post_ffw_norm.weight", E, set.postNorms);
        w.layers.push_back(L);
    }
    return w;
}

} // namespace weir

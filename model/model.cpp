#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>

#include "hal/error.h"
#include "ops/ops.h"

namespace hal::model {

namespace {

// A view at element `offset` of `buffer` whose data pointer is that element
// (offset 0), so that a copy of the view's storage starts there.
Tensor view_at(const Buffer& buffer, DType dt, std::int64_t offset, const Shape& shape, const Strides& strides) {
  Tensor t;
  t.data = static_cast<char*>(buffer.data()) + offset * static_cast<std::int64_t>(dtype_size(dt));
  t.device = buffer.device();
  t.dtype = dt;
  t.shape = shape;
  t.strides = strides;
  return t;
}

Tensor contiguous_at(const Buffer& buffer, DType dt, std::int64_t offset, const Shape& shape) {
  return view_at(buffer, dt, offset, shape, contiguous_strides(shape));
}

// Whether any linear runs through gemm_fp8 (and the step needs its workspace).
bool has_fp8_linear(const Weights& w) {
  if (w.lm_head.scales) return true;
  for (const LayerWeights& l : w.layers) {
    for (const Linear* x : {&l.o, &l.down})
      if (x->scales) return true;
    for (const LinearGroup* g : {&l.qkv, &l.gate_up})
      for (const Linear& x : g->linears)
        if (x.scales) return true;
  }
  return false;
}

// Columns [c0, c0 + n) of a [rows, cols] view.
Tensor columns_of(const Tensor& t, std::int64_t c0, std::int64_t n) {
  Tensor v = t;
  v.offset += c0 * t.strides[1];
  v.shape[1] = n;
  return v;
}

}  // namespace

Model::Model(const Checkpoint& checkpoint, Device& device, DType dtype, const LoadOptions& options)
    : config_(checkpoint.config()), device_(&device), stream_(device),
      weights_(upload_weights(checkpoint, device, dtype, stream_, options)) {}

Session::Session(Model& model, std::int64_t batch, std::int64_t max_len)
    : model_(model), batch_(batch), max_len_(max_len), lengths_(static_cast<std::size_t>(batch), 0) {
  const ModelConfig& c = model.config();
  if (batch <= 0 || max_len <= 0)
    throw_invalid_argument("model session", "batch, max_len", "positive sizes",
                           fmt::format("batch {}, max_len {}", batch, max_len));
  const Shape cache{batch, max_len, c.num_kv_heads, c.head_dim};
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    k_cache_.push_back(Buffer::for_tensor(model.device(), model.dtype(), cache));
    v_cache_.push_back(Buffer::for_tensor(model.device(), model.dtype(), cache));
  }
  Device& dev = model.device();
  last_ = Buffer::for_tensor(dev, model.dtype(), Shape{batch, c.hidden_size});
  last_norm_ = Buffer::for_tensor(dev, model.dtype(), Shape{batch, c.hidden_size});
  logits_ = Buffer::for_tensor(dev, model.dtype(), Shape{batch, c.vocab_size});
  last_index_ = Buffer::for_tensor(dev, DType::i32, Shape{batch});
}

Tensor Session::rows(Buffer& b, std::int64_t t, std::int64_t cols) {
  return contiguous_at(b, model_.dtype(), 0, Shape{t, cols});
}

void Session::run(const StageInfo& where, const OpCall& call) {
  Stream& s = model_.stream();
  if (observer_) observer_->before_op(where, call, s);
  ops::run(s, call);
  if (observer_) observer_->after_op(where, call, s);
}

void Session::attend(int layer, std::int64_t b0, std::int64_t b1, std::int64_t t0, std::int64_t n, std::int64_t past) {
  const ModelConfig& c = model_.config();
  const DType dt = model_.dtype();
  const std::int64_t nb = b1 - b0, d = c.head_dim, hq = c.num_heads, hkv = c.num_kv_heads;
  const std::int64_t kv_row = hkv * d;
  const Strides cache_strides{max_len_ * kv_row, kv_row, d, 1};
  const Buffer& kc = k_cache_[static_cast<std::size_t>(layer)];
  const Buffer& vc = v_cache_[static_cast<std::size_t>(layer)];
  const std::int64_t cache0 = b0 * max_len_ * kv_row;
  const StageInfo at{layer, "", b0, b1};
  auto where = [&](std::string_view stage) {
    StageInfo w = at;
    w.stage = stage;
    return w;
  };

  // k and v: column blocks of the fused projection's rows [T, q | k | v].
  const std::int64_t qkv_row = (hq + 2 * hkv) * d;
  const Strides new_strides{n * qkv_row, qkv_row, d, 1};
  const Tensor k_new = view_at(qkv_, dt, t0 * qkv_row + hq * d, Shape{nb, n, hkv, d}, new_strides);
  const Tensor v_new = view_at(qkv_, dt, t0 * qkv_row + (hq + hkv) * d, Shape{nb, n, hkv, d}, new_strides);
  const Tensor pos = contiguous_at(positions_, DType::i32, t0, Shape{nb, n});
  RopeCall rope{k_new, pos, view_at(kc, dt, cache0 + past * kv_row, Shape{nb, n, hkv, d}, cache_strides),
                static_cast<float>(c.rope_theta), RopeStyle::neox, 0, model_.weights().rope_inv_freq};
  run(where("rope_k"), rope);
  run(where("cache_v"), CopyCall{v_new, view_at(vc, dt, cache0 + past * kv_row, Shape{nb, n, hkv, d}, cache_strides)});

  AttentionCall a;
  a.q = contiguous_at(q_rot_, dt, t0 * hq * d, Shape{nb, n, hq, d});
  a.k = view_at(kc, dt, cache0, Shape{nb, past + n, hkv, d}, cache_strides);
  a.v = view_at(vc, dt, cache0, Shape{nb, past + n, hkv, d}, cache_strides);
  a.y = contiguous_at(attn_, dt, t0 * hq * d, Shape{nb, n, hq, d});
  a.causal = true;
  run(where("attention"), a);
}

Tensor Session::step(std::span<const std::vector<std::int32_t>> tokens, StepObserver* observer) {
  const ModelConfig& c = model_.config();
  const DType dt = model_.dtype();
  Device& dev = model_.device();
  Stream& s = model_.stream();
  const std::string_view op = "model step";
  if (static_cast<std::int64_t>(tokens.size()) != batch_)
    throw_invalid_argument(op, "tokens", fmt::format("{} sequences (the session's batch)", batch_),
                           std::to_string(tokens.size()));
  std::int64_t total = 0;
  bool uniform = true;
  for (std::int64_t i = 0; i < batch_; ++i) {
    const auto& seq = tokens[static_cast<std::size_t>(i)];
    const std::int64_t len = lengths_[static_cast<std::size_t>(i)], n = static_cast<std::int64_t>(seq.size());
    if (n == 0) throw_invalid_argument(op, "tokens", "at least one new token per sequence", fmt::format("none for sequence {}", i));
    if (len + n > max_len_)
      throw_invalid_argument(op, "tokens", fmt::format("at most {} tokens per sequence (max_len)", max_len_),
                             fmt::format("{} for sequence {}", len + n, i));
    if (c.sliding_window && len + n > *c.sliding_window)
      throw Error(ErrorCode::unsupported,
                  fmt::format("{}: sliding_window {} is not implemented: sequence {} would reach {} tokens (up to "
                              "the window, attention is exact)", c.architecture_name, *c.sliding_window, i, len + n));
    for (std::int32_t id : seq)
      if (id < 0 || id >= c.vocab_size)
        throw_invalid_argument(op, "tokens", fmt::format("ids in [0, {}) (vocab_size)", c.vocab_size),
                               fmt::format("{} in sequence {}", id, i));
    if (n != static_cast<std::int64_t>(tokens[0].size()) || len != lengths_[0]) uniform = false;
    total += n;
  }
  const std::int64_t T = total, H = c.hidden_size, F = c.intermediate_size;
  const std::int64_t q_cols = c.num_heads * c.head_dim, kv_cols = c.num_kv_heads * c.head_dim;

  if (T > capacity_) {
    auto grow = [&](Buffer& b, DType t, std::int64_t cols) { b = Buffer::for_tensor(dev, t, Shape{T, cols}); };
    grow(x_, dt, H), grow(h_, dt, H), grow(qkv_, dt, q_cols + 2 * kv_cols);
    grow(q_rot_, dt, q_cols), grow(attn_, dt, q_cols), grow(gate_up_, dt, 2 * F), grow(act_, dt, F);
    grow(ids_, DType::i32, 1), grow(positions_, DType::i32, 1);
    const bool fp8 = has_fp8_linear(model_.weights());
    if (fp8) {
      const std::int64_t k_max = std::max({H, F, q_cols});
      grow(fp8_act_, DType::f8e4m3, k_max);
      grow(fp8_act_scales_, DType::f32, (k_max + kFp8BlockSize - 1) / kFp8BlockSize);
    }
    capacity_ = T;
  }
  host_ids_.clear();
  host_positions_.clear();
  host_last_.clear();
  for (std::int64_t i = 0; i < batch_; ++i) {
    const auto& seq = tokens[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < seq.size(); ++j) {
      host_ids_.push_back(seq[j]);
      host_positions_.push_back(static_cast<std::int32_t>(lengths_[static_cast<std::size_t>(i)] + static_cast<std::int64_t>(j)));
    }
    host_last_.push_back(static_cast<std::int32_t>(host_ids_.size() - 1));
  }
  observer_ = observer;
  tokens_ = T;
  const Tensor ids = contiguous_at(ids_, DType::i32, 0, Shape{T});
  const Tensor positions = contiguous_at(positions_, DType::i32, 0, Shape{T});
  const Tensor last_index = contiguous_at(last_index_, DType::i32, 0, Shape{batch_});
  s.upload(ids, host_ids_.data());
  s.upload(positions, host_positions_.data());
  s.upload(last_index, host_last_.data());

  const Weights& w = model_.weights();
  const Tensor x = rows(x_, T, H), h = rows(h_, T, H), qkv = rows(qkv_, T, q_cols + 2 * kv_cols),
               attn = rows(attn_, T, q_cols), gate_up = rows(gate_up_, T, 2 * F), act = rows(act_, T, F);
  const float eps = static_cast<float>(c.rms_norm_eps);
  auto linear = [&](const StageInfo& at, const Tensor& a, const Linear& l, const Tensor& y, bool accumulate) {
    if (l.scales) {
      // DeepSeek-V3's recipe: the activation in e4m3 per 1 x 128 group, then
      // the block-scaled GEMM (rows of a: at most T, the workspace's rows).
      const std::int64_t m = a.shape[0], kdim = a.shape[1];
      const Tensor qa = contiguous_at(fp8_act_, DType::f8e4m3, 0, Shape{m, kdim});
      const Tensor qs = contiguous_at(fp8_act_scales_, DType::f32, 0, Shape{m, (kdim + kFp8BlockSize - 1) / kFp8BlockSize});
      run(at, QuantizeFp8Call{a, qa, qs, Fp8Block::row_1x128, false});
      GemmFp8Call g{qa, qs, l.weight, *l.scales, y, {}};
      g.epilogue.bias = l.bias;
      g.epilogue.beta = accumulate ? 1.0f : 0.0f;
      run(at, g);
      return;
    }
    GemmCall g;
    g.a = a;
    g.b = l.weight;
    g.c = y;
    if (l.column_blocks > 1) {
      // y's column blocks as the batch of a [blocks, rows, width] result (a broadcast).
      const std::int64_t width = l.weight.shape[2];
      g.c.shape = Shape{l.column_blocks, y.shape[0], width};
      g.c.strides = Strides{width * y.strides[1], y.strides[0], y.strides[1]};
    }
    g.bias = l.bias;
    g.trans_b = l.trans_b;
    g.beta = accumulate ? 1.0f : 0.0f;
    run(at, g);
  };
  auto at = [&](int layer, std::string_view stage) { return StageInfo{layer, stage, 0, batch_}; };
  // A group's outputs as the column blocks of y: one GEMM when fused (stage
  // `fused`), else one per part (stages `parts`), each into its columns.
  auto project = [&](int layer, std::string_view fused, std::initializer_list<std::string_view> parts,
                     const Tensor& a, const LinearGroup& g, const Tensor& y) {
    if (g.linears.size() == 1) return linear(at(layer, fused), a, g.linears.front(), y, false);
    std::int64_t c0 = 0;
    for (std::size_t i = 0; i < g.linears.size(); ++i) {
      const std::int64_t n = output_columns(g.linears[i]);
      linear(at(layer, parts.begin()[i]), a, g.linears[i], columns_of(y, c0, n), false);
      c0 += n;
    }
  };

  run(at(-1, "embedding"), EmbeddingCall{w.embedding, ids, x});
  if (observer_) observer_->hidden(-1, x, s);
  for (int l = 0; l < static_cast<int>(c.num_layers); ++l) {
    const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
    run(at(l, "attn_norm"), NormCall{x, lw.attn_norm, std::nullopt, h, eps, true});
    project(l, "qkv_proj", {"q_proj", "k_proj", "v_proj"}, h, lw.qkv, qkv);
    const Shape q_heads{1, T, c.num_heads, c.head_dim};
    const Tensor q = view_at(qkv_, dt, 0, q_heads, Strides{T * qkv.shape[1], qkv.shape[1], c.head_dim, 1});
    run(at(l, "rope_q"), RopeCall{q, positions, contiguous_at(q_rot_, dt, 0, q_heads),
                                  static_cast<float>(c.rope_theta), RopeStyle::neox, 0, w.rope_inv_freq});
    if (uniform) {
      attend(l, 0, batch_, 0, T / batch_, lengths_[0]);
    } else {
      std::int64_t t0 = 0;
      for (std::int64_t i = 0; i < batch_; ++i) {
        const auto n = static_cast<std::int64_t>(tokens[static_cast<std::size_t>(i)].size());
        attend(l, i, i + 1, t0, n, lengths_[static_cast<std::size_t>(i)]);
        t0 += n;
      }
    }
    linear(at(l, "o_proj"), attn, lw.o, x, true);  // x += attn W_o^T
    run(at(l, "mlp_norm"), NormCall{x, lw.mlp_norm, std::nullopt, h, eps, true});
    project(l, "gate_up_proj", {"gate_proj", "up_proj"}, h, lw.gate_up, gate_up);
    run(at(l, "swiglu"), SwigluCall{columns_of(gate_up, 0, F), columns_of(gate_up, F, F), act});
    linear(at(l, "down_proj"), act, lw.down, x, true);  // x += act W_down^T
    if (observer_) observer_->hidden(l, x, s);
  }

  const int top = static_cast<int>(c.num_layers);
  Tensor last = x;
  if (T != batch_) {  // prefill: each sequence's last token
    last = rows(last_, batch_, H);
    run(at(top, "last_tokens"), EmbeddingCall{x, last_index, last});
  }
  const Tensor last_norm = rows(last_norm_, batch_, H);
  run(at(top, "final_norm"), NormCall{last, w.final_norm, std::nullopt, last_norm, eps, true});
  const Tensor logits = rows(logits_, batch_, c.vocab_size);
  linear(at(top, "lm_head"), last_norm, w.lm_head, logits, false);
  if (observer_) observer_->logits(logits, s);
  s.synchronize();
  for (std::int64_t i = 0; i < batch_; ++i)
    lengths_[static_cast<std::size_t>(i)] += static_cast<std::int64_t>(tokens[static_cast<std::size_t>(i)].size());
  observer_ = nullptr;
  return logits;
}

}  // namespace hal::model

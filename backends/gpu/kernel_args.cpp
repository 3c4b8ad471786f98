// Packing of the kernels' arguments, shared by both GPU backends (see
// kernel_args.h).
#include "backends/gpu/kernel_args.h"

#include <fmt/format.h>

#include <limits>

#include "hal/error.h"
#include "hal/shape.h"

namespace hal::gpu {

namespace kp = kernel_params;

kp::KernelShape kernel_shape(const Shape& s) {
  kp::KernelShape k{};
  k.rank = s.rank();
  for (int d = 0; d < s.rank(); ++d) k.extent[d] = s[d];
  return k;
}

kp::KernelStrides kernel_strides(const Strides& s) {
  kp::KernelStrides k{};
  for (int d = 0; d < s.rank(); ++d) k.s[d] = s[d];
  return k;
}

namespace {

// Contiguous operands of exactly y's shape: the kernels' offset == i path.
bool flat(const Tensor& y, std::initializer_list<const Tensor*> ins) {
  if (!y.is_contiguous()) return false;
  for (const Tensor* t : ins)
    if (!(t->shape == y.shape) || !t->is_contiguous()) return false;
  return true;
}

// Flat and every first element 16-byte aligned: the 16-byte chunk path.
bool flat_aligned16(const Tensor& y, std::initializer_list<const Tensor*> ins) {
  if (!flat(y, ins) || !aligned16(y.first())) return false;
  for (const Tensor* t : ins)
    if (!aligned16(t->first())) return false;
  return true;
}

kp::KernelStrides broadcast_to(const Tensor& t, const Shape& y_shape) {
  return kernel_strides(broadcast_strides(t.shape, t.strides, y_shape));
}

}  // namespace

kp::BinaryParams binary_params(const BinaryCall& c) {
  kp::BinaryParams p{};
  p.a = c.a.first();
  p.b = c.b.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.op = static_cast<std::int32_t>(c.kind);
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.a, &c.b});
  p.vec16 = flat_aligned16(c.y, {&c.a, &c.b});
  p.shape = kernel_shape(c.y.shape);
  p.a_strides = broadcast_to(c.a, c.y.shape);
  p.b_strides = broadcast_to(c.b, c.y.shape);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::UnaryParams unary_params(const UnaryCall& c) {
  kp::UnaryParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.op = static_cast<std::int32_t>(c.kind);
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.x});
  p.vec16 = flat_aligned16(c.y, {&c.x});
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::SwigluParams swiglu_params(const SwigluCall& c) {
  kp::SwigluParams p{};
  p.gate = c.gate.first();
  p.up = c.up.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.gate, &c.up});
  p.vec16 = flat_aligned16(c.y, {&c.gate, &c.up});
  p.shape = kernel_shape(c.y.shape);
  p.gate_strides = kernel_strides(c.gate.strides);
  p.up_strides = kernel_strides(c.up.strides);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::CastParams cast_params(const CastCall& c) {
  kp::CastParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.contiguous = c.x.is_contiguous() && c.y.is_contiguous();
  p.vec16 = p.contiguous && dtype_size(c.x.dtype) <= 4 && dtype_size(c.y.dtype) <= 4 && aligned16(p.x) &&
            aligned16(p.y);
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::CopyParams copy_params(const CopyCall& c) {
  kp::CopyParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.elem_bytes = static_cast<std::int32_t>(dtype_size(c.y.dtype));
  p.contiguous = c.x.is_contiguous() && c.y.is_contiguous();
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::FillRandomParams fill_random_params(const FillRandomCall& c) {
  kp::FillRandomParams p{};
  p.y = c.y.first();
  p.n = c.y.numel();
  p.seed = c.seed;
  p.y_type = elem_type(c.y.dtype);
  p.normal = c.distribution == RandomDistribution::normal;
  p.a = c.a;
  p.b = c.b;
  p.contiguous = c.y.is_contiguous();
  p.shape = kernel_shape(c.y.shape);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

kp::RowsLayout rows_layout(const Tensor& x, const Strides& y_outer_strides, std::int64_t y_col_stride, int axis) {
  kp::RowsLayout l{};
  l.rows = 1;
  int o = 0;
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    l.outer_shape[o] = x.shape[d];
    l.x_outer_stride[o] = x.strides[d];
    l.y_outer_stride[o] = y_outer_strides[o];
    l.rows *= x.shape[d];
    ++o;
  }
  l.outer_rank = o;
  l.cols = x.rank() == 0 ? 1 : x.shape[axis];
  l.x_col_stride = x.rank() == 0 ? 1 : x.strides[axis];
  l.y_col_stride = y_col_stride;
  return l;
}

namespace {

// Element types the row kernels read in 16-byte chunks (4 x f32, 8 x f16/bf16).
bool vec16_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// Every row of `t` (rows over l's outer dims with `outer_strides`,
// `col_stride` along the row) is unit-stride and starts on a 16-byte
// boundary: the first element is aligned and each outer stride of an extent
// > 1 is a whole number of 16-byte units.
bool rows_aligned16(const Tensor& t, const kp::RowsLayout& l, const std::int64_t* outer_strides,
                    std::int64_t col_stride) {
  if (!vec16_type(t.dtype) || col_stride != 1 || !aligned16(t.first())) return false;
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int d = 0; d < l.outer_rank; ++d)
    if (l.outer_shape[d] > 1 && (outer_strides[d] * esize) % 16 != 0) return false;
  return true;
}

// A norm's weight / bias [cols] read as 16-byte chunks next to x's:
// x's rows qualify, and the vector is unit-stride, aligned, of x's element size.
bool vector_vec16(const Tensor& t, const Tensor& x, const kp::RowsLayout& l) {
  return l.x_vec16 && vec16_type(t.dtype) && dtype_size(t.dtype) == dtype_size(x.dtype) && aligned16(t.first()) &&
         (t.shape[0] <= 1 || t.strides[0] == 1);
}

// y's strides over x's outer axes when the row axis is the last one.
Strides leading_strides(const Tensor& t) {
  Strides s;
  for (int d = 0; d + 1 < t.rank(); ++d) s.push_back(t.strides[d]);
  return s;
}

kp::RowsLayout last_axis_layout(const Tensor& x, const Tensor& y) {
  kp::RowsLayout l = rows_layout(x, leading_strides(y), y.rank() == 0 ? 1 : y.strides[y.rank() - 1], x.rank() - 1);
  l.x_vec16 = rows_aligned16(x, l, l.x_outer_stride, l.x_col_stride);
  l.y_vec16 = l.x_vec16 && dtype_size(y.dtype) == dtype_size(x.dtype) &&
              rows_aligned16(y, l, l.y_outer_stride, l.y_col_stride);
  return l;
}

}  // namespace

kp::SoftmaxParams softmax_params(const SoftmaxCall& c) {
  kp::SoftmaxParams p{};
  p.layout = last_axis_layout(c.x, c.y);
  p.x = c.x.first();
  p.y = c.y.first();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.causal = c.causal;
  p.log = c.log;
  return p;
}

kp::NormParams norm_params(const NormCall& c) {
  kp::NormParams p{};
  p.layout = last_axis_layout(c.x, c.y);
  p.x = c.x.first();
  p.y = c.y.first();
  p.weight = c.weight.first();
  p.weight_stride = c.weight.strides[0];
  p.weight_type = elem_type(c.weight.dtype);
  p.weight_vec16 = vector_vec16(c.weight, c.x, p.layout);
  if (c.bias && !c.rms) {
    p.bias = c.bias->first();
    p.bias_stride = c.bias->strides[0];
    p.bias_type = elem_type(c.bias->dtype);
    p.bias_vec16 = vector_vec16(*c.bias, c.x, p.layout);
  }
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.eps = c.eps;
  p.rms = c.rms;
  return p;
}

kp::ReduceParams reduce_params(const ReduceCall& c) {
  Strides y_outer;
  for (int d = 0; d < c.y.rank(); ++d)
    if (!(c.keepdim && d == c.axis)) y_outer.push_back(c.y.strides[d]);
  kp::ReduceParams p{};
  p.layout = rows_layout(c.x, y_outer, 0, c.axis);
  p.layout.x_vec16 = rows_aligned16(c.x, p.layout, p.layout.x_outer_stride, p.layout.x_col_stride);
  p.x = c.x.first();
  p.y = c.y.first();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.kind = static_cast<std::int32_t>(c.kind);
  return p;
}

kp::RopeParams rope_params(const RopeCall& c) {
  kp::RopeParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.positions = static_cast<const std::int32_t*>(c.positions.first());
  for (int d = 0; d < 4; ++d) {
    p.shape[d] = c.x.shape[d];
    p.x_stride[d] = c.x.strides[d];
    p.y_stride[d] = c.y.strides[d];
  }
  const Tensor& pos = c.positions;
  p.pos_seq_stride = pos.strides[pos.rank() - 1];
  p.pos_batch_stride = pos.rank() == 2 ? pos.strides[0] : 0;
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.rotary_dim = c.rotary_dim;
  p.gptj = c.style == RopeStyle::gptj;
  p.theta = c.theta;
  p.inv_freq_stride = 1;
  if (c.inv_freq) {
    p.inv_freq = static_cast<const float*>(c.inv_freq->first());
    p.inv_freq_stride = c.inv_freq->strides[0];
  }
  return p;
}

namespace {

// The tensor-core kernels' epilogue form: plain when C is stored as
// alpha * acc, rounded, with column pairs aligned (kernel_params/gemm.h).
std::int32_t epilogue_form(const kp::GemmParams& p) {
  const auto c_type = static_cast<DType>(p.c_type);
  const bool plain_dtype = c_type == DType::f32 || c_type == DType::f16 || c_type == DType::bf16;
  if (!plain_dtype || p.beta != 0.0f || p.bias != nullptr || p.activation != 0 || p.c_n_stride != 1 ||
      p.c_m_stride % 2 != 0 || p.c_batch_stride % 2 != 0 ||
      reinterpret_cast<std::uintptr_t>(p.c) % (2 * dtype_size(c_type)) != 0)
    return kp::kGemmEpilogueGeneral;
  return kp::kGemmEpiloguePlain;
}

}  // namespace

kp::GemmParams gemm_params(const GemmCall& c) {
  kp::GemmParams p{};
  const int ar = c.a.rank(), br = c.b.rank(), cr = c.c.rank();
  p.a = c.a.first();
  p.b = c.b.first();
  p.c = c.c.first();
  p.bias = c.bias ? c.bias->first() : nullptr;
  p.bias_stride = c.bias ? c.bias->strides[0] : 1;
  p.batch = cr == 3 ? c.c.shape[0] : 1;
  p.m = c.c.shape[cr - 2];
  p.n = c.c.shape[cr - 1];
  p.k = c.trans_a ? c.a.shape[ar - 2] : c.a.shape[ar - 1];
  p.a_m_stride = c.trans_a ? c.a.strides[ar - 1] : c.a.strides[ar - 2];
  p.a_k_stride = c.trans_a ? c.a.strides[ar - 2] : c.a.strides[ar - 1];
  p.b_k_stride = c.trans_b ? c.b.strides[br - 1] : c.b.strides[br - 2];
  p.b_n_stride = c.trans_b ? c.b.strides[br - 2] : c.b.strides[br - 1];
  p.a_batch_stride = (ar == 3 && c.a.shape[0] != 1) ? c.a.strides[0] : 0;  // a batch of 1 broadcasts
  p.b_batch_stride = (br == 3 && c.b.shape[0] != 1) ? c.b.strides[0] : 0;
  p.c_batch_stride = cr == 3 ? c.c.strides[0] : 0;
  p.c_m_stride = c.c.strides[cr - 2];
  p.c_n_stride = c.c.strides[cr - 1];
  p.ab_type = elem_type(c.a.dtype);
  p.c_type = elem_type(c.c.dtype);
  p.activation = static_cast<std::int32_t>(c.activation);
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.a_k_major = p.a_k_stride == 1;
  p.b_k_major = p.b_k_stride == 1;
  // 16-byte chunks of 8 K-values: K-contiguous rows whose starts (every row,
  // every batch) are 16-byte aligned, and K a multiple of 8 so no chunk
  // straddles the end of a row.
  auto vec8 = [&](const void* base, std::int64_t k_stride, std::int64_t row_stride, std::int64_t batch_stride) {
    return dtype_size(c.a.dtype) == 2 && k_stride == 1 && row_stride % 8 == 0 && batch_stride % 8 == 0 &&
           p.k % 8 == 0 && aligned16(base);
  };
  p.a_vec8 = vec8(p.a, p.a_k_stride, p.a_m_stride, p.a_batch_stride);
  p.b_vec8 = vec8(p.b, p.b_k_stride, p.b_n_stride, p.b_batch_stride);
  p.epilogue = epilogue_form(p);
  return p;
}

AttentionDims attention_dims(const Tensor& q, const Tensor& k, const Tensor& v, const char* backend, const char* op) {
  constexpr std::int64_t kMax32 = std::numeric_limits<std::int32_t>::max();
  if (q.shape[2] > kMax32 || k.shape[2] > kMax32 || q.shape[3] > kMax32 || v.shape[3] > kMax32)
    throw_unsupported(backend, op, "head counts and head dims below 2^31");
  AttentionDims d;
  d.batch = q.shape[0];
  d.sq = q.shape[1];
  d.sk = k.shape[1];
  d.hq = static_cast<std::int32_t>(q.shape[2]);
  d.hkv = static_cast<std::int32_t>(k.shape[2]);
  d.d = static_cast<std::int32_t>(q.shape[3]);
  d.dv = static_cast<std::int32_t>(v.shape[3]);
  return d;
}

kp::AttentionParams attention_params(const AttentionCall& c, const char* backend) {
  kp::AttentionParams p{};
  p.q = c.q.first();
  p.k = c.k.first();
  p.v = c.v.first();
  p.y = c.y.first();
  for (int d = 0; d < 4; ++d) {
    p.q_stride[d] = c.q.strides[d];
    p.k_stride[d] = c.k.strides[d];
    p.v_stride[d] = c.v.strides[d];
    p.y_stride[d] = c.y.strides[d];
  }
  const AttentionDims dims = attention_dims(c.q, c.k, c.v, backend, "attention");
  p.batch = dims.batch;
  p.sq = dims.sq;
  p.sk = dims.sk;
  p.hq = dims.hq;
  p.hkv = dims.hkv;
  p.d = dims.d;
  p.dv = dims.dv;
  p.qkv_type = static_cast<std::uint8_t>(c.q.dtype);
  p.y_type = static_cast<std::uint8_t>(c.y.dtype);
  p.causal = c.causal;
  p.scale = c.scale;
  if (c.lse) {  // f32 on a GPU (the support matrix declines the f64 oracle form)
    p.lse = static_cast<float*>(c.lse->first());
    for (int d = 0; d < 3; ++d) p.lse_stride[d] = c.lse->strides[d];
  }
  return p;
}

namespace {

kp::Fp8QuantParams fp8_quant_params(const Tensor& wide, const Tensor& fp8, const Tensor& scales, Fp8Block block) {
  kp::Fp8QuantParams p{};
  p.wide = wide.first();
  p.fp8 = fp8.first();
  p.scales = static_cast<float*>(scales.first());
  p.m = wide.shape[0];
  p.k = wide.shape[1];
  p.wide_m_stride = wide.strides[0];
  p.wide_k_stride = wide.strides[1];
  p.fp8_m_stride = fp8.strides[0];
  p.fp8_k_stride = fp8.strides[1];
  const std::int64_t kb = (p.k + kFp8BlockSize - 1) / kFp8BlockSize;
  switch (block) {
    case Fp8Block::row_1x128: p.grid_rows = p.m; p.grid_cols = kb; break;
    case Fp8Block::block_128x128: p.grid_rows = (p.m + kFp8BlockSize - 1) / kFp8BlockSize; p.grid_cols = kb; break;
    case Fp8Block::tensor: p.grid_rows = 1; p.grid_cols = 1; break;
  }
  p.s_row_stride = block == Fp8Block::tensor ? 0 : scales.strides[0];
  p.s_col_stride = block == Fp8Block::tensor ? 0 : scales.strides[1];
  p.wide_type = elem_type(wide.dtype);
  p.fp8_type = elem_type(fp8.dtype);
  p.block = static_cast<std::int32_t>(block);
  return p;
}

static_assert(static_cast<int>(Fp8Block::row_1x128) == kp::kFp8Row1x128 &&
                  static_cast<int>(Fp8Block::block_128x128) == kp::kFp8Block128x128 &&
                  static_cast<int>(Fp8Block::tensor) == kp::kFp8Tensor && kFp8BlockSize == kp::kFp8Block,
              "kernel_params/fp8.h mirrors hal::Fp8Block");

// The fields both fp8 GEMMs share; b, b_scales, bias are group 0's views
// (rank 2 / rank 1) for the grouped call.
kp::GemmFp8Params gemm_fp8_common(const Tensor& a, const Tensor& a_scales, const Tensor& b, const Tensor& b_scales,
                                  const Tensor& c, const Fp8Epilogue& e, const Tensor* bias, int b_rank) {
  kp::GemmFp8Params p{};
  kp::GemmParams& g = p.g;
  const int o = b_rank - 2;  // b's [N, K] axes
  g.a = a.first();
  g.b = b.first();
  g.c = c.first();
  g.bias = bias ? bias->first() : nullptr;
  g.bias_stride = bias ? bias->strides[bias->rank() - 1] : 1;
  g.m = a.shape[0];
  g.k = a.shape[1];
  g.n = b.shape[o];
  g.batch = 1;
  g.a_m_stride = a.strides[0];
  g.a_k_stride = a.strides[1];
  g.b_n_stride = b.strides[o];
  g.b_k_stride = b.strides[o + 1];
  g.c_m_stride = c.strides[0];
  g.c_n_stride = c.strides[1];
  g.ab_type = elem_type(a.dtype);
  g.c_type = elem_type(c.dtype);
  g.activation = static_cast<std::int32_t>(e.activation);
  g.alpha = e.alpha;
  g.beta = e.beta;
  g.a_k_major = g.a_k_stride == 1;
  g.b_k_major = g.b_k_stride == 1;
  g.epilogue = epilogue_form(g);
  p.a_scales = static_cast<const float*>(a_scales.first());
  p.b_scales = static_cast<const float*>(b_scales.first());
  p.sa_m_stride = a_scales.strides[0];
  p.sa_k_stride = a_scales.strides[1];
  p.sb_n_stride = b_scales.strides[o];
  p.sb_k_stride = b_scales.strides[o + 1];
  p.offsets_stride = 1;
  p.a_type = elem_type(a.dtype);
  p.b_type = elem_type(b.dtype);
  p.k_blocks = static_cast<std::int32_t>((g.k + kFp8BlockSize - 1) / kFp8BlockSize);
  return p;
}

}  // namespace

kp::Fp8QuantParams quantize_fp8_params(const QuantizeFp8Call& c) {
  kp::Fp8QuantParams p = fp8_quant_params(c.x, c.y, c.scales, c.block);
  p.pow2_scales = c.pow2_scales ? 1 : 0;
  return p;
}

kp::Fp8QuantParams dequantize_fp8_params(const DequantizeFp8Call& c) {
  return fp8_quant_params(c.x, c.y, c.scales, c.block);
}

kp::GemmFp8Params gemm_fp8_params(const GemmFp8Call& c) {
  const Tensor* bias = c.epilogue.bias ? &*c.epilogue.bias : nullptr;
  return gemm_fp8_common(c.a, c.a_scales, c.b, c.b_scales, c.c, c.epilogue, bias, 2);
}

kp::GemmFp8Params gemm_fp8_grouped_params(const GemmFp8GroupedCall& c) {
  const Tensor* bias = c.epilogue.bias ? &*c.epilogue.bias : nullptr;
  kp::GemmFp8Params p = gemm_fp8_common(c.a, c.a_scales, c.b, c.b_scales, c.c, c.epilogue, bias, 3);
  p.groups = static_cast<std::int32_t>(c.b.shape[0]);
  p.offsets = static_cast<const std::int32_t*>(c.offsets.first());
  p.offsets_stride = c.offsets.strides[0];
  p.b_group_stride = c.b.strides[0];
  p.sb_group_stride = c.b_scales.strides[0];
  p.bias_group_stride = bias ? bias->strides[0] : 0;
  return p;
}

void check_fp8_group_offsets(const std::int32_t* off, std::int64_t groups, std::int64_t m) {
  for (std::int64_t g = 0; g <= groups; ++g) {
    const std::int64_t o = off[g];
    const std::int64_t prev = g == 0 ? 0 : off[g - 1];
    const bool ok = g == 0 ? o == 0 : (g == groups ? o == m && o >= prev : o >= prev && o <= m);
    if (!ok)
      throw_invalid_argument("gemm_fp8_grouped", "offsets",
                             fmt::format("offsets[0] = 0, non-decreasing, offsets[{}] = {} (a's rows)", groups, m),
                             fmt::format("offsets[{}] = {}{}", g, o, g > 0 ? fmt::format(" after {}", prev) : ""));
  }
}

void set_fp8_m_tiles(kp::GemmFp8Params& p, int block_m, const std::int32_t* host_offsets, const char* backend) {
  p.block_m = block_m;
  std::int64_t tiles = 0;
  if (p.groups == 0) tiles = (p.g.m + block_m - 1) / block_m;
  else
    for (std::int32_t g = 0; g < p.groups; ++g) tiles += (host_offsets[g + 1] - host_offsets[g] + block_m - 1) / block_m;
  if (tiles > std::numeric_limits<std::int32_t>::max() / 1024)
    throw Error(ErrorCode::unsupported, fmt::format("{}: {} with {} row tiles is beyond the fp8 kernels' tile count",
                                                    backend, p.groups ? "gemm_fp8_grouped" : "gemm_fp8", tiles));
  p.m_tiles = static_cast<std::int32_t>(tiles);
}

}  // namespace hal::gpu

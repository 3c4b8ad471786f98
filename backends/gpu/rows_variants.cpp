// The 16-bit packed kernel variants' host decisions (rows_variants.h).
#include "backends/gpu/rows_variants.h"

namespace hal::gpu {

namespace {

using kernel_params::RowsLayout;

bool is16(std::int32_t t) {
  return t == static_cast<std::int32_t>(DType::f16) || t == static_cast<std::int32_t>(DType::bf16);
}
bool is_bf16(std::int32_t t) { return t == static_cast<std::int32_t>(DType::bf16); }

// Index of a row group's kernel: 64, 128, 256 threads -> 0, 1, 2; -1 otherwise.
int group_index(int threads_per_row) {
  switch (threads_per_row) {
    case 64: return 0;
    case 128: return 1;
    case 256: return 2;
  }
  return -1;
}

}  // namespace

RowsLayout merge_outer_dims(RowsLayout L, bool keep_innermost) {
  // Extent-1 dims first (their strides are irrelevant), but keep the
  // innermost when asked (its coordinate is read, even if always 0).
  RowsLayout out = L;
  int n = 0;
  for (int i = 0; i < L.outer_rank; ++i) {
    const bool innermost = i == L.outer_rank - 1;
    if (L.outer_shape[i] == 1 && !(keep_innermost && innermost)) continue;
    out.outer_shape[n] = L.outer_shape[i];
    out.x_outer_stride[n] = L.x_outer_stride[i];
    out.y_outer_stride[n] = L.y_outer_stride[i];
    ++n;
  }
  if (n == 0) {  // every dim of extent 1 (or none): one row at offset 0
    out.outer_shape[0] = 1;
    out.x_outer_stride[0] = 0;
    out.y_outer_stride[0] = 0;
    n = 1;
  }
  // Then merge from the inside out: dim i absorbs dim i + 1 when one index
  // with dim i+1's strides walks both.
  const int last_mergeable = keep_innermost ? n - 2 : n - 1;  // dims [0, last_mergeable] may merge
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0 && i <= last_mergeable) {
      const int j = m - 1;
      const std::int64_t e = out.outer_shape[i];
      if (out.x_outer_stride[j] == out.x_outer_stride[i] * e && out.y_outer_stride[j] == out.y_outer_stride[i] * e) {
        out.outer_shape[j] *= e;
        out.x_outer_stride[j] = out.x_outer_stride[i];
        out.y_outer_stride[j] = out.y_outer_stride[i];
        continue;
      }
    }
    out.outer_shape[m] = out.outer_shape[i];
    out.x_outer_stride[m] = out.x_outer_stride[i];
    out.y_outer_stride[m] = out.y_outer_stride[i];
    ++m;
  }
  for (int i = m; i < kernel_params::kRowsMaxOuterRank; ++i) {
    out.outer_shape[i] = 0;
    out.x_outer_stride[i] = 0;
    out.y_outer_stride[i] = 0;
  }
  out.outer_rank = m;
  return out;
}

const char* cuda_softmax_reg16_kernel(const kernel_params::SoftmaxParams& p) {
  static const char* const bf16[2][3] = {
      {"hal_softmax_rows_reg16_bf16_t64", "hal_softmax_rows_reg16_bf16_t128", "hal_softmax_rows_reg16_bf16_t256"},
      {"hal_softmax_rows_reg16_bf16_causal_t64", "hal_softmax_rows_reg16_bf16_causal_t128",
       "hal_softmax_rows_reg16_bf16_causal_t256"}};
  static const char* const f16[2][3] = {
      {"hal_softmax_rows_reg16_f16_t64", "hal_softmax_rows_reg16_f16_t128", "hal_softmax_rows_reg16_f16_t256"},
      {"hal_softmax_rows_reg16_f16_causal_t64", "hal_softmax_rows_reg16_f16_causal_t128",
       "hal_softmax_rows_reg16_f16_causal_t256"}};
  const int g = group_index(p.layout.cuda_threads_per_row);
  if (g < 0 || p.x_type != p.y_type || !is16(p.x_type) || !p.layout.x_vec16 || !p.layout.y_vec16) return nullptr;
  const int causal = p.causal ? 1 : 0;
  return is_bf16(p.x_type) ? bf16[causal][g] : f16[causal][g];
}

const char* cuda_norm_reg16_kernel(const kernel_params::NormParams& p) {
  static const char* const bf16[3] = {"hal_norm_rows_reg16_bf16_t64", "hal_norm_rows_reg16_bf16_t128",
                                      "hal_norm_rows_reg16_bf16_t256"};
  static const char* const f16[3] = {"hal_norm_rows_reg16_f16_t64", "hal_norm_rows_reg16_f16_t128",
                                     "hal_norm_rows_reg16_f16_t256"};
  const int g = group_index(p.layout.cuda_threads_per_row);
  if (g < 0 || !is16(p.x_type) || p.y_type != p.x_type || p.weight_type != p.x_type) return nullptr;
  if (!p.layout.x_vec16 || !p.layout.y_vec16 || !p.weight_vec16 || p.weight_stride != 1) return nullptr;
  if (p.bias != nullptr && (p.bias_type != p.x_type || !p.bias_vec16 || p.bias_stride != 1)) return nullptr;
  return is_bf16(p.x_type) ? bf16[g] : f16[g];
}

const char* cuda_elementwise_packed_kernel(ElementwiseFamily family, DType t, std::int32_t vec16) {
  if (!vec16 || (t != DType::f16 && t != DType::bf16)) return nullptr;
  const bool b = t == DType::bf16;
  switch (family) {
    case ElementwiseFamily::binary: return b ? "binary_packed_bf16" : "binary_packed_f16";
    case ElementwiseFamily::unary: return b ? "unary_packed_bf16" : "unary_packed_f16";
    case ElementwiseFamily::swiglu: return b ? "swiglu_packed_bf16" : "swiglu_packed_f16";
  }
  return nullptr;
}

const char* hip_elementwise_packed_kernel(ElementwiseFamily family, DType t, std::int32_t vec16) {
  if (!vec16 || (t != DType::f16 && t != DType::bf16)) return nullptr;
  const bool b = t == DType::bf16;
  switch (family) {
    case ElementwiseFamily::binary: return nullptr;
    case ElementwiseFamily::unary: return b ? "hal_unary_packed_bf16" : "hal_unary_packed_f16";
    case ElementwiseFamily::swiglu: return b ? "hal_swiglu_packed_bf16" : "hal_swiglu_packed_f16";
  }
  return nullptr;
}

}  // namespace hal::gpu

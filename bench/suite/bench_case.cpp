#include "bench/suite/bench_case.h"

#include <fmt/format.h>

namespace hal::bench {

std::string_view bench_op_name(BenchOp op) {
  switch (op) {
    case BenchOp::gemm: return "gemm";
    case BenchOp::attention: return "attention";
    case BenchOp::attention_causal: return "attention_causal";
    case BenchOp::attention_decode: return "attention_decode";
    case BenchOp::softmax: return "softmax";
    case BenchOp::rmsnorm: return "rmsnorm";
    case BenchOp::layernorm: return "layernorm";
    case BenchOp::add: return "add";
    case BenchOp::silu: return "silu";
    case BenchOp::gelu: return "gelu";
    case BenchOp::cast: return "cast";
    case BenchOp::copy: return "copy";
    case BenchOp::gemm_fp8: return "gemm_fp8";
    case BenchOp::gemm_fp8_grouped: return "gemm_fp8_grouped";
    case BenchOp::attention_backward: return "attention_backward";
    case BenchOp::attention_backward_causal: return "attention_backward_causal";
    case BenchOp::cross_entropy: return "cross_entropy";
    case BenchOp::rmsnorm_backward: return "rmsnorm_backward";
    case BenchOp::layernorm_backward: return "layernorm_backward";
    case BenchOp::adamw: return "adamw";
    case BenchOp::gemm_decode: return "gemm_decode";
  }
  return "?";
}

bool parse_bench_op(std::string_view name, BenchOp& op) {
  for (BenchOp o : {BenchOp::gemm, BenchOp::attention, BenchOp::attention_causal, BenchOp::attention_decode,
                    BenchOp::softmax, BenchOp::rmsnorm, BenchOp::layernorm, BenchOp::add, BenchOp::silu, BenchOp::gelu,
                    BenchOp::cast, BenchOp::copy, BenchOp::gemm_fp8, BenchOp::gemm_fp8_grouped,
                    BenchOp::attention_backward, BenchOp::attention_backward_causal, BenchOp::cross_entropy,
                    BenchOp::rmsnorm_backward, BenchOp::layernorm_backward, BenchOp::adamw, BenchOp::gemm_decode}) {
    if (bench_op_name(o) == name) {
      op = o;
      return true;
    }
  }
  return false;
}

std::size_t BenchCase::dims_of(BenchOp op) {
  switch (op) {
    case BenchOp::gemm:
    case BenchOp::gemm_decode:
    case BenchOp::gemm_fp8: return 3;
    case BenchOp::attention:
    case BenchOp::attention_causal:
    case BenchOp::gemm_fp8_grouped:
    case BenchOp::attention_backward:
    case BenchOp::attention_backward_causal: return 4;
    case BenchOp::attention_decode: return 5;
    default: return 2;
  }
}

std::string BenchCase::name() const {
  return fmt::format("{} {} {}", bench_op_name(op), dtype_name(dtype), fmt::join(dims, "x"));
}

double BenchCase::flops() const {
  const auto d = [&](int i) { return static_cast<double>(dims[static_cast<std::size_t>(i)]); };
  switch (op) {
    case BenchOp::gemm:
    case BenchOp::gemm_decode:
    case BenchOp::gemm_fp8: return 2.0 * d(0) * d(1) * d(2);
    case BenchOp::gemm_fp8_grouped: return 2.0 * d(0) * d(1) * d(2) * d(3);
    // QK^T and PV: 2 * 2 * b * h * s * s * d; causal does about half.
    case BenchOp::attention: return 4.0 * d(0) * d(2) * d(1) * d(1) * d(3);
    case BenchOp::attention_causal: return 2.0 * d(0) * d(2) * d(1) * d(1) * d(3);
    // As FlashAttention counts the backward: 2.5x the forward (five matrix
    // products, S and dP recomputed, dV, dQ, dK, to the forward's two), so
    // its TFLOP/s compare with the forward's; hal's CPU kernel recomputes S
    // and dP once more for dq, work this count leaves out.
    case BenchOp::attention_backward: return 2.5 * 4.0 * d(0) * d(2) * d(1) * d(1) * d(3);
    case BenchOp::attention_backward_causal: return 2.5 * 2.0 * d(0) * d(2) * d(1) * d(1) * d(3);
    default: return 0.0;
  }
}

double BenchCase::bytes() const {
  const double e = static_cast<double>(dtype_size(dtype));
  const auto d = [&](int i) { return static_cast<double>(dims[static_cast<std::size_t>(i)]); };
  switch (op) {
    case BenchOp::gemm: return e * (d(0) * d(2) + d(2) * d(1) + d(0) * d(1));
    case BenchOp::gemm_decode:
      if (!is_fp8(dtype)) return e * (d(0) * d(2) + d(2) * d(1) + d(0) * d(1));
      [[fallthrough]];  // fp8: gemm_fp8's operands
    case BenchOp::gemm_fp8: return e * (d(0) * d(2) + d(2) * d(1)) + 2.0 * d(0) * d(1);  // bf16 C
    case BenchOp::gemm_fp8_grouped:  // A, every expert's B, bf16 C
      return e * (d(0) * d(1) * d(3) + d(0) * d(2) * d(3)) + 2.0 * d(0) * d(1) * d(2);
    case BenchOp::attention:
    case BenchOp::attention_causal: return e * 4.0 * d(0) * d(1) * d(2) * d(3);
    // q, k, v, y, dy read, dq, dk, dv written (lse is noise).
    case BenchOp::attention_backward:
    case BenchOp::attention_backward_causal: return e * 8.0 * d(0) * d(1) * d(2) * d(3);
    // The key and value caches, read once (the query and output rows are noise).
    case BenchOp::attention_decode: return e * 2.0 * d(0) * d(1) * d(3) * d(4);
    case BenchOp::add: return e * 3.0 * d(0) * d(1);
    case BenchOp::cast: return (e + (dtype == DType::f32 ? 2.0 : 4.0)) * d(0) * d(1);  // to f32, or f32 to bf16
    // Read the logits, write dlogits (the targets and the loss are noise).
    case BenchOp::cross_entropy: return e * 2.0 * d(0) * d(1);
    // Read x and dy, write dx (weight and dweight are one row each).
    case BenchOp::rmsnorm_backward:
    case BenchOp::layernorm_backward: return e * 3.0 * d(0) * d(1);
    // f32: read param, grad, m, v, write param, m, v; 16-bit: read grad, m, v,
    // master, write param, m, v, master. 28 bytes per element either way
    // with f32 state, 7 x 4 (f32) or 2 + 3 x 4 + 2 + 3 x 4 (16-bit).
    case BenchOp::adamw: return (dtype == DType::f32 ? 28.0 : 2.0 * (e + 12.0)) * d(0) * d(1);
    default: return e * 2.0 * d(0) * d(1);               // read x, write y
  }
}

std::vector<BenchCase> default_suite(const std::string& backend) {
  const bool cpu = backend == "cpu";
  std::vector<BenchCase> out;
  const std::vector<DType> gemm_dtypes = cpu ? std::vector<DType>{DType::f32, DType::bf16}
                                             : std::vector<DType>{DType::bf16, DType::f16};
  for (DType t : gemm_dtypes) {
    for (std::int64_t n : {512, 1024, 2048, 4096, 8192}) {
      if (cpu && n > 4096) continue;  // 8192^3 is ~10 s per run on two cores
      out.push_back({BenchOp::gemm, t, {n, n, n}});
    }
    for (std::int64_t m : {1, 16, 128, 4096}) {
      for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008}}) {
        if (cpu && m == 4096) continue;
        out.push_back({BenchOp::gemm, t, {m, n, k}});
      }
    }
  }
  // Decode GEMMs (issue 24): M = 1, 16 (decode) and 64 (batched decode)
  // against weights stored [N, K] as models hold them, beside cuBLAS with the
  // same transposed operand. With HAL_GPU_UNVERIFIED=1 they take the split-K
  // decode kernel (hal_gemm_decode_*), else the verified GEMMs.
  if (!cpu)
    for (DType t : gemm_dtypes)
      for (std::int64_t m : {1, 16, 64})
        for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008},
                            {14336, 4096}})
          out.push_back({BenchOp::gemm_decode, t, {m, n, k}});
  // gemm_fp8 on DeepGEMM's DeepSeek-V3 shapes (N, K), beside hal's bf16 GEMM
  // (and, on NVIDIA, cuBLASLt's per-tensor FP8 GEMM). On the CPU only M = 64
  // (two cores); the GPUs M in {64, 128, 4096} and DeepGEMM's grouped (MoE)
  // case, 4 experts of 8192 rows. The GPU fp8 kernels never ran: they need
  // HAL_GPU_UNVERIFIED=1, else these cases report the device's refusal.
  for (std::int64_t m : {64, 128, 4096}) {
    if (cpu && m != 64) continue;
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384},
                        {4096, 7168}, {7168, 2048}})
      out.push_back({BenchOp::gemm_fp8, DType::f8e4m3, {m, n, k}});
  }
  // FP8 decode (issue 24, `--op gemm_decode`, dtype f8e4m3: run as the
  // gemm_fp8 cases, DeepSeek-V3's scales and bf16 C): M = 1 and 16 on the
  // same weights (M = 64 is above), beside cuBLASLt's FP8 GEMM and hal's bf16
  // GEMM; with HAL_GPU_UNVERIFIED=1 gemm_fp8
  // takes the split-K fp8 decode kernel (ptx/kernels/gemm_fp8_decode.cu,
  // hip/kernels/gemm_fp8_decode.hip) for these and M = 64.
  if (!cpu)
    for (std::int64_t m : {1, 16})
      for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {24576, 1536}, {7168, 16384},
                          {4096, 7168}, {7168, 2048}})
        out.push_back({BenchOp::gemm_decode, DType::f8e4m3, {m, n, k}});
  if (!cpu) out.push_back({BenchOp::gemm_fp8_grouped, DType::f8e4m3, {4, 8192, 4096, 7168}});
  const DType attn_t = cpu ? DType::f32 : DType::bf16;
  for (std::int64_t s : {512, 1024, 2048, 4096, 8192}) {
    // CPU: 4 heads keep seq 8192 to about 2 s per run on two cores.
    const std::int64_t heads = cpu ? 4 : 16;
    out.push_back({BenchOp::attention, attn_t, {1, s, heads, 128}});
    out.push_back({BenchOp::attention_causal, attn_t, {1, s, heads, 128}});
  }
  // attention_backward: shorter sequences than the forward's on the CPU (its
  // work is 2.5x, and the CPU kernel's dq pass recomputes the probabilities).
  // The GPU kernels never ran: they need HAL_GPU_UNVERIFIED=1 (the forward's
  // lse as well), else these cases report the device's refusal.
  for (std::int64_t s : {512, 1024, 2048, 4096, 8192}) {
    if (cpu ? s > 2048 : s < 1024) continue;
    const std::int64_t heads = cpu ? 4 : 16;
    out.push_back({BenchOp::attention_backward, attn_t, {1, s, heads, 128}});
    out.push_back({BenchOp::attention_backward_causal, attn_t, {1, s, heads, 128}});
  }
  // A decode step over a key/value cache (memory-bound): without and with
  // grouped heads (Llama-2-7B-like 32 on 32, Llama-3-8B-like 32 on 8); on the
  // CPU in f32 and bf16 (a bf16 cache is the common one).
  const std::vector<DType> decode_dtypes = cpu ? std::vector<DType>{DType::f32, DType::bf16} : std::vector<DType>{DType::bf16};
  for (DType t : decode_dtypes)
    for (std::int64_t keys : {4096, 16384})
      for (std::int64_t kv_heads : {32, 8}) {
        if (cpu && keys * kv_heads > 4096 * 32) continue;  // 128 MiB of f32 cache at most on two cores
        out.push_back({BenchOp::attention_decode, t, {cpu ? 1 : 16, keys, 32, kv_heads, 128}});
      }
  // Memory-bound ops: rows of 4096 channels, 64 MiB .. 1 GiB of f32-equivalent.
  const std::vector<std::int64_t> mib = cpu ? std::vector<std::int64_t>{64, 256} : std::vector<std::int64_t>{64, 256, 1024};
  for (DType t : {DType::f32, DType::bf16}) {
    for (std::int64_t m : mib) {
      const std::int64_t elems = m * 1024 * 1024 / static_cast<std::int64_t>(dtype_size(t));
      const std::int64_t rows = elems / 4096;
      for (BenchOp op : {BenchOp::softmax, BenchOp::rmsnorm, BenchOp::layernorm, BenchOp::add, BenchOp::silu,
                         BenchOp::gelu, BenchOp::cast, BenchOp::copy, BenchOp::rmsnorm_backward,
                         BenchOp::layernorm_backward, BenchOp::adamw}) {
        // AdamW holds 4-7 such tensors plus its copy ceiling's: the smaller size only.
        if (op == BenchOp::adamw && m != mib.front()) continue;
        out.push_back({op, t, {rows, 4096}});
      }
      // The loss over a Llama-2-sized vocabulary (32768 columns), same bytes.
      out.push_back({BenchOp::cross_entropy, t, {elems / 32768, 32768}});
    }
  }
  return out;
}

}  // namespace hal::bench

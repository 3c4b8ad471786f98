#pragma once
// One benchmark case: an op at a dtype and shape, with the work it represents.
#include <cstdint>
#include <string>
#include <vector>

#include "hal/dtype.h"

namespace hal::bench {

enum class BenchOp { gemm, attention, attention_causal, attention_decode, softmax, rmsnorm, layernorm, add, silu, gelu, cast, copy,
                     gemm_fp8, gemm_fp8_grouped, attention_backward, attention_backward_causal,
                     // training (memory-bound): the fused loss with dlogits, the norm backwards, one AdamW step
                     cross_entropy, rmsnorm_backward, layernorm_backward, adamw,
                     // C = A B^T with B a weight stored [N, K] (trans_b), the decode layout
                     gemm_decode };

struct BenchCase {
  BenchOp op;
  DType dtype;
  // gemm, gemm_decode, gemm_fp8 (dtype: the fp8 format): {M, N, K}; gemm_fp8_grouped: {groups, rows per group, N, K};
  // attention (and attention_backward): {batch, seq, heads, head_dim}; attention_decode (one query
  // per sequence over a key cache, memory-bound): {batch, keys, q_heads, kv_heads, head_dim};
  // the other memory-bound ops: {rows, cols} (cross_entropy: {tokens, vocab}; adamw: the parameter's shape)
  std::vector<std::int64_t> dims;
  std::string name() const;     // "gemm bf16 4096x4096x4096"
  double flops() const;         // useful floating-point operations (0 for memory-bound)
  double bytes() const;         // fewest bytes that must move through memory
  bool compute_bound() const { return flops() > 0; }
  // The --shape sizes op takes.
  static std::size_t dims_of(BenchOp op);
};

std::string_view bench_op_name(BenchOp op);
bool parse_bench_op(std::string_view name, BenchOp& op);

// The default suite for a device kind ("cpu" gets smaller sizes: 2 cores).
std::vector<BenchCase> default_suite(const std::string& backend);

}  // namespace hal::bench

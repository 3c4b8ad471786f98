#pragma once
// A checkpoint's weights on one device, in one dtype.
//
// Uploaded tensor by tensor from the checkpoint's mappings: a tensor already
// in the run's dtype and layout is copied straight from the mapping; one that
// is converted (bf16 -> f32 or f64, f32 -> bf16, ...) or transposed goes
// through a device staging buffer of at most kStagingBytes, chunk by chunk,
// and ops::cast / ops::copy on the device. Host memory never holds a second
// copy of the weights.
//
// Linear weights y = x W^T (Hugging Face stores W as [out, in]) keep that
// layout on GPUs (the K-major B their GEMMs read fastest, trans_b) and are
// stored transposed, [in, out], on the CPU, whose decode GEMM streams a
// row-major B in place. A tied embedding is stored once: on the CPU as
// lm_head's [hidden, vocab], the embedding reading its transposed view.
#include <cstdint>
#include <optional>
#include <vector>

#include "hal/buffer.h"
#include "hal/stream.h"
#include "model/checkpoint.h"

namespace hal::model {

inline constexpr std::size_t kStagingBytes = std::size_t{32} << 20;

// A linear layer's weight as the GEMM reads it: C = A op(B) + bias.
// An F8_E4M3 weight (`scales` set) keeps the checkpoint's [out, in] layout
// and its 128 x 128 block scales, converted to f32 ([ceil(out/128),
// ceil(in/128)]): exactly gemm_fp8's B and b_scales, on every device. In an
// f64 run (the oracle) it is dequantised instead and stored like any other
// weight, `scales` unset.
//
// Column-blocked (`column_blocks` > 1, the CPU only): [blocks, in, out /
// blocks], block b holding output columns [b * out / blocks, (b + 1) * out /
// blocks) as a contiguous [in, out / blocks] slab, run as a batched GEMM
// into the column blocks of the result. A decode step's task then streams
// one contiguous slab instead of a segment of every row (9-20% faster on the
// 2-core Zen 3 VM); every output column is still the same dot product, so
// the bits do not change.
struct Linear {
  Tensor weight;  // [in, out] when !trans_b, else [out, in]; f8e4m3 [out, in] when scales
  bool trans_b = true;
  std::optional<Tensor> bias;  // [out]
  std::optional<Tensor> scales;  // f32 block scales of an fp8 weight
  std::int64_t column_blocks = 1;  // > 1: weight is [blocks, in, out / blocks] (never with a bias)
};

// The output columns of a linear ([in, out], [out, in] or column-blocked).
std::int64_t output_columns(const Linear& l);
// The stored element index of (input k, output column j) in l.weight.
std::int64_t weight_index(const Linear& l, std::int64_t k, std::int64_t j);

// Linears that read the same input (q/k/v; gate/up), their outputs side by
// side as the column blocks of one [T, columns] result. Stored as one fused
// weight (`linears` has one entry) whenever no part is an fp8 weight: a
// decode step then streams one wide weight instead of narrow ones (on a
// 2-core Zen 3 a 1 x 1024 x 256 bf16 GEMM streams at 59% of the read rate,
// the fused 1 x 1024 x 1536 at 97%), and each output column is still the
// same dot product. fp8 weights keep one Linear per part (gemm_fp8's 128 x
// 128 block scales would straddle the parts' boundaries).
struct LinearGroup {
  std::vector<Linear> linears;  // one fused, or one per part in column order
  std::int64_t columns = 0;     // sum of the parts' output columns
};

struct LayerWeights {
  Tensor attn_norm, mlp_norm;
  LinearGroup qkv;      // q_proj, k_proj, v_proj
  Linear o;
  LinearGroup gate_up;  // gate_proj, up_proj
  Linear down;
};

struct Weights {
  DType dtype = DType::f32;
  Tensor embedding;  // [vocab, hidden] (possibly a transposed view)
  Tensor final_norm;
  Linear lm_head;
  std::vector<LayerWeights> layers;
  std::optional<Tensor> rope_inv_freq;  // [head_dim / 2] when rope_scaling is set
  std::uint64_t device_bytes = 0;
  // What one decode step reads of them: all, except an embedding table of
  // its own (untied), of which it gathers one row per token.
  std::uint64_t decode_bytes = 0;
  std::vector<Buffer> buffers;  // owns everything above
};

struct LoadOptions {
  // Projections that read one input as one weight (LinearGroup). Off: one
  // GEMM per part, each into its columns of the same result (as fp8 weights
  // always run): for measuring what fusing gains, and for checking that it
  // leaves every output column's bits as they were.
  bool fuse_projections = true;
  // Column blocks of a bias-free f32/bf16 linear on the CPU (Linear): 0
  // takes the device's compute units (its threads, one block each), 1 keeps
  // [in, out]. A linear whose columns do not split into that many blocks of
  // whole 16-column panels stays [in, out].
  int column_blocks = 0;
};

// Whether linear weights are stored [in, out] on `device` (the CPU).
bool stores_transposed(const Device& device);

// Uploads every tensor; `dtype` is the run's (f32, f16, bf16; f64 on the CPU).
// A checkpoint with fp8 weights runs in f32 or bf16 through gemm_fp8 (its
// output dtypes), or in f64 on the CPU as the fp64 oracle: each fp8 weight
// dequantised exactly (stored e4m3 value * its block scale, in f64), tensor
// by tensor at upload, into a plain Linear (no `scales`), so every linear is
// an f64 GEMM and no activation is quantised: the real-valued model.
Weights upload_weights(const Checkpoint& ckpt, Device& device, DType dtype, Stream& stream,
                       const LoadOptions& options = {});

// Rotary frequencies f_i for i < head_dim / 2: theta^(-2i/d), adjusted by
// Llama 3's scaling when the config has it (transformers'
// _compute_llama3_parameters, in fp64).
std::vector<double> rope_frequencies(const ModelConfig& c);

}  // namespace hal::model

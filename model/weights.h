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
struct Linear {
  Tensor weight;  // [in, out] when !trans_b, else [out, in]; f8e4m3 [out, in] when scales
  bool trans_b = true;
  std::optional<Tensor> bias;  // [out]
  std::optional<Tensor> scales;  // f32 block scales of an fp8 weight
};

struct LayerWeights {
  Tensor attn_norm, mlp_norm;
  Linear q, k, v, o, gate, up, down;
};

struct Weights {
  DType dtype = DType::f32;
  Tensor embedding;  // [vocab, hidden] (possibly a transposed view)
  Tensor final_norm;
  Linear lm_head;
  std::vector<LayerWeights> layers;
  std::optional<Tensor> rope_inv_freq;  // [head_dim / 2] when rope_scaling is set
  std::uint64_t device_bytes = 0;
  std::vector<Buffer> buffers;  // owns everything above
};

// Whether linear weights are stored [in, out] on `device` (the CPU).
bool stores_transposed(const Device& device);

// Uploads every tensor; `dtype` is the run's (f32, f16, bf16; f64 on the CPU).
// A checkpoint with fp8 weights runs in f32 or bf16 through gemm_fp8 (its
// output dtypes), or in f64 on the CPU as the fp64 oracle: each fp8 weight
// dequantised exactly (stored e4m3 value * its block scale, in f64), tensor
// by tensor at upload, into a plain Linear (no `scales`), so every linear is
// an f64 GEMM and no activation is quantised: the real-valued model.
Weights upload_weights(const Checkpoint& ckpt, Device& device, DType dtype, Stream& stream);

// Rotary frequencies f_i for i < head_dim / 2: theta^(-2i/d), adjusted by
// Llama 3's scaling when the config has it (transformers'
// _compute_llama3_parameters, in fp64).
std::vector<double> rope_frequencies(const ModelConfig& c);

}  // namespace hal::model

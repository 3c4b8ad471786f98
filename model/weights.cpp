#include "model/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <span>
#include <vector>

#include "hal/error.h"
#include "hal/op_fp8.h"
#include "ops/ops.h"

namespace hal::model {

namespace {

// A column block's width is a multiple of the CPU GEMM kernels' column panel
// (cpu_ref's NR), so its decode tile streams whole panels.
constexpr std::int64_t kPanelColumns = 16;

// Streams a [rows, cols] tensor whose rows come from the host in dtype `from`
// (rows_of(r0, n): the bytes of rows [r0, r0 + n); host memory a GPU stream
// may still read, so a rows_of that reuses its buffer synchronises first)
// into `dst` (a view of the same logical shape in the run's dtype, any
// strides), through a device staging buffer of at most kStagingBytes.
template <class RowsOf>
void upload_rows(Stream& s, DType from, std::int64_t rows, std::int64_t cols, const Tensor& dst, RowsOf&& rows_of) {
  Device& dev = s.device();
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(dtype_size(from));
  const std::int64_t chunk_rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(kStagingBytes) / row_bytes);
  const std::int64_t staged = std::min(chunk_rows, rows);
  Buffer staging(dev, static_cast<std::size_t>(staged * row_bytes));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const std::int64_t n = std::min(chunk_rows, rows - r0);
    const std::span<const std::byte> chunk = rows_of(r0, n);
    s.copy_from_host(staging.data(), chunk.data(), static_cast<std::size_t>(n * row_bytes));
    const Tensor staged_rows = Tensor::contiguous(staging.data(), &dev, from, Shape{n, cols});
    Tensor to = dst;
    if (dst.rank() == 1) {
      to.shape = Shape{rows, 1};
      to.strides = Strides{dst.strides[0], 1};
    }
    to.offset += r0 * to.strides[0];
    to.shape[0] = n;
    if (from == dst.dtype)
      ops::copy(s, staged_rows, to);
    else
      ops::cast(s, staged_rows, to);
  }
  s.synchronize();  // the staging buffer goes with this scope
}

// Copies `src` (a tensor of the checkpoint, logical shape [rows, cols]) into
// `dst` (a view of the same logical shape in the run's dtype, any strides).
// From `first_row` on: dst holds rows [first_row, first_row + dst.shape[0]).
void upload_tensor(Stream& s, const CheckpointTensor& src, const Tensor& dst, std::int64_t first_row = 0) {
  const io::SafetensorsEntry& e = *src.entry;
  const std::int64_t rows = dst.shape[0], cols = dst.rank() == 2 ? dst.shape[1] : 1;
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * dtype_size(e.dtype);
  const std::span<const std::byte> bytes =
      src.bytes().subspan(static_cast<std::size_t>(first_row) * row_bytes, static_cast<std::size_t>(rows) * row_bytes);
  if (e.dtype == dst.dtype && dst.is_contiguous()) {
    s.copy_from_host(dst.first(), bytes.data(), bytes.size());
    return;
  }
  upload_rows(s, e.dtype, rows, cols, dst, [&](std::int64_t r0, std::int64_t n) {
    return bytes.subspan(static_cast<std::size_t>(r0) * row_bytes, static_cast<std::size_t>(n) * row_bytes);
  });
}

// An F8_E4M3 weight [out, in] as the real values the checkpoint defines:
// stored e4m3 value * its 128 x 128 block's scale, computed in f64 (exact:
// a 4-bit significand times an f32 or bf16 scale has at most 28 bits, and
// the product's exponent stays far inside f64's range), then stored into
// `dst` (logical [out, in], f64 for the oracle). Dequantised one staging
// chunk of rows at a time, so host memory holds at most kStagingBytes of it.
void upload_dequantized(Stream& s, const CheckpointTensor& src, const Tensor& dst) {
  const io::SafetensorsEntry& e = *src.entry;
  const io::SafetensorsEntry& se = *src.scale_entry;
  const std::span<const std::byte> codes = src.bytes();
  const std::span<const std::byte> scales = src.scale_bytes();
  const std::int64_t rows = e.shape[0], cols = e.shape[1];
  const std::int64_t scale_cols = se.shape[1];
  const DType to = dst.dtype;
  std::vector<std::byte> host;
  upload_rows(s, to, rows, cols, dst, [&](std::int64_t r0, std::int64_t n) {
    s.synchronize();  // the previous chunk's copy has read `host`
    host.resize(static_cast<std::size_t>(n * cols) * dtype_size(to));
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t row = r0 + r;
      for (std::int64_t j = 0; j < cols; ++j) {
        const double code = load_element(codes.data(), DType::f8e4m3, row * cols + j);
        const double scale = load_element(scales.data(), se.dtype, (row / kFp8BlockSize) * scale_cols + j / kFp8BlockSize);
        store_element(host.data(), to, r * cols + j, code * scale);
      }
    }
    return std::span<const std::byte>(host);
  });
}

// Rows [r0, r0 + n) of `t` (its first dimension).
Tensor rows_of(const Tensor& t, std::int64_t r0, std::int64_t n) {
  Tensor v = t;
  v.offset += r0 * t.strides[0];
  v.shape[0] = n;
  return v;
}

struct Uploader {
  const Checkpoint& ckpt;
  Device& dev;
  DType dtype;
  Stream& s;
  Weights& w;
  LoadOptions options;
  bool transposed = stores_transposed(dev);

  Tensor allocate(const Shape& shape, std::optional<DType> as = std::nullopt) {
    const DType dt = as.value_or(dtype);
    w.buffers.push_back(Buffer::for_tensor(dev, dt, shape));
    w.device_bytes += w.buffers.back().size();
    return w.buffers.back().view(dt, shape);
  }
  Tensor plain(const std::string& name) {
    const CheckpointTensor& t = ckpt.tensor(name);
    Tensor out = allocate(t.entry->shape);
    upload_tensor(s, t, out);
    return out;
  }
  // A [out, in] weight, stored [in, out] when `transposed`.
  Tensor matrix(const std::string& name, bool transpose) {
    const CheckpointTensor& t = ckpt.tensor(name);
    const Shape& sh = t.entry->shape;
    if (!transpose) return plain(name);
    Tensor stored = allocate(Shape{sh[1], sh[0]});
    upload_tensor(s, t, stored.transposed(0, 1));
    return stored;
  }
  Linear linear(const std::string& prefix, bool has_bias) {
    if (const CheckpointTensor& t = ckpt.tensor(prefix + ".weight"); t.is_fp8() && dtype != DType::f64) {
      // Copied as stored, [out, in] fp8, with its scales in f32: gemm_fp8's B.
      Linear l;
      l.weight = allocate(t.entry->shape, DType::f8e4m3);
      upload_tensor(s, t, l.weight);
      const CheckpointTensor scale = t.scale();
      l.scales = allocate(scale.entry->shape, DType::f32);
      upload_tensor(s, scale, *l.scales);
      l.trans_b = true;
      if (has_bias) l.bias = plain(prefix + ".bias");
      return l;
    }
    return fused({prefix}, has_bias).linears.front();
  }
  // The linears `prefixes` (one input, [out_i, in] each) as one weight of
  // sum(out_i) output columns, part i's rows (or, stored transposed, its
  // columns) following part i - 1's; biases likewise.
  LinearGroup fused(const std::vector<std::string>& prefixes, bool has_bias) {
    LinearGroup g;
    std::int64_t in = 0;
    for (const std::string& p : prefixes) {
      const Shape& sh = ckpt.tensor(p + ".weight").entry->shape;
      g.columns += sh[0];
      in = sh[1];
    }
    Linear l;
    l.trans_b = !transposed;
    const bool any_fp8 = std::any_of(prefixes.begin(), prefixes.end(),
                                     [&](const std::string& p) { return ckpt.tensor(p + ".weight").is_fp8(); });
    const std::int64_t blocks = options.column_blocks > 0 ? options.column_blocks : dev.info().compute_units;
    if (transposed && !has_bias && !any_fp8 && (dtype == DType::f32 || dtype == DType::bf16) && blocks > 1 &&
        g.columns % (blocks * kPanelColumns) == 0) {
      l.column_blocks = blocks;
      const std::int64_t width = g.columns / blocks;
      l.weight = allocate(Shape{blocks, in, width});
      // Each part's rows (output columns) block by block, [width, in] views of the slabs.
      std::int64_t row0 = 0;
      for (const std::string& p : prefixes) {
        const CheckpointTensor& t = ckpt.tensor(p + ".weight");
        const std::int64_t out = t.entry->shape[0];
        for (std::int64_t lo = row0; lo < row0 + out;) {
          const std::int64_t b = lo / width, hi = std::min(row0 + out, (b + 1) * width);
          Tensor slab = l.weight;
          slab.offset += b * l.weight.strides[0];
          slab.shape = Shape{in, width};
          slab.strides = Strides{l.weight.strides[1], l.weight.strides[2]};
          upload_tensor(s, t, rows_of(slab.transposed(0, 1), lo - b * width, hi - lo), lo - row0);
          lo = hi;
        }
        row0 += out;
      }
      g.linears.push_back(std::move(l));
      return g;
    }
    l.weight = transposed ? allocate(Shape{in, g.columns}) : allocate(Shape{g.columns, in});
    if (has_bias) l.bias = allocate(Shape{g.columns});
    // [out, in] views of the stored weight (and [out] of the bias), part by part.
    const Tensor logical = transposed ? l.weight.transposed(0, 1) : l.weight;
    std::int64_t row0 = 0;
    for (const std::string& p : prefixes) {
      const CheckpointTensor& t = ckpt.tensor(p + ".weight");
      const std::int64_t out = t.entry->shape[0];
      if (t.is_fp8()) {
        // The oracle: the real-valued weight (e4m3 value * block scale, exact
        // in f64) for a plain f64 GEMM; the activations are not quantised, so
        // the oracle is the model the checkpoint defines, and a run's drift
        // against it includes the whole fp8 error.
        upload_dequantized(s, t, rows_of(logical, row0, out));
      } else {
        upload_tensor(s, t, rows_of(logical, row0, out));
      }
      if (has_bias) upload_tensor(s, ckpt.tensor(p + ".bias"), rows_of(*l.bias, row0, out));
      row0 += out;
    }
    g.linears.push_back(std::move(l));
    return g;
  }
  // Fused unless a part runs through gemm_fp8 (or the options say not to).
  LinearGroup group(const std::vector<std::string>& prefixes, bool has_bias) {
    const bool fp8 = std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
      return ckpt.tensor(p + ".weight").is_fp8() && dtype != DType::f64;
    });
    if (!fp8 && options.fuse_projections) return fused(prefixes, has_bias);
    LinearGroup g;
    for (const std::string& p : prefixes) {
      g.linears.push_back(linear(p, has_bias));
      g.columns += output_columns(g.linears.back());
    }
    return g;
  }
};

}  // namespace

bool stores_transposed(const Device& device) { return device.info().backend == "cpu"; }

std::int64_t output_columns(const Linear& l) {
  if (l.column_blocks > 1) return l.column_blocks * l.weight.shape[2];
  return l.trans_b ? l.weight.shape[0] : l.weight.shape[1];
}

std::int64_t weight_index(const Linear& l, std::int64_t k, std::int64_t j) {
  const Tensor& w = l.weight;
  if (l.column_blocks > 1) {
    const std::int64_t width = w.shape[2];
    return w.offset + (j / width) * w.strides[0] + k * w.strides[1] + (j % width) * w.strides[2];
  }
  return l.trans_b ? w.offset + j * w.strides[0] + k * w.strides[1] : w.offset + k * w.strides[0] + j * w.strides[1];
}

std::vector<double> rope_frequencies(const ModelConfig& c) {
  const std::int64_t half = c.head_dim / 2;
  std::vector<double> f(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i)
    f[static_cast<std::size_t>(i)] = std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
  if (!c.rope_scaling) return f;
  const Llama3RopeScaling& s = *c.rope_scaling;
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
  for (double& v : f) {
    const double wavelen = 2.0 * std::numbers::pi / v;
    if (wavelen > low_wavelen) {
      v /= s.factor;  // long wavelengths: interpolated
    } else if (wavelen >= high_wavelen) {
      // In between: a smooth blend of the interpolated and the original.
      const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      v = (1.0 - smooth) * v / s.factor + smooth * v;
    }  // short wavelengths: unchanged
  }
  return f;
}

Weights upload_weights(const Checkpoint& ckpt, Device& dev, DType dtype, Stream& s, const LoadOptions& options) {
  const bool cpu = dev.info().backend == "cpu";
  if (!(dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16 || (dtype == DType::f64 && cpu)))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("model: dtype {} on {}: expected f32, f16 or bf16 (f64 on the cpu only, for the oracle)",
                            dtype_name(dtype), dev.name()));
  const ModelConfig& c = ckpt.config();
  if (ckpt.fp8_tensor_count() > 0 && dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f64)
    throw Error(ErrorCode::unsupported,
                fmt::format("model '{}': {} fp8 weights run through gemm_fp8, whose output is f32 or bf16; dtype {} is "
                            "not (f64 on the cpu is the oracle: the weights dequantised, plain f64 GEMMs)",
                            ckpt.dir(), ckpt.fp8_tensor_count(), dtype_name(dtype)));
  Weights w;
  w.dtype = dtype;
  Uploader up{ckpt, dev, dtype, s, w, options};
  std::int64_t gathered_only = 0;  // bytes of an untied embedding table
  if (c.tie_word_embeddings && up.transposed) {
    // One [hidden, vocab] copy: lm_head streams it, the embedding gathers its columns.
    const Tensor stored = up.matrix("model.embed_tokens.weight", true);
    w.lm_head = {stored, false, std::nullopt, std::nullopt};
    w.embedding = stored.transposed(0, 1);
  } else {
    w.embedding = up.plain("model.embed_tokens.weight");
    if (c.tie_word_embeddings) w.lm_head = {w.embedding, true, std::nullopt, std::nullopt};
    else w.lm_head = up.linear("lm_head", false), gathered_only = w.embedding.numel() * dtype_size(dtype);
  }
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    LayerWeights lw;
    lw.attn_norm = up.plain(p + "input_layernorm.weight");
    lw.qkv = up.group({p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj"}, c.qkv_bias);
    lw.o = up.linear(p + "self_attn.o_proj", c.o_bias);
    lw.mlp_norm = up.plain(p + "post_attention_layernorm.weight");
    lw.gate_up = up.group({p + "mlp.gate_proj", p + "mlp.up_proj"}, c.mlp_bias);
    lw.down = up.linear(p + "mlp.down_proj", c.mlp_bias);
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = up.plain("model.norm.weight");
  if (c.rope_scaling) {
    // f64 for the oracle, f32 otherwise (what the rope op takes).
    const DType fd = dtype == DType::f64 ? DType::f64 : DType::f32;
    const std::vector<double> f = rope_frequencies(c);
    std::vector<std::byte> host(f.size() * dtype_size(fd));
    for (std::size_t i = 0; i < f.size(); ++i) store_element(host.data(), fd, static_cast<std::int64_t>(i), f[i]);
    w.buffers.push_back(Buffer::for_tensor(dev, fd, Shape{static_cast<std::int64_t>(f.size())}));
    w.rope_inv_freq = w.buffers.back().view(fd, Shape{static_cast<std::int64_t>(f.size())});
    s.upload(*w.rope_inv_freq, host.data());
  }
  s.synchronize();
  if (gathered_only) gathered_only -= c.hidden_size * static_cast<std::int64_t>(dtype_size(dtype));
  w.decode_bytes = w.device_bytes - static_cast<std::uint64_t>(gathered_only);
  return w;
}

}  // namespace hal::model

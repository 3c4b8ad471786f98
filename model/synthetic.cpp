#include "model/synthetic.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "hal/dtype.h"
#include "hal/error.h"
#include "hal/philox.h"
#include "hal/io/json_writer.h"
#include "model/checkpoint.h"

namespace hal::model {

namespace {

std::string config_json(const SyntheticSpec& s) {
  return fmt::format(
      "{{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": {}, "
      "\"intermediate_size\": {}, \"num_hidden_layers\": {}, \"num_attention_heads\": {}, \"num_key_value_heads\": {}, "
      "\"vocab_size\": {}, \"rms_norm_eps\": 1e-05, \"rope_theta\": 500000.0, \"hidden_act\": \"silu\", "
      "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\"}}\n",
      s.hidden, s.intermediate, s.layers, s.heads, s.kv_heads, s.vocab);
}

}  // namespace

SyntheticSpec synthetic_spec_for_bytes(std::uint64_t bytes) {
  SyntheticSpec s;
  const std::uint64_t hd = static_cast<std::uint64_t>(s.hidden / s.heads);
  const std::uint64_t per_layer = 2 * (2 * s.hidden * s.hidden + 2 * s.hidden * s.kv_heads * hd +
                                       3 * s.hidden * s.intermediate + 2 * s.hidden);
  const std::uint64_t fixed = 2 * (2 * s.vocab * s.hidden + s.hidden);
  s.layers = bytes > fixed + per_layer ? static_cast<std::int64_t>((bytes - fixed + per_layer / 2) / per_layer) : 1;
  return s;
}

void write_synthetic_checkpoint(const std::string& dir, const SyntheticSpec& s) {
  ::mkdir(dir.c_str(), 0755);
  {
    std::ofstream f(dir + "/config.json");
    if (!f) throw Error(ErrorCode::io_error, fmt::format("'{}': cannot write config.json", dir));
    f << config_json(s);
  }
  ModelConfig c = parse_config(config_json(s), dir + "/config.json");
  const std::vector<ExpectedTensor> tensors = expected_tensors(c);
  std::string header = "{";
  std::uint64_t offset = 0;
  for (const ExpectedTensor& t : tensors) {
    const std::uint64_t n = static_cast<std::uint64_t>(checked_numel(t.shape)) * 2;
    std::string shape;
    for (int d = 0; d < t.shape.rank(); ++d) shape += fmt::format("{}{}", d ? "," : "", t.shape[d]);
    header += fmt::format("{}\"{}\":{{\"dtype\":\"BF16\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          header.size() > 1 ? "," : "", t.name, shape, offset, offset + n);
    offset += n;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  const std::string path = dir + "/model.safetensors";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(ErrorCode::io_error, fmt::format("'{}': cannot write", path));
  const std::uint64_t hlen = header.size();
  bool ok = std::fwrite(&hlen, 8, 1, f) == 1 && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  std::uint64_t index = 0;
  std::vector<std::uint16_t> chunk;
  for (const ExpectedTensor& t : tensors) {
    const std::int64_t n = checked_numel(t.shape);
    const bool norm = t.shape.rank() == 1;
    // Norm weights near 1; matrices uniform with the variance of 1/fan_in.
    const float a = norm ? 0.1f : static_cast<float>(std::sqrt(3.0 / static_cast<double>(t.shape[1])));
    for (std::int64_t i0 = 0; i0 < n && ok; i0 += 1 << 20) {
      const std::int64_t m = std::min<std::int64_t>(1 << 20, n - i0);
      chunk.resize(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i, ++index) {
        const float u = philox_uniform(s.seed, index, -a, a);
        chunk[static_cast<std::size_t>(i)] = f32_to_bf16(norm ? 1.0f + u : u);
      }
      ok = std::fwrite(chunk.data(), 2, chunk.size(), f) == chunk.size();
    }
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw Error(ErrorCode::io_error, fmt::format("'{}': write failed", path));
}

}  // namespace hal::model

#include "model/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hal/error.h"
#include "hal/philox.h"

namespace hal::model {

std::int32_t select_token(std::span<const float> logits, const SamplingOptions& o, std::int64_t sequence,
                          std::int64_t step) {
  if (logits.empty()) throw_invalid_argument("select_token", "logits", "a non-empty row", "none");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature) || o.top_k < 0)
    throw_invalid_argument("select_token", "options", "temperature >= 0 (finite) and top_k >= 0",
                           fmt::format("temperature {}, top_k {}", o.temperature, o.top_k));
  // NaN counts as the largest, as argmax does: a broken row is not hidden.
  auto greater = [&](std::size_t a, std::size_t b) {
    const float x = logits[a], y = logits[b];
    if (std::isnan(x) != std::isnan(y)) return std::isnan(x);
    if (x != y) return x > y;
    return a < b;
  };
  if (o.temperature == 0.0) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i)
      if (greater(i, best)) best = i;
    return static_cast<std::int32_t>(best);
  }
  const std::size_t k = o.top_k == 0 ? logits.size() : std::min<std::size_t>(static_cast<std::size_t>(o.top_k), logits.size());
  std::vector<std::size_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), greater);
  idx.resize(k);
  const double top = logits[idx[0]];
  if (!std::isfinite(top))
    throw Error(ErrorCode::invalid_argument, fmt::format("select_token: the largest logit is {}", top));
  std::vector<double> p(k);
  double sum = 0;
  for (std::size_t i = 0; i < k; ++i) sum += p[i] = std::exp((static_cast<double>(logits[idx[i]]) - top) / o.temperature);
  const PhiloxBits bits = philox4x32_10({{static_cast<std::uint32_t>(step), static_cast<std::uint32_t>(step >> 32),
                                          static_cast<std::uint32_t>(sequence), static_cast<std::uint32_t>(sequence >> 32)}},
                                        static_cast<std::uint32_t>(o.seed), static_cast<std::uint32_t>(o.seed >> 32));
  const double u = (static_cast<double>(bits.v[0] >> 5) * 67108864.0 + static_cast<double>(bits.v[1] >> 6)) * 0x1p-53;
  double acc = 0;
  const double target = u * sum;
  for (std::size_t i = 0; i < k; ++i) {
    acc += p[i];
    if (target < acc) return static_cast<std::int32_t>(idx[i]);
  }
  return static_cast<std::int32_t>(idx[k - 1]);
}

std::vector<float> download_logits(Stream& s, const Tensor& logits) {
  std::vector<std::byte> raw(static_cast<std::size_t>(logits.numel()) * dtype_size(logits.dtype));
  s.download(raw.data(), logits);
  s.synchronize();
  std::vector<float> out(static_cast<std::size_t>(logits.numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(load_element(raw.data(), logits.dtype, static_cast<std::int64_t>(i)));
  return out;
}

Generation generate(Model& model, std::span<const std::vector<std::int32_t>> prompts, std::int64_t steps,
                    const SamplingOptions& options, StepObserver* observer,
                    const std::vector<std::vector<std::int32_t>>* forced) {
  if (steps < 0) throw_invalid_argument("generate", "steps", ">= 0", std::to_string(steps));
  const auto batch = static_cast<std::int64_t>(prompts.size());
  std::int64_t longest = 0;
  for (const auto& p : prompts) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(p.size()));
  Session session(model, batch, longest + std::max<std::int64_t>(steps - 1, 0));
  const std::int64_t vocab = model.config().vocab_size;
  Generation g;
  g.tokens.resize(static_cast<std::size_t>(batch));
  Tensor logits = session.step(prompts, observer);
  g.last_logits = download_logits(model.stream(), logits);
  for (std::int64_t s = 0; s < steps; ++s) {
    std::vector<std::vector<std::int32_t>> next(static_cast<std::size_t>(batch));
    for (std::int64_t i = 0; i < batch; ++i) {
      const std::span<const float> row(g.last_logits.data() + i * vocab, static_cast<std::size_t>(vocab));
      std::int32_t t = select_token(row, options, i, s);
      if (forced) t = forced->at(static_cast<std::size_t>(i)).at(static_cast<std::size_t>(s));
      g.tokens[static_cast<std::size_t>(i)].push_back(t);
      next[static_cast<std::size_t>(i)] = {t};
    }
    if (s + 1 == steps) break;  // the last token is chosen, not fed
    logits = session.step(next, observer);
    g.last_logits = download_logits(model.stream(), logits);
  }
  return g;
}

}  // namespace hal::model

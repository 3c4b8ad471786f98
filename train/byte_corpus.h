#pragma once
// A text as a byte-level corpus (vocabulary 256: token = byte) and the
// batches a training run draws from it. Batch b of step t for data-parallel
// rank r of R starts at a Philox-chosen offset keyed by (seed, (t R + r) B + b),
// so a run is the same on every device and thread count, and ranks see
// different text.
#include <cstdint>
#include <string>
#include <vector>

namespace hal::train {

class ByteCorpus {
 public:
  // The whole file; throws io_error naming it when it cannot be read, and
  // invalid_argument when it is shorter than `min_bytes`.
  static ByteCorpus from_file(const std::string& path, std::size_t min_bytes = 2);
  explicit ByteCorpus(std::string text, std::string origin = "text");

  std::size_t size() const noexcept { return text_.size(); }
  const std::string& origin() const noexcept { return origin_; }
  const std::string& text() const noexcept { return text_; }

  // ids[b * seq + i] = text[o_b + i], targets[b * seq + i] = text[o_b + i + 1].
  // Throws invalid_argument when the text is shorter than seq + 1 bytes.
  void batch(std::int64_t step, std::uint64_t seed, std::int64_t rank, std::int64_t ranks, std::int64_t batch,
             std::int64_t seq, std::vector<std::int32_t>& ids, std::vector<std::int32_t>& targets) const;

 private:
  std::string text_, origin_;
};

}  // namespace hal::train

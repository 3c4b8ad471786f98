#include "train/byte_corpus.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "hal/error.h"
#include "hal/philox.h"

namespace hal::train {

ByteCorpus::ByteCorpus(std::string text, std::string origin) : text_(std::move(text)), origin_(std::move(origin)) {}

ByteCorpus ByteCorpus::from_file(const std::string& path, std::size_t min_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::io_error, fmt::format("'{}': cannot open the training text", path));
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) throw Error(ErrorCode::io_error, fmt::format("'{}': read error", path));
  std::string bytes = text.str();
  if (bytes.size() < min_bytes)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("'{}': the training text has {} bytes, at least {} are needed", path, bytes.size(), min_bytes));
  return ByteCorpus(std::move(bytes), path);
}

void ByteCorpus::batch(std::int64_t step, std::uint64_t seed, std::int64_t rank, std::int64_t ranks,
                       std::int64_t batch, std::int64_t seq, std::vector<std::int32_t>& ids,
                       std::vector<std::int32_t>& targets) const {
  if (seq < 1 || text_.size() < static_cast<std::size_t>(seq) + 1)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("ByteCorpus '{}': {} bytes cannot give a sequence of {} tokens and its next one", origin_,
                            text_.size(), seq));
  const std::uint64_t starts = text_.size() - static_cast<std::uint64_t>(seq);  // offsets 0 .. size - seq - 1
  ids.resize(static_cast<std::size_t>(batch * seq));
  targets.resize(ids.size());
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto draw = static_cast<std::uint64_t>((step * ranks + rank) * batch + b);
    const std::uint64_t r = (std::uint64_t{philox_bits(seed, 2 * draw)} << 32) | philox_bits(seed, 2 * draw + 1);
    const std::uint64_t o = r % starts;
    for (std::int64_t i = 0; i < seq; ++i) {
      const auto at = static_cast<std::size_t>(b * seq + i);
      ids[at] = static_cast<unsigned char>(text_[o + static_cast<std::uint64_t>(i)]);
      targets[at] = static_cast<unsigned char>(text_[o + static_cast<std::uint64_t>(i) + 1]);
    }
  }
}

}  // namespace hal::train

#pragma once
// A read-only memory mapping of a whole file: how large inputs (checkpoint
// shards, big .npy arrays) are read without a second copy in host memory. The
// pages are read on first touch; uploading a tensor from the mapping reads its
// bytes once, straight from the page cache.
//
// The mapping lives as long as the MappedFile (move-only). Opening a directory,
// a missing file or one that cannot be mapped throws hal::Error(io_error)
// naming the file. An empty file maps to an empty span.
#include <cstddef>
#include <span>
#include <string>

namespace hal::io {

class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& path() const noexcept { return path_; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }

 private:
  void release() noexcept;
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace hal::io

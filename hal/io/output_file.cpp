#include "hal/io/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "hal/error.h"

namespace hal::io {

OutputFile::OutputFile(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
  if (!file_) fail("cannot open for writing", errno);
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::fail(std::string_view what, int err) {
  throw Error(ErrorCode::io_error, fmt::format("{}: {} ({})", path_, what, std::strerror(err)));
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (!file_) throw Error(ErrorCode::io_error, fmt::format("{}: write after close", path_));
  if (bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) != bytes) fail(fmt::format("write of {} bytes failed", bytes), errno);
}

void OutputFile::close() {
  if (!file_) return;
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  const bool flushed = std::fflush(f) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!flushed) fail("write failed", flush_errno);
  if (!closed) fail("close failed", errno);
}

void write_text_file(const std::string& path, std::string_view text) {
  OutputFile f(path);
  f.write(text);
  f.close();
}

}  // namespace hal::io

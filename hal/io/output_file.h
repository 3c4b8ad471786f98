#pragma once
// A file written with every failure reported: the open, each write, and the
// final flush and close, where a full disk shows for a small file (its bytes
// sit in the stdio buffer until then). Every writer of hal/io/, the CLI's
// reports and the suite's results write through it, so that no command
// reports success for a file that is not on disk.
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace hal::io {

class OutputFile {
 public:
  // Creates or truncates `path`; throws Error(io_error) naming the file.
  explicit OutputFile(const std::string& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Closes without reporting: only reached on an error path, when close()
  // was not called (the caller is already throwing).
  ~OutputFile();

  void write(const void* data, std::size_t bytes);  // throws Error(io_error)
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes and closes; throws Error(io_error) when either fails.
  void close();

 private:
  [[noreturn]] void fail(std::string_view what, int err);
  std::string path_;
  std::FILE* file_ = nullptr;
};

// The whole of `text` into `path`, through OutputFile.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace hal::io

#pragma once
// What the reader fuzzers share: the readers take paths, so each input is
// written to a file of this process first (in /dev/shm when there is one:
// no disk traffic), and a finding is reported by aborting with a message.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace hal::fuzz {

inline std::string scratch_path(const char* name) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/hal-fuzz-" + std::to_string(getpid()) + "-" + name;
}

inline void write_file(const std::string& path, const void* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  if (std::fclose(f) != 0) std::abort();
}

// A broken property: libFuzzer saves the input that led here.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "hal fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace hal::fuzz

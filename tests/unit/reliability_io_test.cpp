// Files and values (issue 17): writes to a full disk are errors, readers
// name the file and refuse before allocating, fill_random's range is checked.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "hal/io/npy.h"
#include "hal/io/output_file.h"
#include "hal/io/safetensors.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "test_helpers.h"

namespace hal {
namespace {

using io::HostArray;
using test::contains;
using test::cpu;
using test::error_of;
using test::view_of;

bool have_dev_full() { return ::access("/dev/full", W_OK) == 0; }

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hal_reliability_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

HostArray small_array() {
  HostArray a;
  a.dtype = DType::f32;
  a.shape = {3};
  a.bytes.resize(12, std::byte{1});
  return a;
}

// A small file's bytes sit in the stdio buffer until the close: the old
// writer checked the stream before closing and reported success.
TEST(ReliabilityIo, WritesToAFullDiskAreIoErrors) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full here";
  const std::string npy = error_of([] { io::write_npy("/dev/full", small_array()); }, ErrorCode::io_error);
  EXPECT_TRUE(contains(npy, "/dev/full")) << npy;
  EXPECT_TRUE(contains(npy, "No space left")) << npy;
  EXPECT_TRUE(contains(error_of([] { io::write_text_file("/dev/full", "[]\n"); }, ErrorCode::io_error), "/dev/full"));
  io::SafetensorsFile f;
  f.tensors.push_back({"t", DType::f32, {3}, std::vector<std::uint8_t>(12, 1)});
  EXPECT_TRUE(contains(error_of([&] { io::write_safetensors("/dev/full", f); }, ErrorCode::io_error), "/dev/full"));
  // A large write fails at the write itself.
  HostArray big = small_array();
  big.shape = {1 << 20};
  big.bytes.resize(4u << 20);
  EXPECT_TRUE(contains(error_of([&] { io::write_npy("/dev/full", big); }, ErrorCode::io_error), "/dev/full"));
}

TEST(ReliabilityIo, OutputFileReportsAnUnwritablePath) {
  const std::string msg = error_of([] { io::OutputFile f("/nonexistent-dir/x.npy"); }, ErrorCode::io_error);
  EXPECT_TRUE(contains(msg, "/nonexistent-dir/x.npy: cannot open for writing")) << msg;
}

// iostreams reported a directory as "basic_filebuf::underflow error reading
// the file"; an endless file was read whole (std::bad_alloc) before its magic
// was looked at.
TEST(ReliabilityIo, NpyReaderNamesTheFileAndChecksTheMagicFirst) {
  const std::string dir = temp_path("dir.npy");
  std::filesystem::create_directories(dir);
  const std::string d = error_of([&] { io::read_npy(dir); }, ErrorCode::io_error);
  EXPECT_TRUE(contains(d, dir + ": cannot read: is a directory")) << d;
  std::filesystem::remove_all(dir);
  if (::access("/dev/zero", R_OK) == 0) {
    const std::string z = error_of([] { io::read_npy("/dev/zero"); }, ErrorCode::io_error);
    EXPECT_TRUE(contains(z, "/dev/zero: not a .npy file")) << z;
  }
}

// A header that declares far more than the file holds is refused from the
// header, before any allocation of its size.
TEST(ReliabilityIo, NpyReaderRefusesDeclaredSizesTheFileDoesNotHold) {
  const std::string p = temp_path("huge.npy");
  {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::ofstream f(p, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
    f.write(len, 2);
    f << header << "abcd";
  }
  const std::string msg = error_of([&] { io::read_npy(p); }, ErrorCode::io_error);
  EXPECT_TRUE(contains(msg, "truncated data")) << msg;
  // A header length beyond the file (version 2: 4-byte length).
  {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write("\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", 14);
  }
  EXPECT_TRUE(contains(error_of([&] { io::read_npy(p); }, ErrorCode::io_error), "truncated header"));
  std::filesystem::remove(p);
}

// read_npy_header + read_npy_into: the data goes straight into the caller's
// memory, and a file that changed between the two is refused.
TEST(ReliabilityIo, NpyHeaderThenDataIntoTheCallersBuffer) {
  const std::string p = temp_path("into.npy");
  HostArray a;
  a.dtype = DType::i32;
  a.shape = {2, 3};
  for (std::int32_t i = 0; i < 6; ++i) {
    const std::int32_t v = i * 1000 - 7;
    const auto* b = reinterpret_cast<const std::byte*>(&v);
    a.bytes.insert(a.bytes.end(), b, b + 4);
  }
  io::write_npy(p, a);
  const io::NpyHeader h = io::read_npy_header(p);
  EXPECT_EQ(h.dtype, DType::i32);
  EXPECT_EQ(h.shape, (Shape{2, 3}));
  EXPECT_EQ(h.data_bytes, 24);
  EXPECT_EQ(h.data_offset % 64, 0u);
  std::vector<std::byte> into(24);
  io::read_npy_into(p, h, into.data());
  EXPECT_EQ(into, a.bytes);
  io::NpyHeader other = h;
  other.shape = {6};
  EXPECT_TRUE(contains(error_of([&] { io::read_npy_into(p, other, into.data()); }, ErrorCode::io_error), "changed"));
  std::filesystem::remove(p);
}

// The value is a + (b - a) * u in float: a width beyond float's range gave
// +inf, outside [a, b).
TEST(ReliabilityIo, FillRandomRefusesARangeWiderThanFloat) {
  Stream s(cpu());
  std::vector<float> y(64, 7.0f);
  const Tensor t = view_of(y, DType::f32, {64});
  const std::string msg = error_of([&] {
    ops::fill_random(s, t, {.a = -3e38f, .b = 3e38f});
  });
  EXPECT_TRUE(contains(msg, "fill_random: argument 'b'")) << msg;
  EXPECT_TRUE(contains(msg, "b - a finite")) << msg;
  EXPECT_EQ(y, std::vector<float>(64, 7.0f));
  // The widest range that fits stays valid, and every value lies in [a, b].
  ops::fill_random(s, t, {.a = -1.5e38f, .b = 1.5e38f});
  for (float v : y) {
    EXPECT_TRUE(std::isfinite(v)) << v;
    EXPECT_GE(v, -1.5e38f);
    EXPECT_LE(v, 1.5e38f);
  }
}

}  // namespace
}  // namespace hal

// The safetensors reader and writer (hal/io/safetensors.h): round trips, views
// of the mapping, and each kind of lying or damaged file, which must be an
// io_error naming the file (and the tensor) rather than a crash or a read
// outside the file.
#include "hal/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hal/error.h"
#include "test_helpers.h"

namespace {

using hal::DType;
using hal::io::SafetensorsReader;
using hal::test::contains;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hal_safetensors_test_" + name)).string();
}

// A file with `header` (padded to 8 bytes) and `data_bytes` bytes of data 0, 1, 2, ...
std::string write_raw(const std::string& name, std::string header, std::size_t data_bytes, std::int64_t length = -1) {
  while (header.size() % 8 != 0) header += ' ';
  const std::string path = temp_path(name);
  std::ofstream f(path, std::ios::binary);
  const std::uint64_t n = length < 0 ? header.size() : static_cast<std::uint64_t>(length);
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(n >> (8 * i)));
  f << header;
  for (std::size_t i = 0; i < data_bytes; ++i) f.put(static_cast<char>(i));
  return path;
}

std::string error_of(const std::string& path) {
  try {
    SafetensorsReader r(path);
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::io_error) << e.what();
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

TEST(Safetensors, RoundTripsThroughTheMappedReader) {
  hal::io::SafetensorsFile file;
  file.metadata["format"] = "pt";
  file.metadata["note \"quoted\"\r\n\b\f\x01"] = "\xC3\xA9";
  file.tensors.push_back({"model.embed_tokens.weight", DType::bf16, {3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}});
  file.tensors.push_back({"empty", DType::f32, {0, 4}, {}});
  file.tensors.push_back({"scalar", DType::i64, {}, {1, 0, 0, 0, 0, 0, 0, 0}});
  const std::string path = temp_path("roundtrip.safetensors");
  hal::io::write_safetensors(path, file);

  const SafetensorsReader r(path);
  EXPECT_EQ(r.metadata(), file.metadata);
  ASSERT_EQ(r.tensors().size(), 3u);
  const hal::io::SafetensorsEntry* e = r.find("model.embed_tokens.weight");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dtype, DType::bf16);
  EXPECT_EQ(e->shape, (hal::Shape{3, 2}));
  ASSERT_EQ(r.bytes(*e).size(), 12u);
  EXPECT_EQ(std::memcmp(r.bytes(*e).data(), file.tensors[0].bytes.data(), 12), 0);
  EXPECT_EQ(r.find("empty")->shape, (hal::Shape{0, 4}));
  EXPECT_EQ(r.bytes(*r.find("scalar")).size(), 8u);
  EXPECT_EQ(r.find("absent"), nullptr);

  const hal::io::SafetensorsFile back = hal::io::read_safetensors(path);
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors[0].bytes, file.tensors[0].bytes);
}

TEST(Safetensors, RefusesLyingHeaders) {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(SafetensorsReader(write_raw("ok", ok, 8)));

  EXPECT_TRUE(contains(error_of(write_raw("short", "", 0, 0).substr(0)), "header does not start"));
  EXPECT_TRUE(contains(error_of(write_raw("long", ok, 8, 1 << 20)), "exceeds the file"));
  EXPECT_TRUE(contains(error_of(write_raw("huge", ok, 8, std::int64_t{1} << 40)), "exceeds the limit"));
  EXPECT_TRUE(contains(error_of(write_raw("array", "[1]", 0)), "does not start with '{'"));
  EXPECT_TRUE(contains(error_of(write_raw("json", "{\"a\":", 0)), "malformed JSON"));
  EXPECT_TRUE(contains(error_of(write_raw("outside", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4)),
                       "tensor 'a': data_offsets [0, 8] lie outside the 4 data bytes"));
  EXPECT_TRUE(contains(error_of(write_raw("size", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)),
                       "needs 12"));
  EXPECT_TRUE(contains(error_of(write_raw("negdim", R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)),
                       "non-negative integers"));
  EXPECT_TRUE(contains(error_of(write_raw("fracdim", R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8)),
                       "non-negative integers"));
  EXPECT_TRUE(contains(
      error_of(write_raw("overflow",
                         R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0)),
      "overflows int64"));
  EXPECT_TRUE(contains(error_of(write_raw("bigoff", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999]}})", 8)),
                       "two non-negative integers"));
  EXPECT_TRUE(contains(error_of(write_raw("dtype", R"({"w":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}})", 4)),
                       "tensor 'w': dtype 'U16' is not supported"));
  EXPECT_TRUE(contains(error_of(write_raw("fields", R"({"w":{"dtype":"F32","shape":[1]}})", 4)), "tensor 'w': expected"));
  EXPECT_TRUE(contains(error_of(write_raw("meta", R"({"__metadata__":{"k":1}})", 0)), "'k' is not a string"));
}

TEST(Safetensors, RefusesOverlappingTensors) {
  const std::string overlap =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_TRUE(contains(error_of(write_raw("overlap", overlap, 12)), "tensors 'a' [0, 8] and 'b' [4, 12] overlap"));
  // Empty tensors own no bytes and may sit anywhere inside the data.
  const std::string empties =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})";
  EXPECT_NO_THROW(SafetensorsReader(write_raw("empties", empties, 8)));
}

TEST(Safetensors, RefusesMissingDirectoriesAndTruncatedFiles) {
  EXPECT_TRUE(contains(error_of(temp_path("does-not-exist")), "cannot open"));
  const std::string dir = temp_path("a-directory");
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(contains(error_of(dir), "directory"));
  const std::string tiny = temp_path("tiny");
  std::ofstream(tiny, std::ios::binary) << "abc";
  EXPECT_TRUE(contains(error_of(tiny), "too short"));
}

}  // namespace

// The safetensors defects of issue 17, checked at the reader's level (the
// JSON reader and SafetensorsReader that fixed them came with main c5d727b):
// each hostile header is an io_error naming the file, never a crash, an
// escaped exception or a tensor accepted with the wrong size.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "hal/error.h"
#include "hal/io/safetensors.h"
#include "test_helpers.h"

namespace {

using hal::DType;
using hal::test::contains;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hal_rel_st_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string write_header(const std::string& name, std::string header, std::size_t data_bytes) {
  while (header.size() % 8 != 0) header += ' ';
  const std::string path = temp_path(name);
  std::ofstream f(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(static_cast<std::uint64_t>(header.size()) >> (8 * i)));
  f << header << std::string(data_bytes, '\0');
  return path;
}

std::string io_error_of(const std::string& path) {
  try {
    hal::io::SafetensorsReader r(path);
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::io_error) << e.what();
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    std::filesystem::remove(path);
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a hal::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

// A 60 kB header of nested arrays crashed the process (unbounded recursion).
TEST(ReliabilitySafetensors, DeeplyNestedHeaderIsAnError) {
  std::string deep = "{\"a\":";
  deep += std::string(60000, '[');
  EXPECT_TRUE(contains(io_error_of(write_header("deep", deep, 0)), "nesting"));
}

// std::stoll's exceptions escaped as "hal: error: stoi" without the file.
TEST(ReliabilitySafetensors, NumbersThatDoNotParseNameTheFile) {
  const std::string msg =
      io_error_of(write_header("big", R"({"a":{"dtype":"F32","shape":[99999999999999999999999],"data_offsets":[0,4]}})", 4));
  EXPECT_FALSE(contains(msg, "stoi")) << msg;
  EXPECT_TRUE(contains(msg, "tensor 'a'")) << msg;
}

TEST(ReliabilitySafetensors, NegativeDimensionsAndOverflowingCountsAreRefused) {
  EXPECT_TRUE(contains(
      io_error_of(write_header("neg", R"({"a":{"dtype":"F32","shape":[-1,-4],"data_offsets":[0,16]}})", 16)),
      "non-negative"));
  // 2^32 * 2^32 elements: the count overflows int64 (it was accepted with 0 bytes).
  EXPECT_TRUE(contains(io_error_of(write_header(
                           "ovf", R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0)),
                       "overflows int64"));
  EXPECT_TRUE(contains(io_error_of(write_header(
                           "ovf2", R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", 0)),
                       "tensor 'a'"));
}

// Escapes round-trip between the writer and the reader: \r, \b, \f, control
// characters and code points above 0xFF.
TEST(ReliabilitySafetensors, EscapesRoundTripThroughWriterAndReader) {
  std::string every;
  for (int c = 1; c < 0x20; ++c) every += static_cast<char>(c);
  every += "\"\\/ \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // é, €, U+1F600
  hal::io::SafetensorsFile f;
  f.metadata["text"] = every;
  f.metadata[every] = "key";
  f.tensors.push_back({"name\r\b\f\xE2\x82\xAC", DType::f32, {1}, std::vector<std::uint8_t>(4, 0)});
  const std::string path = temp_path("escapes");
  hal::io::write_safetensors(path, f);
  const hal::io::SafetensorsReader r(path);
  EXPECT_EQ(r.metadata().at("text"), every);
  EXPECT_EQ(r.metadata().at(every), "key");
  ASSERT_EQ(r.tensors().size(), 1u);
  EXPECT_NE(r.find("name\r\b\f\xE2\x82\xAC"), nullptr);
  std::filesystem::remove(path);
}

}  // namespace

// The .npy reader and writer (hal/io/npy.h): round trips of every
// supported dtype, files built byte by byte from the format specification, and
// each kind of malformed file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "hal/error.h"
#include "hal/io/npy.h"

namespace {

using hal::DType;
using hal::io::HostArray;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hal_npy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A file of the given version, header text (padded and terminated here as
  // the spec says) and data bytes.
  std::string write_raw(const std::string& name, int major, std::string header, const std::string& data,
                        const std::string& magic = "\x93NUMPY") {
    const std::size_t prefix = major == 1 ? 10 : 12;
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string file = magic;
    file += static_cast<char>(major);
    file += '\0';
    const std::uint32_t len = static_cast<std::uint32_t>(header.size());
    for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) file += static_cast<char>((len >> (8 * i)) & 0xff);
    file += header + data;
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << file;
    return p;
  }

 private:
  std::filesystem::path dir_;
};

template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

// Expects read_npy(p) to fail with io_error naming the file and `what`.
void expect_io_error(const std::string& p, const std::string& what) {
  try {
    hal::io::read_npy(p);
    ADD_FAILURE() << "no error for " << p;
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::io_error) << e.what();
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "file name missing: " << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << "'" << what << "' missing: " << e.what();
  }
}

HostArray make_array(DType dtype, const hal::Shape& shape) {
  HostArray a;
  a.dtype = dtype;
  a.shape = shape;
  a.bytes.resize(static_cast<std::size_t>(a.numel()) * hal::dtype_size(dtype));
  for (std::size_t i = 0; i < a.bytes.size(); ++i)
    a.bytes[i] = static_cast<std::byte>(dtype == DType::boolean ? i % 2 : (i * 37 + 11) % 251);
  return a;
}

TEST_F(NpyTest, RoundTripsEverySupportedDtype) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::i8, DType::i32, DType::i64, DType::boolean}) {
    for (const hal::Shape& shape : {hal::Shape{}, hal::Shape{5}, hal::Shape{2, 3, 4}, hal::Shape{3, 0}}) {
      const HostArray a = make_array(t, shape);
      const std::string p = path(std::string(hal::dtype_name(t)) + ".npy");
      hal::io::write_npy(p, a);
      const HostArray b = hal::io::read_npy(p);
      EXPECT_EQ(b.dtype, t) << hal::dtype_name(t);
      EXPECT_EQ(b.shape, shape) << hal::dtype_name(t) << shape.str();
      EXPECT_EQ(b.bytes, a.bytes) << hal::dtype_name(t) << shape.str();
    }
  }
}

TEST_F(NpyTest, WrittenHeaderFollowsTheFormat) {
  hal::io::write_npy(path("v.npy"), make_array(DType::f32, {7}));
  std::ifstream in(path("v.npy"), std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(file[6], 1);
  const std::size_t len = static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);  // data aligned to 64 bytes
  const std::string header = file.substr(10, len);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (7,)"), std::string::npos) << header;  // a 1-tuple keeps its comma
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_EQ(file.size(), 10 + len + 7 * 4);
}

TEST_F(NpyTest, ReadsHandWrittenVersion1File) {
  const std::string p =
      write_raw("i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }", bytes_of<std::int32_t>({7, -3}));
  const HostArray a = hal::io::read_npy(p);
  EXPECT_EQ(a.dtype, DType::i32);
  EXPECT_EQ(a.shape, (hal::Shape{2, 1}));
  std::int32_t v[2];
  std::memcpy(v, a.bytes.data(), sizeof v);
  EXPECT_EQ(v[0], 7);
  EXPECT_EQ(v[1], -3);
}

TEST_F(NpyTest, ReadsVersions2And3AndDoubleQuotedKeys) {
  for (int major : {2, 3}) {
    const std::string p = write_raw(std::string("v").append(std::to_string(major)).append(".npy"), major,
                                    "{\"descr\": \"<f8\", \"shape\": (3,), \"fortran_order\": False}",
                                    bytes_of<double>({1.5, -2.0, 0.25}));
    const HostArray a = hal::io::read_npy(p);
    EXPECT_EQ(a.dtype, DType::f64);
    EXPECT_EQ(a.shape, (hal::Shape{3}));
    double v[3];
    std::memcpy(v, a.bytes.data(), sizeof v);
    EXPECT_EQ(v[2], 0.25);
  }
}

TEST_F(NpyTest, ReadsNumpyInt8Spelling) {
  const std::string p = write_raw("i1.npy", 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", "\x05\xfe");
  const HostArray a = hal::io::read_npy(p);
  EXPECT_EQ(a.dtype, DType::i8);
  EXPECT_EQ(static_cast<std::int8_t>(a.bytes[1]), -2);
}

TEST_F(NpyTest, TruncatedDataRejected) {
  const std::string p =
      write_raw("t.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", bytes_of<float>({1, 2, 3}));
  expect_io_error(p, "truncated data");
}

TEST_F(NpyTest, ExtraDataRejected) {
  const std::string p =
      write_raw("x.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", bytes_of<float>({1, 2, 3}));
  expect_io_error(p, "data size mismatch");
}

TEST_F(NpyTest, WrongMagicRejected) {
  const std::string p =
      write_raw("m.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", bytes_of<float>({1}), "PK\x03\x04xx");
  expect_io_error(p, "wrong magic");
}

TEST_F(NpyTest, TruncatedHeaderRejected) {
  const std::string p = path("h.npy");
  std::ofstream(p, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17);
  expect_io_error(p, "truncated header");
}

TEST_F(NpyTest, MalformedHeaderDictRejected) {
  expect_io_error(write_raw("a.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", ""), "malformed header");
  expect_io_error(write_raw("b.npy", 1, "{'descr': '<f4', 'shape': (2,), }", bytes_of<float>({1, 2})), "malformed header");
  expect_io_error(write_raw("c.npy", 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", ""),
                  "malformed header");
  expect_io_error(write_raw("d.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ""),
                  "malformed header");
  expect_io_error(write_raw("e.npy", 1, "not a dict", ""), "malformed header");
}

TEST_F(NpyTest, UnsupportedDtypeRejected) {
  for (const char* descr : {">f4", "<u4", "|u1", "<c8", "|O"}) {
    const std::string p = write_raw("u.npy", 1,
                                    std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }",
                                    bytes_of<float>({1}));
    expect_io_error(p, std::string("unsupported dtype '") + descr + "'");
  }
}

TEST_F(NpyTest, FortranOrderRejected) {
  const std::string p = write_raw("f.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                                  bytes_of<float>({1, 2, 3, 4}));
  expect_io_error(p, "fortran_order");
}

TEST_F(NpyTest, NegativeDimensionRejected) {
  expect_io_error(write_raw("n.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", ""),
                  "negative dimension");
}

TEST_F(NpyTest, OverflowingShapeRejected) {
  expect_io_error(
      write_raw("o1.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""),
      "does not fit in int64");
  expect_io_error(write_raw("o2.npy", 1,
                            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
                  "overflows int64");
  expect_io_error(write_raw("o3.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", ""),
                  "overflows int64");
}

TEST_F(NpyTest, MissingFileRejected) { expect_io_error(path("absent.npy"), "cannot open"); }

TEST_F(NpyTest, InvalidBoolByteRejected) {
  expect_io_error(write_raw("b.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"),
                  "bool");
}

TEST_F(NpyTest, ConvertRoundsOnceToNearestEven) {
  HostArray a;
  a.dtype = DType::f32;
  a.shape = {3};
  const float v[3] = {1.00390625f, 1.01171875f, -3.0f};  // 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties up to 1 + 2^-6
  a.bytes.resize(sizeof v);
  std::memcpy(a.bytes.data(), v, sizeof v);
  const HostArray b = hal::io::convert(a, DType::bf16);
  ASSERT_EQ(b.dtype, DType::bf16);
  ASSERT_EQ(b.bytes.size(), 6u);
  std::uint16_t bits[3];
  std::memcpy(bits, b.bytes.data(), sizeof bits);
  EXPECT_EQ(hal::bf16_to_f32(bits[0]), 1.0f);
  EXPECT_EQ(hal::bf16_to_f32(bits[1]), 1.015625f);
  EXPECT_EQ(hal::bf16_to_f32(bits[2]), -3.0f);
}

// Valid files with random damage: bytes overwritten, the file cut short, header
// tokens inserted or removed, the version and header length changed. Each read
// must give a consistent array or an io_error naming the file; never a crash
// or an out-of-bounds access (the ASan preset runs this too).
TEST_F(NpyTest, DamagedFilesGiveConsistentArraysOrIoErrors) {
  std::vector<std::string> seeds;
  for (const auto& [t, shape] : {std::pair<DType, hal::Shape>{DType::f32, {3, 4}}, {DType::i64, {5}},
                                 {DType::f16, {2, 2, 2}}, {DType::f32, {}}, {DType::i8, {0, 3}},
                                 {DType::boolean, {6}}}) {
    hal::io::write_npy(path("seed.npy"), make_array(t, shape));
    std::ifstream in(path("seed.npy"), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const char* const tokens[] = {"'descr'", "'<f4'", "'>f4'", "'|u1'", "True", "(", ")", ",", "-1", "4294967296",
                                "99999999999999999999", "9223372036854775807", "'shape'", "{", "}", ":", " ", "\n",
                                "0", "'<c8'", "''"};
  std::mt19937 rng(20261130);
  const std::string p = path("damaged.npy");
  int arrays = 0, errors = 0;
  for (int it = 0; it < 3000; ++it) {
    std::string file = seeds[rng() % seeds.size()];
    for (int edit = 1 + static_cast<int>(rng() % 4); edit > 0; --edit) {
      const std::size_t at = 8 + rng() % 64;
      switch (rng() % 5) {
        case 0: file[rng() % file.size()] = static_cast<char>(rng()); break;
        case 1: file.resize(rng() % file.size() + 1); break;
        case 2: if (at < file.size()) file.insert(at, tokens[rng() % std::size(tokens)]); break;
        case 3: if (at + 3 < file.size()) file.erase(at, 1 + rng() % 3); break;
        case 4:  // the format version and the low byte of the header length
          if (file.size() > 9) {
            file[6] = static_cast<char>(rng() % 4);
            file[8] = static_cast<char>(rng());
          }
          break;
      }
    }
    std::ofstream(p, std::ios::binary | std::ios::trunc) << file;
    try {
      const HostArray a = hal::io::read_npy(p);
      const auto expected = a.numel() * static_cast<std::int64_t>(hal::dtype_size(a.dtype));
      ASSERT_EQ(static_cast<std::int64_t>(a.bytes.size()), expected) << "iteration " << it;
      ++arrays;
    } catch (const hal::Error& e) {
      ASSERT_EQ(e.code(), hal::ErrorCode::io_error) << "iteration " << it << ": " << e.what();
      ASSERT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      ++errors;
    }
  }
  // Damage to data bytes alone leaves a valid file; the rest must be caught.
  EXPECT_GT(arrays, 0) << errors << " errors";
  EXPECT_GT(errors, 2000) << arrays << " arrays";
}

TEST_F(NpyTest, WritingBf16IsRejected) {
  HostArray a = make_array(DType::bf16, {2});
  try {
    hal::io::write_npy(path("bf.npy"), a);
    ADD_FAILURE() << "no error";
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
}

}  // namespace

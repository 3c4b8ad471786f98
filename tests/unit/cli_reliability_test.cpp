// The `hal` tool's failure behaviour (issue 17), run as a separate process:
// no exit 0 for work not done (a full disk, a device that is not here, a
// recording without tensors), I/O errors exit 3 (usage errors alone exit 2),
// values are refused rather than truncated, and messages name the op, the
// argument or the file instead of an internal function.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hal/io/npy.h"
#include "hal/io/safetensors.h"
#include "hal/registry.h"
#include "cli_fixture.h"

namespace {

using hal::DType;
using hal::io::HostArray;

using hal::test::CliResult;

class CliReliabilityTest : public hal::test::CliFixture {
 protected:
  CliReliabilityTest() : CliFixture("hal_cli_rel_") {}

  template <class T>
  std::string write(const std::string& name, DType dtype, const hal::Shape& shape, const std::vector<T>& values) const {
    HostArray a;
    a.dtype = dtype;
    a.shape = shape;
    a.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
    const std::string p = path(name);
    hal::io::write_npy(p, a);
    return p;
  }
  std::string write_f32(const std::string& name, const hal::Shape& shape) const {
    return write(name, DType::f32, shape, std::vector<float>(static_cast<std::size_t>(hal::checked_numel(shape)), 1.5f));
  }

  static bool has(const CliResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }
  static bool have_dev_full() { return ::access("/dev/full", W_OK) == 0; }

};

TEST_F(CliReliabilityTest, FullDiskIsAnIoErrorForEveryWriter) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full here";
  const std::string x = write_f32("x.npy", {3});
  CliResult r = run("run exp --in x=" + x + " --out y=/dev/full");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, "/dev/full")) << r.output;
  r = run("conformance --device cpu --op neg --dtype f32 --json /dev/full");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, "/dev/full")) << r.output;
  r = run("bench --device cpu --op add --shape 64x64 --quick --no-vendor --json /dev/full");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, "/dev/full")) << r.output;
  r = run("bench --device cpu --op add --shape 64x64 --quick --no-vendor --csv /dev/full");
  EXPECT_EQ(r.status, 3) << r.output;
  // A report on standard output that cannot be written.
  const std::string cmd = "'" + cli_ + "' devices --json > /dev/full 2>/dev/null";
  const int raw = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 3) << raw;
}

TEST_F(CliReliabilityTest, ConformanceThatTestsNothingDoesNotPass) {
  CliResult r = run("conformance --device nosuch:3 --op neg --dtype f32");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "no device 'nosuch:3'")) << r.output;
  r = run("conformance --device cpu:7 --op neg --dtype f32");
  EXPECT_EQ(r.status, 1) << r.output;
  // A backend built but without a device here: a skip (77), never a pass.
  for (const hal::BackendStatus& b : hal::backends()) {
    if (b.available) continue;
    r = run("conformance --device " + b.name + ":0 --op neg --dtype f32");
    EXPECT_EQ(r.status, 77) << r.output;
    EXPECT_TRUE(has(r, "skipped: " + b.name + " is not available")) << r.output;
  }
  // A recording without tensors compares nothing.
  hal::io::SafetensorsFile empty;
  empty.metadata["format"] = "hal-conformance-record-1";
  empty.metadata["device"] = "cpu";
  const std::string rec = path("empty.safetensors");
  hal::io::write_safetensors(rec, empty);
  r = run("conformance --device cpu --op neg --dtype f32 --compare " + rec);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, "holds no tensors")) << r.output;
  // A recording of other cases: every case skipped, so nothing was tested.
  const std::string other = path("other.safetensors");
  ASSERT_EQ(run("conformance --device cpu --op neg --dtype f32 --record " + other).status, 0);
  r = run("conformance --device cpu --op abs --dtype f32 --compare " + other);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "nothing was tested")) << r.output;
  // The same recording compared with its own cases passes.
  r = run("conformance --device cpu --op neg --dtype f32 --compare " + other);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(CliReliabilityTest, IoErrorsExit3AndNameTheFile) {
  CliResult r = run("run exp --in x=" + path("absent.npy") + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, path("absent.npy") + ": cannot open")) << r.output;
  // A directory: no "basic_filebuf::underflow".
  r = run("run exp --in x=" + path("") + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(has(r, "is a directory")) << r.output;
  EXPECT_FALSE(has(r, "basic_filebuf")) << r.output;
  // An endless file is refused at its magic, not read whole (std::bad_alloc).
  if (::access("/dev/zero", R_OK) == 0) {
    r = run("run exp --in x=/dev/zero --out y=" + path("y.npy"));
    EXPECT_EQ(r.status, 3) << r.output;
    EXPECT_TRUE(has(r, "/dev/zero: not a .npy file")) << r.output;
  }
  r = run("conformance --device cpu --op neg --dtype f32 --json " + path("no/such/dir/r.json"));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
}

TEST_F(CliReliabilityTest, IntegerAttributesWiderThanIntAreRefused) {
  const std::string x = write_f32("x.npy", {2, 3});
  CliResult r = run("run sum --in x=" + x + " --attr axis=4294967295 --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "attribute 'axis'")) << r.output;
  EXPECT_TRUE(has(r, "'4294967295'")) << r.output;
  // -1 stays the last axis.
  r = run("run sum --in x=" + x + " --attr axis=-1 --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string q = write_f32("q.npy", {1, 2, 1, 4});
  const std::string pos = write("p.npy", DType::i64, {2}, std::vector<std::int64_t>{0, 1});
  r = run("run rope --in x=" + q + " --in positions=" + pos + " --attr rotary_dim=4294967300 --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "attribute 'rotary_dim'")) << r.output;
}

TEST_F(CliReliabilityTest, RopePositionsBeyondInt32AreRefused) {
  const std::string x = write_f32("x.npy", {1, 2, 1, 4});
  const std::string pos = write("p.npy", DType::i64, {2}, std::vector<std::int64_t>{0, std::int64_t{1} << 31});
  CliResult r = run("run rope --in x=" + x + " --in positions=" + pos + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "rope: argument 'positions'")) << r.output;
  EXPECT_TRUE(has(r, "2147483648 at index 1")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
  const std::string ok = write("ok.npy", DType::i64, {2}, std::vector<std::int64_t>{0, 2147483647});
  r = run("run rope --in x=" + x + " --in positions=" + ok + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(CliReliabilityTest, MessagesNameTheOpAndArgument) {
  const std::string scalar = write_f32("s.npy", {});
  CliResult r = run("run sum --in x=" + scalar + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "sum: argument 'x'")) << r.output;
  EXPECT_TRUE(has(r, "rank 1 or more")) << r.output;
  EXPECT_FALSE(has(r, "[0, -1]")) << r.output;
  // ids of rank 8: y would need rank 9.
  const std::string table = write_f32("t.npy", {2, 3});
  const std::string ids = write("ids.npy", DType::i32, {1, 1, 1, 1, 1, 1, 1, 1}, std::vector<std::int32_t>{0});
  r = run("run embedding --in table=" + table + " --in ids=" + ids + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "embedding: argument 'ids'")) << r.output;
  EXPECT_FALSE(has(r, "Dims")) << r.output;
  // A shape whose byte size overflows: no "Buffer::for_tensor".
  r = run("run fill_random --attr shape=4294967296,4294967296 --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "hal run:")) << r.output;
  EXPECT_FALSE(has(r, "Buffer::for_tensor")) << r.output;
}

TEST_F(CliReliabilityTest, GemmWithAnEmptyBatchRuns) {
  const std::string a = write_f32("a.npy", {0, 2, 3});
  const std::string b = write_f32("b.npy", {3, 4});
  const CliResult r = run("run gemm --in a=" + a + " --in b=" + b + " --out y=" + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  const HostArray y = hal::io::read_npy(path("y.npy"));
  EXPECT_EQ(y.shape, (hal::Shape{0, 2, 4}));
  EXPECT_TRUE(y.bytes.empty());
}

// Inputs are read straight into device buffers and outputs written straight
// from them: the values survive the trip for each dtype .npy stores.
TEST_F(CliReliabilityTest, InputsAndOutputsRoundTripWithoutHostCopies) {
  const std::string x = write("x.npy", DType::f64, {2, 2}, std::vector<double>{1.0, -2.5, 1e300, -0.0});
  CliResult r = run("run copy --in x=" + x + " --attr perm=1,0 --out y=" + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  HostArray y = hal::io::read_npy(path("y.npy"));
  ASSERT_EQ(y.dtype, DType::f64);
  std::vector<double> v(4);
  std::memcpy(v.data(), y.bytes.data(), 32);
  EXPECT_EQ(v, (std::vector<double>{1.0, 1e300, -2.5, -0.0}));
  EXPECT_TRUE(std::signbit(v[3]));
  // Saved with a conversion (':f32'), and loaded with one.
  r = run("run neg --in x=" + x + ":f32 --out y=" + path("z.npy") + ":f64");
  ASSERT_EQ(r.status, 0) << r.output;
  y = hal::io::read_npy(path("z.npy"));
  ASSERT_EQ(y.dtype, DType::f64);
  std::memcpy(v.data(), y.bytes.data(), 32);
  EXPECT_EQ(v[0], -1.0);
  EXPECT_EQ(v[1], 2.5);
  EXPECT_TRUE(std::isinf(v[2]) && v[2] < 0);  // 1e300 rounds to inf in f32
}

}  // namespace

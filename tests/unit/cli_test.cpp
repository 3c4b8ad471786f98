// The `hal` command-line tool, run as a separate process on .npy files written
// and read with hal/io/npy.h. The binary's path comes from HAL_CLI_PATH (set by
// tests/CMakeLists.txt when the tool is built); without it the tests skip.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hal/dtype.h"
#include "hal/registry.h"
#include "cli_fixture.h"
#include "hal/io/npy.h"

namespace {

using hal::DType;
using hal::io::HostArray;

using hal::test::CliResult;

class CliTest : public hal::test::CliFixture {
 protected:
  CliTest() : CliFixture("hal_cli_test_") {}

  std::string write_f32(const std::string& name, const hal::Shape& shape, const std::vector<float>& values) const {
    HostArray a;
    a.dtype = DType::f32;
    a.shape = shape;
    a.bytes.resize(values.size() * sizeof(float));
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
    const std::string p = path(name);
    hal::io::write_npy(p, a);
    return p;
  }

  static std::vector<float> read_f32(const std::string& p, hal::Shape* shape = nullptr) {
    const HostArray a = hal::io::read_npy(p);
    EXPECT_EQ(a.dtype, DType::f32);
    if (shape) *shape = a.shape;
    std::vector<float> v(a.bytes.size() / sizeof(float));
    std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
    return v;
  }

};

TEST_F(CliTest, DevicesListsTheCpuAndBackends) {
  const CliResult r = run("devices");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("backends:"), std::string::npos) << r.output;
}

TEST_F(CliTest, DevicesJsonIsWellFormedAndNamesTheCpu) {
  const CliResult r = run("devices --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"name\": \"cpu\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"backends\""), std::string::npos) << r.output;
  // The CPU names the GEMM kernels it chose (which one depends on the machine).
  EXPECT_NE(r.output.find("\"kernels\": {\"gemm f32\": "), std::string::npos) << r.output;
  // Brackets balance outside strings, and the document is one object.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : r.output) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_FALSE(in_string);
  EXPECT_EQ(r.output.front(), '{');
}

TEST_F(CliTest, HelpAndUsage) {
  const CliResult none = run("");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.output.find("usage: hal"), std::string::npos) << none.output;
  const CliResult help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("devices"), std::string::npos);
  const CliResult run_help = run("run --help");
  EXPECT_EQ(run_help.status, 0);
  EXPECT_NE(run_help.output.find("attention"), std::string::npos) << run_help.output;
}

TEST_F(CliTest, RunAddBroadcasts) {
  const std::string a = write_f32("a.npy", {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string b = write_f32("b.npy", {3}, {10, 20, 30});
  const CliResult r = run("run add --device cpu --in a=" + a + " --in b=" + b + " --out y=" + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  hal::Shape shape;
  const std::vector<float> y = read_f32(path("y.npy"), &shape);
  EXPECT_EQ(shape, (hal::Shape{2, 3}));
  const std::vector<float> want = {11, 22, 33, 14, 25, 36};
  EXPECT_EQ(y, want);
}

TEST_F(CliTest, RunGemmWithTransB) {
  // A [2, 3]; B given as [N=4, K=3].
  const std::vector<float> av = {1, 2, 3, -1, 0.5f, 2};
  const std::vector<float> bv = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  const std::string a = write_f32("a.npy", {2, 3}, av);
  const std::string b = write_f32("b.npy", {4, 3}, bv);
  const CliResult r = run("run gemm --device cpu --in a=" + a + " --in b=" + b +
                          " --attr trans_b=true --attr alpha=2 --out y=" + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  hal::Shape shape;
  const std::vector<float> c = read_f32(path("c.npy"), &shape);
  ASSERT_EQ(shape, (hal::Shape{2, 4}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double want = 0;
      for (int k = 0; k < 3; ++k) want += av[i * 3 + k] * bv[j * 3 + k];
      EXPECT_NEAR(c[i * 4 + j], 2 * want, 1e-5) << i << "," << j;
    }
}

TEST_F(CliTest, RunSoftmax) {
  const std::vector<float> xv = {0, 1, 2, 3, -1, 5, 5, 5, 5, 5};
  const std::string x = write_f32("x.npy", {2, 5}, xv);
  const CliResult r = run("run softmax --in x=" + x + " --out y=" + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<float> y = read_f32(path("y.npy"));
  ASSERT_EQ(y.size(), 10u);
  for (int row = 0; row < 2; ++row) {
    double sum = 0;
    for (int j = 0; j < 5; ++j) sum += std::exp(static_cast<double>(xv[row * 5 + j]));
    for (int j = 0; j < 5; ++j)
      EXPECT_NEAR(y[row * 5 + j], std::exp(static_cast<double>(xv[row * 5 + j])) / sum, 1e-6) << row << "," << j;
  }
  EXPECT_NEAR(y[7], 0.2f, 1e-7);
}

TEST_F(CliTest, InputConversionToBf16RoundsOnLoad) {
  // 1 + 2^-8 is not a bf16 value: it rounds (ties to even) to 1.0 on load,
  // so a + b is 1.0 exactly, written back as f32.
  const std::string a = write_f32("a.npy", {2}, {1.00390625f, 3.0f});
  const std::string b = write_f32("b.npy", {2}, {0.0f, 0.0f});
  const CliResult r =
      run("run add --in a=" + a + ":bf16 --in b=" + b + ":bf16 --out y=" + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<float> y = read_f32(path("y.npy"));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 3.0f);
}

TEST_F(CliTest, OutputConversionOnSave) {
  const std::string x = write_f32("x.npy", {3}, {-1.5f, 0.0f, 2.25f});
  const CliResult r = run("run abs --in x=" + x + " --out y=" + path("y.npy") + ":f64");
  ASSERT_EQ(r.status, 0) << r.output;
  const HostArray y = hal::io::read_npy(path("y.npy"));
  ASSERT_EQ(y.dtype, DType::f64);
  double v[3];
  std::memcpy(v, y.bytes.data(), sizeof v);
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[2], 2.25);
}

TEST_F(CliTest, FillRandomWritesRequestedShape) {
  const CliResult r = run("run fill_random --attr shape=4,5 --attr seed=9 --attr a=-2 --attr b=3 --out y=" + path("r.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  hal::Shape shape;
  const std::vector<float> y = read_f32(path("r.npy"), &shape);
  EXPECT_EQ(shape, (hal::Shape{4, 5}));
  for (float v : y) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
}

TEST_F(CliTest, TruncatedNpyIsAnErrorNamingTheFile) {
  const std::string a = write_f32("a.npy", {4}, {1, 2, 3, 4});
  std::filesystem::resize_file(a, std::filesystem::file_size(a) - 4);
  const std::string b = write_f32("b.npy", {4}, {1, 2, 3, 4});
  const CliResult r = run("run add --in a=" + a + " --in b=" + b + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 3) << r.output;  // an I/O error
  EXPECT_NE(r.output.find(a), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
}

TEST_F(CliTest, UnknownOpIsAUsageError) {
  const CliResult r = run("run frobnicate --in x=x.npy --out y=y.npy");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown op 'frobnicate'"), std::string::npos) << r.output;
}

TEST_F(CliTest, UnknownAttributeInputAndMissingInputAreUsageErrors) {
  const std::string x = write_f32("x.npy", {2}, {1, 2});
  const CliResult attr = run("run exp --in x=" + x + " --attr axis=0 --out y=" + path("y.npy"));
  EXPECT_EQ(attr.status, 2) << attr.output;
  EXPECT_NE(attr.output.find("unknown attribute 'axis'"), std::string::npos) << attr.output;
  const CliResult input = run("run exp --in z=" + x + " --out y=" + path("y.npy"));
  EXPECT_EQ(input.status, 2) << input.output;
  EXPECT_NE(input.output.find("unknown input 'z'"), std::string::npos) << input.output;
  const CliResult missing = run("run add --in a=" + x + " --out y=" + path("y.npy"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("missing input 'b'"), std::string::npos) << missing.output;
  const CliResult value = run("run sum --in x=" + x + " --attr axis=first --out y=" + path("y.npy"));
  EXPECT_EQ(value.status, 2) << value.output;
  EXPECT_NE(value.output.find("'first'"), std::string::npos) << value.output;
  const CliResult output = run("run exp --in x=" + x + " --out z=" + path("z.npy"));
  EXPECT_EQ(output.status, 2) << output.output;
  EXPECT_NE(output.output.find("unknown output 'z' (outputs: y)"), std::string::npos) << output.output;
  const CliResult twice = run("run exp --in x=" + x + " --out y=" + path("y.npy") + " --out y=" + path("y2.npy"));
  EXPECT_EQ(twice.status, 2) << twice.output;
  EXPECT_NE(twice.output.find("output 'y' given twice"), std::string::npos) << twice.output;
  const CliResult none = run("run exp --in x=" + x);
  EXPECT_EQ(none.status, 2) << none.output;
  EXPECT_NE(none.output.find("missing --out y=FILE.npy"), std::string::npos) << none.output;
}

TEST_F(CliTest, ValidationErrorExitsWithStatus1) {
  const std::string a = write_f32("a.npy", {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string b = write_f32("b.npy", {4}, {1, 2, 3, 4});
  const CliResult r = run("run mul --in a=" + a + " --in b=" + b + " --out y=" + path("y.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("mul: argument 'b'"), std::string::npos) << r.output;
}

}  // namespace

namespace {

std::string read_file(const std::string& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The number after `"key": ` in a JSON text (the first occurrence after `from`), or NaN.
double json_number(const std::string& text, const std::string& key, std::size_t from = 0) {
  const std::size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + key.size() + 4, nullptr);
}

}  // namespace

TEST_F(CliTest, BenchWritesJsonAndCsvWithRatesAndCeilings) {
  const std::string json = path("bench.json"), csv = path("bench.csv");
  const CliResult r = run("bench --device cpu --op add --dtype bf16 --shape 64x256 --quick --json '" + json +
                          "' --csv '" + csv + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string j = read_file(json);
  ASSERT_NE(j.find("\"case\": \"add bf16 64x256\""), std::string::npos) << j;
  const std::size_t result = j.find("\"results\"");
  // add moves 3 tensors of 64*256 bf16 elements; rate = bytes / median time.
  EXPECT_EQ(json_number(j, "bytes", result), 3.0 * 64 * 256 * 2);
  const double median_ms = json_number(j, "median_ms", result), rate = json_number(j, "rate", result);
  EXPECT_GT(median_ms, 0.0);
  EXPECT_NEAR(rate, 3.0 * 64 * 256 * 2 / (median_ms * 1e-3) * 1e-9, 1e-3 * rate);
  // The ceiling is the faster copy of the inputs' bytes timed beside it; the fraction is rate / ceiling.
  const double ceiling = json_number(j, "ceiling", result), fraction = json_number(j, "fraction_of_ceiling", result);
  EXPECT_GT(ceiling, 0.0);
  EXPECT_NEAR(fraction, rate / ceiling, 1e-3 * fraction + 1e-4);
  EXPECT_GT(json_number(j, "copy_gbps"), 0.0);
  EXPECT_NE(j.find("\"kernels\": {\"gemm f32\": "), std::string::npos) << j;  // what computed the GEMMs here
  // A row op on the CPU also reports its rate on a working set the caches keep.
  EXPECT_GT(json_number(j, "in_cache_rate", result), 0.0);
  const std::string c = read_file(csv);
  EXPECT_EQ(c.rfind("case,op,dtype,dims,unit,", 0), 0u) << c;
  EXPECT_NE(c.find("\"add bf16 64x256\",add,bf16,64x256,GB/s,"), std::string::npos) << c;
}

// gelu is a memory-bound case too: x read, y written.
TEST_F(CliTest, BenchGeluCountsTwoTensors) {
  const std::string json = path("bench.json");
  const CliResult r = run("bench --device cpu --op gelu --dtype f32 --shape 32x128 --quick --json '" + json + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string j = read_file(json);
  ASSERT_NE(j.find("\"case\": \"gelu f32 32x128\""), std::string::npos) << j;
  const std::size_t result = j.find("\"results\"");
  EXPECT_EQ(json_number(j, "bytes", result), 2.0 * 32 * 128 * 4);
  EXPECT_GT(json_number(j, "rate", result), 0.0);
}

// The training cases run and count what they must move (bench_case.cpp):
// cross_entropy logits + dlogits, a norm backward x + dy + dx, AdamW 28 bytes
// per element (f32 state; a bf16 param steps its f32 master).
TEST_F(CliTest, BenchTrainingCasesCountTheirBytes) {
  const struct {
    const char* op;
    const char* dtype;
    double bytes;
  } cases[] = {{"cross_entropy", "f32", 2.0 * 16 * 512 * 4}, {"rmsnorm_backward", "bf16", 3.0 * 16 * 512 * 2},
               {"layernorm_backward", "f32", 3.0 * 16 * 512 * 4}, {"adamw", "f32", 28.0 * 16 * 512},
               {"adamw", "bf16", 28.0 * 16 * 512}};
  for (const auto& c : cases) {
    const std::string json = path("bench.json");
    const CliResult r = run(std::string("bench --device cpu --op ") + c.op + " --dtype " + c.dtype +
                            " --shape 16x512 --quick --json '" + json + "'");
    ASSERT_EQ(r.status, 0) << c.op << ": " << r.output;
    const std::string j = read_file(json);
    const std::size_t result = j.find("\"results\"");
    EXPECT_EQ(json_number(j, "bytes", result), c.bytes) << c.op << " " << c.dtype;
    EXPECT_GT(json_number(j, "rate", result), 0.0) << c.op << " " << c.dtype;
    EXPECT_EQ(j.find("\"error\""), std::string::npos) << j;
  }
}

TEST_F(CliTest, BenchGemmReportsTheVendorRatio) {
  const std::string json = path("bench.json");
  const CliResult r = run("bench --device cpu --op gemm --dtype f32 --shape 48x40x24 --quick --json '" + json + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string j = read_file(json);
  const std::size_t result = j.find("\"results\"");
  EXPECT_EQ(json_number(j, "flops", result), 2.0 * 48 * 40 * 24);
  EXPECT_EQ(j.find("in_cache_rate"), std::string::npos) << "only memory-bound row ops measure it";
  const std::size_t vendor = j.find("\"vendor\": {", result);
  if (vendor == std::string::npos) GTEST_SKIP() << "OpenBLAS not installed: no vendor baseline";
  const double hal_rate = json_number(j, "rate", result), vendor_rate = json_number(j, "rate", vendor);
  EXPECT_NEAR(json_number(j, "hal_over_vendor", vendor), hal_rate / vendor_rate, 1e-3 * hal_rate / vendor_rate);
}

// OpenBLAS's workers would spin for about 0.1 s after each call and take the
// cores from hal's next (alternating) sample: the bench asks for the shortest
// spin unless the user chose one, and says which in the vendor's name.
TEST_F(CliTest, BenchQuietsOpenBlasWorkersUnlessTheUserChose) {
  const char* before = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  const std::string saved = before ? before : "";
  auto vendor_name = [&](const char* timeout) {
    if (timeout) setenv("OPENBLAS_THREAD_TIMEOUT", timeout, 1);
    else unsetenv("OPENBLAS_THREAD_TIMEOUT");
    const std::string json = path("vendor.json");
    const CliResult r = run("bench --device cpu --op gemm --dtype f32 --shape 8x8x8 --quick --json '" + json + "'");
    EXPECT_EQ(r.status, 0) << r.output;
    const std::string j = read_file(json);
    const std::size_t at = j.find("\"vendor\": \"");
    return at == std::string::npos ? std::string() : j.substr(at, j.find('\n', at) - at);
  };
  const std::string by_default = vendor_name(nullptr), chosen = vendor_name("9");
  if (before) setenv("OPENBLAS_THREAD_TIMEOUT", saved.c_str(), 1);
  else unsetenv("OPENBLAS_THREAD_TIMEOUT");
  // Without OpenBLAS the vendor field says why it could not be opened.
  if (by_default.empty() || by_default.find("cannot open") != std::string::npos)
    GTEST_SKIP() << "OpenBLAS not installed: no vendor baseline";
  EXPECT_NE(by_default.find("OPENBLAS_THREAD_TIMEOUT=4"), std::string::npos) << by_default;
  EXPECT_NE(chosen.find("OPENBLAS_THREAD_TIMEOUT=9"), std::string::npos) << chosen;
}

// A decode step is memory-bound: its bytes are the key and value caches, its
// rate GB/s, its ceiling the copy of those bytes timed beside it.
TEST_F(CliTest, BenchDecodeAttentionCountsTheCacheBytes) {
  const std::string json = path("decode.json");
  const CliResult r = run("bench --device cpu --op attention_decode --shape 2x100x8x2x16 --quick --json '" + json + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string j = read_file(json);
  ASSERT_NE(j.find("\"case\": \"attention_decode f32 2x100x8x2x16\""), std::string::npos) << j;
  const std::size_t result = j.find("\"results\"");
  EXPECT_EQ(json_number(j, "flops", result), 0.0);
  EXPECT_EQ(json_number(j, "bytes", result), 2.0 * 2 * 100 * 2 * 16 * 4);
  const double median_ms = json_number(j, "median_ms", result), rate = json_number(j, "rate", result);
  EXPECT_NEAR(rate, 2.0 * 2 * 100 * 2 * 16 * 4 / (median_ms * 1e-3) * 1e-9, 1e-3 * rate);
  EXPECT_GT(json_number(j, "ceiling", result), 0.0);
  const CliResult bad = run("bench --device cpu --op attention_decode --shape 2x100x8x16");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("5 sizes for attention_decode"), std::string::npos) << bad.output;
}

TEST_F(CliTest, BenchRejectsUnknownOpsDtypesAndShapes) {
  CliResult r = run("bench --device cpu --op nosuch");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("'--op'"), std::string::npos) << r.output;
  r = run("bench --device cpu --op add --dtype f7");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("'--dtype'"), std::string::npos) << r.output;
  r = run("bench --device cpu --op gemm --shape 3x4");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("3 sizes for gemm"), std::string::npos) << r.output;
  r = run("bench --device cpu --op attention --dtype i32");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("combination"), std::string::npos) << r.output;
}

// A GPU backend that is built but has no device here: the bench says why and
// exits 77 (skipped) instead of failing.
TEST_F(CliTest, BenchSkipsABackendWithoutADevice) {
  std::string unavailable;
  for (const hal::BackendStatus& b : hal::backends())
    if (!b.available) unavailable = b.name;
  if (unavailable.empty()) GTEST_SKIP() << "every backend built here has a device";
  const CliResult r = run("bench --device " + unavailable + ":0 --op add --shape 64x64 --quick");
  EXPECT_EQ(r.status, 77) << r.output;
  EXPECT_NE(r.output.find("skipped: " + unavailable + " is not available"), std::string::npos) << r.output;
}

// hal run quantize_fp8 then gemm_fp8 on its outputs, in the FNUZ family: the
// fp8 values come back as f32 and go in again through ':f8e4m3fnuz'.
TEST_F(CliTest, RunQuantizeFp8ThenGemmFp8) {
  std::vector<float> xv(2 * 130);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i)) * (i < 130 ? 3.0f : 0.5f);
  const std::string x = write_f32("x.npy", {2, 130}, xv);
  CliResult r = run("run quantize_fp8 --device cpu --in x=" + x + " --attr format=f8e4m3fnuz --out y=" + path("y.npy") +
                    " --out scales=" + path("s.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  hal::Shape ys, ss;
  const std::vector<float> y = read_f32(path("y.npy"), &ys), s = read_f32(path("s.npy"), &ss);
  ASSERT_EQ(ys, (hal::Shape{2, 130}));
  ASSERT_EQ(ss, (hal::Shape{2, 2}));
  float amax = 0;
  for (int j = 0; j < 128; ++j) amax = std::max(amax, std::fabs(xv[j]));
  EXPECT_EQ(s[0], amax / 240.0f);
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_LE(std::fabs(y[i]), 240.0f);
  const std::string bs = write_f32("bs.npy", {1, 2}, {0.5f, 2.0f});
  r = run("run gemm_fp8 --device cpu --in a=" + path("y.npy") + ":f8e4m3fnuz --in a_scales=" + path("s.npy") +
          " --in b=" + path("y.npy") + ":e4m3fnuz --in b_scales=" + bs + " --attr dtype=f32 --out y=" + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  hal::Shape cs;
  const std::vector<float> c = read_f32(path("c.npy"), &cs);
  ASSERT_EQ(cs, (hal::Shape{2, 2}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int k = 0; k < 130; ++k)
        want += static_cast<double>(y[i * 130 + k]) * y[j * 130 + k] * s[i * 2 + k / 128] * (k < 128 ? 0.5 : 2.0);
      EXPECT_NEAR(c[i * 2 + j], want, 1e-5 * std::fabs(want) + 1e-6) << i << "," << j;
    }
  r = run("run gemm_fp8 --device cpu --in a=" + path("y.npy") + ":f8e4m3 --in a_scales=" + path("s.npy") + " --in b=" +
          path("y.npy") + ":f8e4m3fnuz --in b_scales=" + bs + " --out y=" + path("c2.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("family"), std::string::npos) << r.output;
}

// hal bench --op gemm_fp8 times it beside hal's own bf16 GEMM on the same shape.
TEST_F(CliTest, BenchGemmFp8ReportsTheBf16Ratio) {
  const std::string json = path("bench.json");
  const CliResult r = run("bench --device cpu --op gemm_fp8 --dtype f8e4m3fnuz --shape 3x130x200 --quick --json '" + json + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string j = read_file(json);
  const std::size_t result = j.find("\"results\"");
  EXPECT_EQ(json_number(j, "flops", result), 2.0 * 3 * 130 * 200);
  const std::size_t vendor = j.find("\"vendor\": {", result);
  ASSERT_NE(vendor, std::string::npos) << j;
  EXPECT_NE(j.find("hal gemm bf16", result), std::string::npos) << j;
  EXPECT_GT(json_number(j, "hal_over_vendor", vendor), 0.0);
}

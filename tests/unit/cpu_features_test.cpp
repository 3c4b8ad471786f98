// The CPU device's clock, core count and nominal peak, from /proc/cpuinfo
// text and the detected features.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_microkernel.h"
#include "hal/registry.h"

namespace {

using hal::cpu_ref::CpuFeatures;
using hal::cpu_ref::parse_cpuinfo;

// Two sockets x two cores x two SMT threads; the second processor's clock
// differs (the first one's is taken).
constexpr const char* kCpuinfo =
    "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2445.402\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 1\ncpu MHz\t\t: 3100.000\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 2\ncpu MHz\t\t: 2445.402\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 3\ncpu MHz\t\t: 2445.402\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 4\ncpu MHz\t\t: 2445.402\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 5\ncpu MHz\t\t: 2445.402\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 6\ncpu MHz\t\t: 2445.402\nphysical id\t: 1\ncore id\t\t: 1\n\n"
    "processor\t: 7\ncpu MHz\t\t: 2445.402\nphysical id\t: 1\ncore id\t\t: 1\n";

TEST(CpuFeatures, ParsesClockAndPhysicalCores) {
  const auto info = parse_cpuinfo(kCpuinfo);
  EXPECT_EQ(info.clock_mhz, 2445);        // the first processor's, rounded
  EXPECT_EQ(info.physical_cores, 4);      // (socket, core) pairs, SMT siblings once
}

TEST(CpuFeatures, MissingFieldsAreZero) {
  // No clock, no core ids (some ARM and VM kernels), a malformed clock.
  EXPECT_EQ(parse_cpuinfo("").clock_mhz, 0);
  EXPECT_EQ(parse_cpuinfo("").physical_cores, 0);
  const auto info = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\ncpu MHz\t: fast\n\nprocessor\t: 1\n");
  EXPECT_EQ(info.clock_mhz, 0);
  EXPECT_EQ(info.physical_cores, 0);
  // A file without a trailing newline still counts its last processor.
  EXPECT_EQ(parse_cpuinfo("physical id : 0\ncore id : 3").physical_cores, 1);
}

TEST(CpuFeatures, NominalPeakFollowsTheWidestFma) {
  CpuFeatures f;
  f.physical_cores = 2;
  f.clock_mhz = 2500;
  // SSE only: 2 pipes x 4 lanes, one FLOP each.
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_fp32_tflops(f), 2 * 2.5e-3 * 8);
  f.avx2 = f.fma = f.f16c = true;  // 2 FMA pipes x 8 lanes x 2 FLOPs
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_fp32_tflops(f), 2 * 2.5e-3 * 32);
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_bf16_tflops(f), hal::cpu_ref::nominal_fp32_tflops(f));
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = true;  // 16 lanes
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_fp32_tflops(f), 2 * 2.5e-3 * 64);
  f.avx512bf16 = true;  // vdpbf16ps: two products per fp32 lane
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_bf16_tflops(f), 2 * hal::cpu_ref::nominal_fp32_tflops(f));
  f.amx_bf16 = true;  // one 16 x 16 x 32 TDPBF16PS per 16 cycles: 1024 FLOPs per cycle
  EXPECT_DOUBLE_EQ(hal::cpu_ref::nominal_bf16_tflops(f), 2 * 2.5e-3 * 1024);
  EXPECT_NE(f.arch_string().find("+amx_bf16"), std::string::npos);
  f.clock_mhz = 0;  // unknown clock: unknown peak, not a made-up one
  EXPECT_EQ(hal::cpu_ref::nominal_fp32_tflops(f), 0.0);
}

TEST(CpuFeatures, TheCpuDeviceReportsWhatWasDetected) {
  const hal::DeviceInfo& info = hal::device("cpu").info();
  const CpuFeatures& f = hal::cpu_ref::cpu_features();
  EXPECT_GE(f.physical_cores, 1);
  EXPECT_LE(f.physical_cores, f.hardware_threads);
  EXPECT_EQ(info.clock_mhz, f.clock_mhz);
  EXPECT_DOUBLE_EQ(info.peak_fp32_tflops, hal::cpu_ref::nominal_fp32_tflops(f));
  EXPECT_DOUBLE_EQ(info.peak_bf16_tflops, hal::cpu_ref::nominal_bf16_tflops(f));
  // The kernels it names are the ones the GEMM takes.
  using hal::DType;
  using hal::cpu_ref::gemm_microkernel_for;
  ASSERT_GE(info.kernels.size(), 2u);
  EXPECT_EQ(info.kernels[0],
            std::make_pair(std::string("gemm f32"), std::string(gemm_microkernel_for(DType::f32, DType::f32).name)));
  EXPECT_EQ(info.kernels[1],
            std::make_pair(std::string("gemm bf16"), std::string(gemm_microkernel_for(DType::bf16, DType::bf16).name)));
}

}  // namespace

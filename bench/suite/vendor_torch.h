#pragma once
// PyTorch's CPU matmul as the bf16 GEMM baseline of `hal bench` on the CPU
// (OpenBLAS has no bf16 GEMM; PyTorch's goes to oneDNN, which uses AVX-512
// BF16 / AMX where the CPU has them). PyTorch is a Python library, so it runs
// in a helper process (python3 with torch) that `hal bench` starts once and
// drives through two pipes: one line to allocate the case's operands there,
// one line per timed call. The pipe round trip (tens of microseconds) is
// inside each vendor sample, against GEMMs of tens of milliseconds and more.
#include <memory>
#include <string>

#include "bench/suite/vendor_blas.h"

namespace hal::bench {

// nullptr (and *why set) when no python3 with torch can be started. Tries
// $HAL_BENCH_PYTHON, then /usr/bin/python3, then python3 on PATH.
// The helper uses `threads` intra-op threads (as many as hal's pool).
std::unique_ptr<VendorGemm> open_torch_gemm(int threads, std::string* why);

}  // namespace hal::bench

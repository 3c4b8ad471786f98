// CPU gemm: C = act(alpha * op(A) @ op(B) + beta * C + bias).
// f64 anywhere (the oracle) -> fp64 path; otherwise the blocked fp32 path with
// the micro-kernel chosen once for this machine. See gemm_blocked.h for the
// determinism argument and gemm_f64.h for the oracle.
#include "cpu_ref/gemm_blocked.h"
#include "cpu_ref/gemm_f64.h"
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {
namespace {

bool is_fp32_input(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

}  // namespace

void gemm(const GemmCall& call) {
  const GemmProblem p = resolve_gemm(call);
  if (p.a.dtype == DType::f64 || p.b.dtype == DType::f64 || p.c.dtype == DType::f64) {
    gemm_f64(p);
    return;
  }
  if (!is_fp32_input(p.a.dtype) || !is_fp32_input(p.b.dtype) || !is_fp32_input(p.c.dtype))
    throw_unsupported("cpu", "gemm",
                      std::string("dtypes a=") + std::string(dtype_name(p.a.dtype)) + ", b=" +
                          std::string(dtype_name(p.b.dtype)) + ", c=" + std::string(dtype_name(p.c.dtype)));
  gemm_fp32_blocked(p, gemm_microkernel_for(p.a.dtype, p.b.dtype));
}

}  // namespace hal::cpu_ref

#include "conformance/oracle.h"

#include <cstring>

#include "conformance/contract.h"
#include "conformance/tensor_util.h"
#include "hal/buffer.h"
#include "ops/ops.h"

namespace hal::conformance {

const Tensor& output_of(const OpCall& call) {
  return std::visit(
      [](const auto& c) -> const Tensor& {
        if constexpr (std::is_same_v<std::decay_t<decltype(c)>, GemmCall>) return c.c;
        else return c.y;
      },
      call);
}
Tensor& output_of(OpCall& call) { return const_cast<Tensor&>(output_of(static_cast<const OpCall&>(call))); }

namespace {

// An f64 copy of `t`'s storage with the same shape, strides and offset.
Tensor widen_to_f64(const Tensor& t, std::vector<Buffer>& keep) {
  const std::int64_t n = t.numel() == 0 ? 0 : t.end_index();
  keep.emplace_back(cpu_device(), static_cast<std::size_t>(n) * sizeof(double));
  auto* dst = static_cast<double*>(keep.back().data());
  for (std::int64_t i = 0; i < n; ++i) dst[i] = load_element(t.data, t.dtype, i);
  Tensor w = t;
  w.data = dst;
  w.dtype = DType::f64;
  w.device = &cpu_device();
  return w;
}

Reference cast_reference(const CastCall& c) {
  Reference r;
  r.out_dtype = c.y.dtype;
  r.zero_sign = true;
  std::uint64_t tmp = 0;
  for_each_index(c.x, [&](std::int64_t s) {
    // The contract: the scale multiply is one fp32 operation, then one rounding.
    const float p = load_element_f32(c.x.data, c.x.dtype, s) * c.scale;
    store_element_f32(&tmp, c.y.dtype, 0, p);
    r.values.push_back(load_element(&tmp, c.y.dtype, 0));
  });
  r.bounds.assign(r.values.size(), 0.0);
  return r;
}

Reference fill_random_reference(const FillRandomCall& c) {
  Reference r;
  r.out_dtype = c.y.dtype;
  r.zero_sign = true;
  Buffer out = Buffer::for_tensor(cpu_device(), c.y.dtype, c.y.shape);
  FillRandomCall run = c;
  run.y = out.view(c.y.dtype, c.y.shape);
  Stream s(cpu_device());
  ops::run(s, run);
  s.synchronize();
  r.values = gather(run.y);
  r.bounds.assign(r.values.size(), 0.0);
  return r;
}

}  // namespace

Reference compute_reference(const OpCall& host_call) {
  if (const auto* c = std::get_if<CastCall>(&host_call)) return cast_reference(*c);
  if (const auto* c = std::get_if<FillRandomCall>(&host_call)) return fill_random_reference(*c);

  std::vector<Buffer> keep;
  OpCall oracle = host_call;
  for_each_input(oracle, [&](Tensor& t) {
    if (is_floating(t.dtype)) t = widen_to_f64(t, keep);
    else t.device = &cpu_device();  // host memory (the precondition); the oracle runs on the CPU
  });
  const Tensor& out = output_of(host_call);
  Tensor& oracle_out = output_of(oracle);
  const DType ref_dtype = is_floating(out.dtype) ? DType::f64 : out.dtype;
  // Gemm reads C when beta != 0: give the oracle an f64 copy of its contents.
  if (const auto* g = std::get_if<GemmCall>(&host_call); g && g->beta != 0.0f) {
    oracle_out = widen_to_f64(out, keep);
  } else {
    keep.push_back(Buffer::for_tensor(cpu_device(), ref_dtype, out.shape));
    oracle_out = keep.back().view(ref_dtype, out.shape);
  }
  // The oracle runs on a copy whose output is fresh, so that `oracle` keeps
  // its inputs (gemm's initial C included) intact for the bounds.
  OpCall run = oracle;
  keep.push_back(Buffer::for_tensor(cpu_device(), ref_dtype, out.shape));
  Tensor& run_out = output_of(run);
  run_out = keep.back().view(ref_dtype, out.shape);
  if (oracle_out.numel() > 0)
    std::memcpy(run_out.data, oracle_out.first(), static_cast<std::size_t>(out.numel()) * dtype_size(ref_dtype));
  Stream s(cpu_device());
  ops::run(s, run);
  s.synchronize();

  Reference r;
  r.out_dtype = out.dtype;
  r.values = gather(run_out);
  r.bounds = contract::element_bounds(oracle, r.values, out.dtype);
  r.zero_sign = contract::checks_zero_sign(host_call);
  return r;
}

}  // namespace hal::conformance

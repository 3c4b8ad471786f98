#include "conformance/oracle.h"

#include <cstring>

#include "conformance/contract.h"
#include "conformance/fp8_contract.h"
#include "conformance/tensor_util.h"
#include "hal/buffer.h"
#include "ops/ops.h"

namespace hal::conformance {

std::vector<Tensor> outputs_of(const OpCall& call) {
  std::vector<Tensor> out;
  for_each_tensor(call, [&](std::string_view, const Tensor& t, TensorRole role) {
    if (role != TensorRole::input) out.push_back(t);
  });
  return out;
}

Tensor& output_of(OpCall& call) {
  Tensor* first = nullptr;
  for_each_tensor(call, [&](std::string_view, Tensor& t, TensorRole role) {
    if (role != TensorRole::input && !first) first = &t;
  });
  return *first;  // every call has an output
}
const Tensor& output_of(const OpCall& call) { return output_of(const_cast<OpCall&>(call)); }

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

// A byte copy of `t`'s storage in a CPU buffer, same layout: the oracle runs
// on the CPU device, whose validation layer accepts only its own allocations
// (the host memory of another device or of a test is not one of them).
Tensor copy_to_cpu(const Tensor& t, std::vector<Buffer>& keep) {
  const std::int64_t n = t.numel() == 0 ? 0 : t.end_index();
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(t.dtype);
  keep.emplace_back(cpu_device(), bytes);
  if (bytes) std::memcpy(keep.back().data(), t.data, bytes);
  Tensor c = t;
  c.data = keep.back().data();
  c.device = &cpu_device();
  return c;
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

std::vector<Reference> compute_references(const OpCall& host_call, const Fp8BlockSumModel& fp8_block_sums) {
  if (const auto* c = std::get_if<CastCall>(&host_call)) return {cast_reference(*c)};
  if (const auto* c = std::get_if<FillRandomCall>(&host_call)) return {fill_random_reference(*c)};
  if (const auto* c = std::get_if<QuantizeFp8Call>(&host_call)) return quantize_fp8_references(*c);
  if (const auto* c = std::get_if<DequantizeFp8Call>(&host_call)) return {dequantize_fp8_reference(*c)};

  // `oracle`: the call in fp64 whose tensors the bounds read (floating inputs
  // widened exactly, accumulated outputs holding their initial contents).
  std::vector<Buffer> keep;
  OpCall oracle = host_call;
  for_each_tensor(oracle, [&](std::string_view, Tensor& t, TensorRole role) {
    const DType wide = is_floating(t.dtype) ? DType::f64 : t.dtype;
    if (role == TensorRole::output) {
      keep.push_back(Buffer::for_tensor(cpu_device(), wide, t.shape));
      t = keep.back().view(wide, t.shape);
    } else if (is_floating(t.dtype)) {
      t = widen_to_f64(t, keep);
    } else {
      t = copy_to_cpu(t, keep);  // host memory (the precondition); the oracle runs on the CPU
    }
  });
  // The oracle runs on a copy whose outputs are fresh (accumulated ones start
  // from the same contents), so that `oracle` keeps its inputs intact.
  OpCall run = oracle;
  std::vector<Tensor> run_outputs;
  Stream s(cpu_device());
  for_each_tensor(run, [&](std::string_view, Tensor& t, TensorRole role) {
    if (role == TensorRole::input) return;
    const Tensor from = t;
    keep.push_back(Buffer::for_tensor(cpu_device(), t.dtype, t.shape));
    t = keep.back().view(t.dtype, t.shape);
    // Element by element: an accumulated output may be strided (a padded C),
    // and its holes are not its contents.
    if (role == TensorRole::accumulated && t.numel() > 0) ops::copy(s, from, t);
    run_outputs.push_back(t);
  });
  ops::run(s, run);
  s.synchronize();

  const std::vector<Tensor> device_outputs = outputs_of(host_call);
  std::vector<Reference> refs;
  for (std::size_t i = 0; i < run_outputs.size(); ++i) {
    Reference r;
    r.out_dtype = device_outputs[i].dtype;
    r.values = gather(run_outputs[i]);
    r.bounds = contract::element_bounds(oracle, i, r.values, r.out_dtype, fp8_block_sums);
    r.zero_sign = contract::checks_zero_sign(host_call);
    refs.push_back(std::move(r));
  }
  return refs;
}

Reference compute_reference(const OpCall& host_call) { return compute_references(host_call).front(); }

}  // namespace hal::conformance

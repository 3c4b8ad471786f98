#include "conformance/stage_scoring.h"

#include <fmt/format.h>

#include "ops/ops.h"

namespace hal::conformance {

ScoredStage run_scored(Stream& s, const OpCall& call) {
  ScoredStage r;
  OpCall host_call = call;
  s.synchronize();
  // Inputs first, before the run overwrites any accumulated output.
  for_each_tensor(host_call, [&](std::string_view name, Tensor& t, TensorRole role) {
    if (role != TensorRole::input) r.output_names.emplace_back(name);  // outputs_of()'s order
    if (role == TensorRole::output) return;
    r.input_names.emplace_back(name);
    r.inputs.push_back(mirror_to_cpu(s, t));
    t = r.inputs.back().view;
  });
  ops::run(s, call);
  s.synchronize();
  r.references = compute_references(host_call);
  const std::vector<Tensor> outs = outputs_of(call);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    r.outputs.push_back(download_bytes(s, outs[i]));
    const Reference& ref = r.references[i];
    const Score sc = score_output(r.outputs.back(), outs[i].dtype, ref.values, ref.bounds, ref.zero_sign);
    if (!sc.passed() && r.worst.passed()) {
      r.worst.failure = sc.failure;
      r.failed_output = r.output_names[i];
    }
    r.worst.score = std::max(r.worst.score, sc.score);
    r.worst.nmse = std::max(r.worst.nmse, sc.nmse);
    r.worst.max_ulp = std::max(r.worst.max_ulp, sc.max_ulp);
  }
  return r;
}

}  // namespace hal::conformance

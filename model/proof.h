#pragma once
// The porting proof: a model run on a device, scored layer by layer against
// the CPU's fp64 oracle.
//
// Two kinds of figures, as for the suite's model-level case
// (docs/accuracy.md, "Models"):
//  - the contract: every op of the device's forward pass is scored against
//    the fp64 oracle of that op run on the device's own inputs (downloaded),
//    with the op's bound (conformance/contract.cpp). Each op is under the
//    contract, so a layer passes when each of its ops does; its score is the
//    worst op's, and the first layer over 1 names the op that broke it.
//  - the drift: each layer's hidden state and the logits against the whole
//    model run in fp64 on the CPU from the same checkpoint and tokens (NMSE,
//    max ulp in the device's dtype, top-1 agreement, largest logit
//    difference). Errors compound through the layers and no published bound
//    covers that, so these are reported, not judged.
// Decode steps are teacher-forced with the oracle's greedy tokens, so every
// device decodes the same stream and every step can be compared.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "conformance/score.h"
#include "model/checkpoint.h"

namespace hal::model {

struct LayerCheck {
  double score = 0.0;         // worst op's error / bound (pass at <= 1)
  std::string worst_stage;    // the op with that score
  std::string failure;        // the first failing op and why; empty when all pass
};

// One step (0 = prefill, then each decode step) of a run.
struct StepRun {
  // Index 0: the embedding (layer -1), then layers 0..L-1, then index L+1:
  // the final norm and lm_head.
  std::vector<LayerCheck> checks;
  std::vector<std::vector<std::uint8_t>> hidden;  // [T, hidden] per layer (-1..L-1), the run's dtype
  std::vector<std::uint8_t> logits;               // [batch, vocab], the run's dtype
  std::int64_t tokens = 0;                        // T
};

struct ProofRun {
  std::string device, model, arch;  // where it ran
  DType dtype = DType::f32;
  bool scored = false;  // checks were computed (not for the oracle)
  std::string note;     // what the oracle is, where it needs saying (an fp8 checkpoint)
  std::vector<StepRun> steps;
  std::vector<std::vector<std::int32_t>> generated;  // the tokens fed / chosen
};

struct ProofInput {
  std::vector<std::vector<std::int32_t>> prompts;
  std::int64_t steps = 0;  // decode steps after the prefill
};

// The oracle: the model in f64 on the CPU, greedy. For an fp8 checkpoint,
// the real-valued model it defines: every weight dequantised exactly (stored
// e4m3 value * its 128 x 128 block scale), plain f64 GEMMs, the activations
// not quantised. A device run's drift against it is then the whole fp8 error
// (weights and activation quantisation) plus rounding, while its contract
// scores still judge each op (quantize_fp8, gemm_fp8 included) against that
// op's fp64 oracle on the device's own inputs.
ProofRun run_oracle(const Checkpoint& ckpt, const ProofInput& in);
// A device run in `dtype`, every op scored, decode fed with `forced`.
ProofRun run_scored(const Checkpoint& ckpt, const std::string& device, DType dtype, const ProofInput& in,
                    const std::vector<std::vector<std::int32_t>>& forced);

// Drift of one run against the oracle (any ProofRun of the same shapes: a
// run of another checkpoint of the same config, e.g. fp8 weights dequantised
// to bf16, can be measured against this checkpoint's oracle).
struct Drift {
  conformance::Score score;  // nmse, max_ulp (score unused)
};
struct LogitsAgreement {
  std::int64_t top1_agree = 0, sequences = 0;
  double max_abs_diff = 0.0;
};
Drift hidden_drift(const ProofRun& run, const ProofRun& oracle, std::size_t step, std::size_t layer_index);
LogitsAgreement logits_agreement(const ProofRun& a, const ProofRun& b, std::size_t step, std::int64_t vocab);
Drift logits_drift(const ProofRun& run, const ProofRun& oracle, std::size_t step);

// Recordings (safetensors, like hal conformance --record): the run, the
// tokens and the checkpoint's fingerprint. load_record refuses a recording
// of another checkpoint or other tokens.
void write_record(const std::string& path, const ProofRun& run, const Checkpoint& ckpt, const ProofInput& in);
ProofRun load_record(const std::string& path, const Checkpoint& ckpt, const ProofInput& in);

// The report: per layer of the prefill, for each run, the contract score and
// worst op, NMSE and max ulp against the oracle; the first layer over its
// bound; then the logits (and each decode step): score, top-1 agreement
// with the oracle and between the runs, largest logit difference. Returns
// whether every run met the contract.
bool print_report(const std::vector<const ProofRun*>& runs, const ProofRun& oracle, const ModelConfig& config);

}  // namespace hal::model

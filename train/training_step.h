#pragma once
// One training step of a Llama-style model (model_shape.h) as a list of op
// calls over named tensors: the forward pass, cross-entropy on the
// vocabulary projection (loss and dlogits in one call), the backward pass
// through every op (no autograd: each gradient is an explicit backward op or
// a gemm with transposes, as ops/training.h describes), then one AdamW call
// per parameter.
//
// The same list is what `hal train` runs and what the conformance suite's
// model-level training case scores stage by stage against the fp64 oracle,
// so the suite checks exactly the code that trains.
//
// Ownership: a TrainingStep owns every buffer (parameters, gradients,
// activations, AdamW state) on one device; the stages' calls are views of
// them and stay valid while the TrainingStep lives. Not copyable.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hal/buffer.h"
#include "hal/op.h"
#include "hal/stream.h"
#include "train/model_shape.h"

namespace hal::train {

// One op call of the step, named for reports ("l0.mlp_norm_backward").
struct Stage {
  std::string name;
  OpCall call;
};

// A trained tensor and what AdamW needs for it. This list is the one place
// that knows the model's gradients: a data-parallel step all-reduces exactly
// these `grad` tensors between backward() and optimizer().
struct Parameter {
  std::string name;
  Tensor param, grad, m, v;
  std::optional<Tensor> master;  // f32 copy of a 16-bit param
  float weight_decay = 0.0f;     // matrices decay, norm weights do not
};

struct OptimizerSettings {
  float lr = 3e-3f;
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  float weight_decay = 0.01f;
};

class TrainingStep {
 public:
  // Allocates everything on `device` in `dtype` (f32, f16, bf16; f64 on the
  // CPU, the oracle). Parameters are not initialised: see init_parameters.
  TrainingStep(Device& device, DType dtype, const ModelShape& shape);
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  const ModelShape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  Device& device() const noexcept { return *device_; }

  // Philox-initialised parameters (fill_random on the device: the same bits
  // on every backend), a 16-bit param's master its exact widening, moments 0.
  void init_parameters(Stream& s, std::uint64_t seed);
  // The batch: ids and next-token targets, batch * seq each (row-major).
  void set_batch(Stream& s, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& targets);
  // Zeroes the gradients that are accumulated into (embedding_backward adds
  // into the table's gradient). Call before running forward_backward().
  void zero_accumulated_gradients(Stream& s);

  // The calls of forward, loss and backward, in order. After they ran, every
  // Parameter's grad holds dloss/dparam and tensor("loss") the mean loss.
  const std::vector<Stage>& forward_backward() const noexcept { return forward_backward_; }
  // One AdamW call per parameter at step t (>= 1).
  std::vector<Stage> optimizer(std::int64_t t, const OptimizerSettings& settings) const;

  const std::vector<Parameter>& parameters() const noexcept { return parameters_; }
  // A tensor of the step by name ("loss", "logits", "l0.wq", "d.l0.wq", ...);
  // throws invalid_argument for an unknown name.
  const Tensor& tensor(const std::string& name) const;
  const std::map<std::string, Tensor>& tensors() const noexcept { return tensors_; }

 private:
  Tensor& add(const std::string& name, DType dt, const Shape& shape);
  void add_parameter(const std::string& name, const Shape& shape, float weight_decay);
  void build_stages();

  Device* device_;
  DType dtype_;
  ModelShape shape_;
  std::vector<Buffer> buffers_;
  std::map<std::string, Tensor> tensors_;
  std::vector<Parameter> parameters_;
  std::vector<Stage> forward_backward_;
};

// Runs the stages in order on `s` (validated by ops::run like any call).
void run_stages(Stream& s, const std::vector<Stage>& stages);

}  // namespace hal::train

// Names of the training ops' kinds (hal/op_training.h).
#include <string>
#include <vector>

#include "hal/op.h"

namespace hal {

std::string_view to_string(LossReduction v) {
  switch (v) {
    case LossReduction::none: return "none";
    case LossReduction::mean: return "mean";
    case LossReduction::sum: return "sum";
  }
  return "?";
}

std::string_view unary_backward_name(UnaryKind v) {
  switch (v) {
    case UnaryKind::exp: return "exp_backward";
    case UnaryKind::tanh: return "tanh_backward";
    case UnaryKind::sigmoid: return "sigmoid_backward";
    case UnaryKind::relu: return "relu_backward";
    case UnaryKind::gelu: return "gelu_backward";
    case UnaryKind::gelu_tanh: return "gelu_tanh_backward";
    case UnaryKind::silu: return "silu_backward";
    default: return "unary_backward";  // a kind without a backward (rejected by ops/)
  }
}

}  // namespace hal

namespace hal {

std::string_view global_norm_input_name(std::size_t i) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (std::size_t k = 0; k < kMaxGlobalNormTensors; ++k) {
      std::string name(1, 'x');
      name += std::to_string(k);
      v.push_back(std::move(name));
    }
    return v;
  }();
  return i < names.size() ? std::string_view(names[i]) : std::string_view("x");
}

}  // namespace hal

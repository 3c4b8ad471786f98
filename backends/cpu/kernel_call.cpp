#include "backends/cpu/kernel_call.h"

namespace hal::cpu {

std::optional<OpCall> prepare_kernel_call(const OpCall& validated) {
  OpCall call = validated;
  bool writes_something = false;
  for_each_tensor(call, [&](std::string_view, Tensor& t, TensorRole role) {
    const bool empty = t.numel() == 0;
    if (role != TensorRole::input && !empty) writes_something = true;
    if (!empty) return;
    t.offset = 0;
    for (int i = 0; i < t.rank(); ++i) t.strides[i] = 0;
  });
  if (!writes_something) return std::nullopt;
  return call;
}

}  // namespace hal::cpu

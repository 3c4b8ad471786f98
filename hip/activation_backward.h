#pragma once
// The activations' derivatives for the HIP backward kernels: written once
// for CUDA and HIP in kernel_math/activation_backward.h.
#include "hip/activation.h"
#include "kernel_math/activation_backward.h"

namespace hal::hip {

using kernel_math::silu_derivative;
using kernel_math::unary_backward_op;
using kernel_math::unary_derivative;

}  // namespace hal::hip

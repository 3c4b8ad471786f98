#pragma once
// The activations' derivatives for the CUDA backward kernels: written once
// for CUDA and HIP in kernel_math/activation_backward.h.
#include "kernel_math/activation_backward.h"
#include "ptx/activation.cuh"

namespace hal::ptx {

using kernel_math::silu_derivative;
using kernel_math::unary_backward_op;
using kernel_math::unary_derivative;

}  // namespace hal::ptx

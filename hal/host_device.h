#pragma once
// HAL_HOST_DEVICE marks a function that host C++, CUDA and HIP code all call
// (hal/philox.h, kernel_params/strided.h): __host__ __device__ under nvcc or
// hipcc, nothing in a plain C++ build.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define HAL_HOST_DEVICE __host__ __device__
#else
#define HAL_HOST_DEVICE
#endif

# The NVIDIA backend's build settings. Included by the top-level CMakeLists
# when HAL_ENABLE_CUDA=ON, before add_subdirectory(ptx) and
# add_subdirectory(backends/cuda).
#
# Kernels are compiled by nvcc through custom commands (ptx/CMakeLists.txt), not
# through enable_language(CUDA): the host library stays a plain C++ build and
# links neither libcuda nor libcudart -- the driver is dlopen'ed at run time.

if(CMAKE_CUDA_COMPILER)
  set(HAL_NVCC "${CMAKE_CUDA_COMPILER}")
else()
  find_program(HAL_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
endif()
if(NOT HAL_NVCC)
  message(FATAL_ERROR "HAL_ENABLE_CUDA=ON needs nvcc: set CMAKE_CUDA_COMPILER or put /usr/local/cuda/bin on PATH")
endif()
get_filename_component(_hal_cuda_bin "${HAL_NVCC}" DIRECTORY)

# cuda.h for the driver API's types and enums only.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND AND CUDAToolkit_INCLUDE_DIRS)
  set(HAL_CUDA_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS})
else()
  get_filename_component(_hal_cuda_root "${_hal_cuda_bin}" DIRECTORY)
  set(HAL_CUDA_INCLUDE_DIRS "${_hal_cuda_root}/include")
endif()
if(NOT EXISTS "${HAL_CUDA_INCLUDE_DIRS}/cuda.h")
  list(GET HAL_CUDA_INCLUDE_DIRS 0 _hal_first_inc)
  if(NOT EXISTS "${_hal_first_inc}/cuda.h")
    message(FATAL_ERROR "cuda.h not found in ${HAL_CUDA_INCLUDE_DIRS}")
  endif()
endif()

if(NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "80;90a" CACHE STRING "CUDA architectures to embed SASS for" FORCE)
endif()

find_package(Python3 REQUIRED COMPONENTS Interpreter)

# nvcc flags shared by every kernel file. No --use_fast_math: the accuracy
# contract needs the precise expf/logf/tanhf/erff and IEEE division/sqrt.
set(HAL_NVCC_FLAGS -std=c++17 -O3 -lineinfo -Xptxas -v --expt-relaxed-constexpr
    -Xcompiler=-fPIC)

# -gencode list: SASS for every listed arch, plus PTX of the lowest one so
# newer GPUs can JIT it.
set(HAL_NVCC_GENCODE)
set(_hal_lowest "")
foreach(_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  string(REGEX REPLACE "-(real|virtual)$" "" _arch "${_arch}")
  list(APPEND HAL_NVCC_GENCODE "-gencode=arch=compute_${_arch},code=sm_${_arch}")
  string(REGEX REPLACE "[a-z]+$" "" _num "${_arch}")
  if(_hal_lowest STREQUAL "" OR _num LESS _hal_lowest_num)
    set(_hal_lowest "${_arch}")
    set(_hal_lowest_num "${_num}")
  endif()
endforeach()
# PTX of an arch-specific target (90a) cannot be JIT-compiled for other GPUs.
string(REGEX REPLACE "a$" "" _hal_lowest_generic "${_hal_lowest}")
list(APPEND HAL_NVCC_GENCODE "-gencode=arch=compute_${_hal_lowest_generic},code=compute_${_hal_lowest_generic}")
message(STATUS "hal: CUDA kernels for ${CMAKE_CUDA_ARCHITECTURES} (+PTX compute_${_hal_lowest_generic}) with ${HAL_NVCC}")

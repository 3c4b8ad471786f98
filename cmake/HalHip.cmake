# The AMD HIP backend's build settings. Included by the top-level CMakeLists
# when HAL_ENABLE_HIP=ON, before add_subdirectory(hip) and
# add_subdirectory(backends/hip).
#
# Why no enable_language(HIP) / hip-lang: kernels are compiled by hipcc
# through custom commands (hip/CMakeLists.txt) into code-object bundles
# (`hipcc --genco`, one clang offload bundle per kernel file holding one code
# object per architecture) that are embedded into libhal as byte arrays and
# loaded at run time with hipModuleLoadData -- the same scheme as the CUDA
# backend's fatbins. The host library stays a plain C++ build that links no
# ROCm library (libamdhip64 is dlopen'ed), so the HIP language support, the
# hip-lang CMake package (which CMake 3.25 looks for under <root>/lib/cmake,
# where Debian does not install it) and a HIP-aware linker are not needed.
# CMAKE_HIP_ARCHITECTURES is still the variable that selects the targets,
# exactly as it would with enable_language(HIP).

find_program(HAL_HIPCC hipcc HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES bin)
if(NOT HAL_HIPCC)
  message(FATAL_ERROR "HAL_ENABLE_HIP=ON needs hipcc: install ROCm or Debian's hipcc, or set HAL_HIPCC")
endif()

# The LLVM tools of hipcc's clang: the offload bundler, objdump and readelf
# for the ISA checks and the kernel report (tests/hip, cmake/hip_kernel_report.py).
# They must know the gfx targets: the bundler is looked up among ROCm's and
# the versioned LLVM installs (newest first), objdump and readelf then in the
# bundler's directory first (an older default llvm-objdump may not know gfx940).
set(_hal_llvm_hints $ENV{ROCM_PATH}/llvm/bin /opt/rocm/llvm/bin /opt/rocm/lib/llvm/bin)
foreach(_v RANGE 20 15 -1)
  list(APPEND _hal_llvm_hints /usr/lib/llvm-${_v}/bin)
endforeach()
find_program(HAL_HIP_BUNDLER clang-offload-bundler HINTS ${_hal_llvm_hints} NO_DEFAULT_PATH)
find_program(HAL_HIP_BUNDLER clang-offload-bundler)
if(HAL_HIP_BUNDLER)
  get_filename_component(_hal_llvm_bin "${HAL_HIP_BUNDLER}" DIRECTORY)
  find_program(HAL_HIP_OBJDUMP llvm-objdump HINTS "${_hal_llvm_bin}" NO_DEFAULT_PATH)
  find_program(HAL_HIP_READELF llvm-readelf HINTS "${_hal_llvm_bin}" NO_DEFAULT_PATH)
endif()
find_program(HAL_HIP_OBJDUMP llvm-objdump)
find_program(HAL_HIP_READELF llvm-readelf)

# hip_runtime_api.h for the runtime's types and enums only (backends/hip).
find_path(HAL_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES include)
if(NOT HAL_HIP_INCLUDE_DIR)
  message(FATAL_ERROR "hip/hip_runtime_api.h not found: install libamdhip64-dev or ROCm")
endif()

# Whether this hipcc can build an architecture: compile an empty kernel file
# for it (clang-15, Debian's HIP 5.2, stops at gfx940; gfx942 needs ROCm 5.7+).
function(hal_hipcc_supports_arch arch out)
  set(_src "${CMAKE_BINARY_DIR}/CMakeFiles/hal_hip_arch_probe.hip")
  file(WRITE "${_src}" "__attribute__((global)) void hal_probe() {}\n")
  execute_process(COMMAND "${HAL_HIPCC}" --genco --offload-arch=${arch} -o "${_src}.${arch}.co" "${_src}"
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(_rc EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

if(NOT CMAKE_HIP_ARCHITECTURES)
  hal_hipcc_supports_arch(gfx942 _hal_has_gfx942)
  if(_hal_has_gfx942)
    set(_hal_default_archs "gfx942")
  else()
    # MI300X is gfx942; this toolchain cannot target it. gfx940 is the same
    # ISA family (code built for it does not load on gfx942: the target IDs
    # differ), gfx90a is MI200. Say so instead of failing.
    set(_hal_default_archs "gfx90a;gfx940")
    message(WARNING "hal: ${HAL_HIPCC} cannot target gfx942 (MI300X); building for ${_hal_default_archs}. "
                    "Set CMAKE_HIP_ARCHITECTURES with a newer ROCm to run on MI300X.")
  endif()
  set(CMAKE_HIP_ARCHITECTURES "${_hal_default_archs}" CACHE STRING "AMD GPU targets (offload archs / target IDs)" FORCE)
endif()

find_package(Python3 REQUIRED COMPONENTS Interpreter)

# hipcc flags shared by every kernel file. No -ffast-math: the accuracy
# contract needs the precise expf/logf/tanhf/erff and IEEE division/sqrt, and
# hal/philox.h must give the host's bits.
set(HAL_HIPCC_FLAGS -std=c++17 -O3 --genco -Wno-unused-command-line-argument)
set(HAL_HIPCC_ARCH_FLAGS)
foreach(_arch IN LISTS CMAKE_HIP_ARCHITECTURES)
  list(APPEND HAL_HIPCC_ARCH_FLAGS "--offload-arch=${_arch}")
endforeach()
message(STATUS "hal: HIP kernels for ${CMAKE_HIP_ARCHITECTURES} with ${HAL_HIPCC}")

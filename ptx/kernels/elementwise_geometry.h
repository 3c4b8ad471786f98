#pragma once
// Launch geometry of the 16-bit packed elementwise kernels (*_packed_<dtype>,
// ptx/kernels/elementwise.cu), shared with their launcher
// (backends/cuda/cuda_elementwise.cpp). Plain host/device header.
//
// The verified *_contig kernels launch up to 8 blocks of 256 per SM and use
// 38-47 registers, so only 5-6 blocks fit on an SM at once and the rest of
// the grid runs as a second, partial wave. The packed kernels are built with
// __launch_bounds__(kPackedBlockThreads, kPackedBlocksPerSm), at most 64
// registers (at 6 blocks, 40, the unary and swiglu kernels spilled; at 5,
// 48, the unary kernels 8-12 bytes), and
// launched with at most kPackedBlocksPerSm blocks per SM: the whole grid
// resident at once, every thread's grid-stride share the same.
namespace hal::ptx {

inline constexpr int kPackedBlockThreads = 256;
inline constexpr int kPackedBlocksPerSm = 4;

}  // namespace hal::ptx

#pragma once
// The embedding launcher both GPU backends run (ptx/kernels/embedding.cu,
// hip/kernels/embedding.hip): one host logic, so the two cannot drift.
//
// An out-of-range id must never be used as an address, and the error must be
// an invalid_argument thrown before y is touched. So the launcher first runs
// embedding_check_ids (one block / workgroup of 256 threads: its shared
// arrays are sized for exactly that) into a small device scratch, copies the
// id range back and SYNCHRONIZES the stream -- the one host round trip of the
// simple ops, paid per embedding call -- then throws or queues the gather.
//
// The kernels take kernel_params/embedding.h. `Backend` names what differs
// between vendors (see cuda_embedding.cpp): Stream, LaunchShape, and
// grid(work, stream), a grid-stride launch over `work` items.
// launch(stream, name, shape, params) is the backend's, found through Stream.
#include <fmt/format.h>

#include <cstdint>
#include <type_traits>

#include "backends/gpu/kernel_args.h"
#include "hal/device.h"
#include "hal/error.h"
#include "hal/op.h"
#include "kernel_params/embedding.h"

namespace hal::gpu {

template <class Backend>
void run_embedding(typename Backend::Stream& s, const EmbeddingCall& call) {
  const Tensor& ids = call.ids;
  const Tensor& table = call.table;
  const Tensor& y = call.y;
  const std::int64_t count = ids.numel();
  const std::int64_t dim = table.shape[1];
  const std::int64_t vocab = table.shape[0];
  if (count == 0) return;

  // Device scratch freed on scope exit (also when the check throws). The
  // stream has been synchronised before it goes, so no queued work uses it.
  using Device = std::remove_reference_t<decltype(s.device())>;
  struct Scratch {
    Device& dev;
    void* ptr;
    Scratch(Device& d, std::size_t bytes) : dev(d), ptr(d.allocate(bytes)) {}
    ~Scratch() { dev.deallocate(ptr); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
  } scratch(s.device(), sizeof(kernel_params::IdRange));

  kernel_params::EmbeddingCheckParams check{};
  check.ids = ids.first();
  check.range = static_cast<kernel_params::IdRange*>(scratch.ptr);
  check.count = count;
  check.ids_are_i64 = ids.dtype == DType::i64 ? 1 : 0;
  check.ids_shape = kernel_shape(ids.shape);
  check.ids_strides = kernel_strides(ids.strides);
  typename Backend::LaunchShape one_block;
  one_block.block[0] = 256;
  launch(s, "embedding_check_ids", one_block, check);
  kernel_params::IdRange range{};
  s.copy(&range, scratch.ptr, sizeof(range), CopyKind::device_to_host);
  s.synchronize();
  if (range.min_id < 0 || range.max_id >= vocab)
    throw_invalid_argument("embedding", "ids", fmt::format("ids in [0, {})", vocab),
                           fmt::format("ids ranging over [{}, {}]", range.min_id, range.max_id));
  if (dim == 0) return;

  kernel_params::EmbeddingGatherParams p{};
  p.table = table.first();
  p.ids = ids.first();
  p.y = y.first();
  p.count = count;
  p.dim = dim;
  p.vocab = vocab;
  p.table_row_stride = table.strides[0];
  p.table_col_stride = table.strides[1];
  p.y_col_stride = y.strides[y.rank() - 1];
  p.ids_are_i64 = check.ids_are_i64;
  p.elem_bytes = static_cast<std::int32_t>(dtype_size(table.dtype));
  p.ids_shape = check.ids_shape;
  p.ids_strides = check.ids_strides;
  kernel_params::KernelStrides y_rows{};
  for (int d = 0; d < ids.rank(); ++d) y_rows.s[d] = y.strides[d];
  p.y_row_strides = y_rows;
  launch(s, "embedding_gather", Backend::grid(count * dim, s), p);
}

}  // namespace hal::gpu

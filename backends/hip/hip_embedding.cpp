// Launcher of embedding (hip/kernels/embedding.hip).
//
// An out-of-range id must never be used as an address, and the error must be
// an invalid_argument thrown before y is touched. So the launcher first runs
// embedding_check_ids (one workgroup) into a small device scratch, copies the
// id range back and SYNCHRONIZES the stream -- one host round trip per
// embedding call -- then throws or queues the gather.
#include <fmt/format.h>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"
#include "hip/kernels/embedding_params.h"

namespace hal::hip {

namespace {

// Device scratch freed on scope exit (also when the check throws); the stream
// has been synchronised before it goes, so no queued work uses it.
struct Scratch {
  HipDevice& dev;
  void* ptr;
  Scratch(HipDevice& d, std::size_t bytes) : dev(d), ptr(d.allocate(bytes)) {}
  ~Scratch() { dev.deallocate(ptr); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

void run_embedding(HipStream& s, const EmbeddingCall& call) {
  const Tensor& ids = call.ids;
  const Tensor& table = call.table;
  const Tensor& y = call.y;
  const std::int64_t count = ids.numel();
  const std::int64_t dim = table.shape[1];
  const std::int64_t vocab = table.shape[0];
  if (count == 0) return;

  kernels::EmbeddingCheckParams check{};
  Scratch scratch(s.device(), sizeof(kernels::IdRange));
  check.ids = ids.first();
  check.range = static_cast<kernels::IdRange*>(scratch.ptr);
  check.count = count;
  check.ids_are_i64 = ids.dtype == DType::i64 ? 1 : 0;
  check.ids_shape = kernel_shape(ids.shape);
  check.ids_strides = kernel_strides(ids.strides);
  LaunchShape one_block;
  one_block.block[0] = 256;  // embedding_check_ids's LDS arrays are sized for exactly 256 threads
  launch(s, "embedding_check_ids", one_block, check);
  kernels::IdRange range{};
  s.copy(&range, scratch.ptr, sizeof(range), CopyKind::device_to_host);
  s.synchronize();
  if (range.min_id < 0 || range.max_id >= vocab)
    throw_invalid_argument("embedding", "ids", fmt::format("ids in [0, {})", vocab),
                           fmt::format("ids ranging over [{}, {}]", range.min_id, range.max_id));
  if (dim == 0) return;

  kernels::EmbeddingGatherParams p{};
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
  p.elem_bytes = static_cast<int32_t>(dtype_size(table.dtype));
  p.ids_shape = check.ids_shape;
  p.ids_strides = check.ids_strides;
  kernels::KernelStrides y_rows{};
  for (int d = 0; d < ids.rank(); ++d) y_rows.s[d] = y.strides[d];
  p.y_row_strides = y_rows;
  launch(s, "embedding_gather", grid_stride_shape(count * dim, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip

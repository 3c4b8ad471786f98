#pragma once
// The training ops' launchers, one host logic for both GPU backends (as
// embedding_launcher.h): which kernels run in which order, their scratch and
// geometry (training_geometry.h). `Backend` names what differs between
// vendors (cuda_training.cpp, hip_training.cpp): Stream, LaunchShape,
// grid(work, stream) (a grid-stride launch over `work` items) and `name`
// (for error messages); launch(stream, kernel, shape, params) is the
// backend's, found through Stream.
//
// The calls are validated by ops/ and accepted by the support matrix (which
// declines them all unless HAL_GPU_UNVERIFIED=1: none of these kernels has
// run on a GPU yet).
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/gpu/embedding_backward_plan.h"
#include "backends/gpu/kernel_args.h"
#include "backends/gpu/training_geometry.h"
#include "hal/device.h"
#include "hal/error.h"
#include "hal/op.h"
#include "kernel_params/training.h"

namespace hal::gpu {

// Device scratch for the kernels of one call. The stream is synchronised
// before the memory is freed (cuMemFree / hipFree do not wait for queued
// kernels), so a call with scratch costs one host round trip: finish() on the
// normal path (its errors propagate), the destructor on an exception path.
template <class Stream>
class CallScratch {
 public:
  CallScratch(Stream& s, std::size_t bytes) : s_(s), ptr_(s.device().allocate(bytes)) {}
  ~CallScratch() {
    if (ptr_ == nullptr) return;
    try {
      s_.synchronize();
    } catch (...) {  // the stream is already broken; free anyway
    }
    s_.device().deallocate(ptr_);
  }
  CallScratch(const CallScratch&) = delete;
  CallScratch& operator=(const CallScratch&) = delete;

  float* floats() const { return static_cast<float*>(ptr_); }
  void finish() {
    s_.synchronize();
    s_.device().deallocate(ptr_);
    ptr_ = nullptr;
  }

 private:
  Stream& s_;
  void* ptr_;
};

template <class Backend>
typename Backend::LaunchShape training_shape(const TrainingGrid& g) {
  typename Backend::LaunchShape shape;
  shape.block[0] = kTrainingBlockThreads;
  shape.grid[0] = static_cast<unsigned>(g.x);
  shape.grid[1] = static_cast<unsigned>(g.y);
  return shape;
}

template <class Backend>
void run_unary_backward(typename Backend::Stream& s, const UnaryBackwardCall& call) {
  const kernel_params::UnaryBackwardParams p = unary_backward_params(call);
  if (p.n == 0) return;
  launch(s, "hal_unary_backward", Backend::grid(p.n, s), p);
}

template <class Backend>
void run_swiglu_backward(typename Backend::Stream& s, const SwigluBackwardCall& call) {
  const kernel_params::SwigluBackwardParams p = swiglu_backward_params(call);
  if (p.n == 0) return;
  launch(s, "hal_swiglu_backward", Backend::grid(p.n, s), p);
}

template <class Backend>
void run_softmax_backward(typename Backend::Stream& s, const SoftmaxBackwardCall& call) {
  const kernel_params::SoftmaxBackwardParams p = softmax_backward_params(call);
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  launch(s, "hal_softmax_backward", training_shape<Backend>(one_block_per_item(p.layout.rows)), p);
}

// Three kernels (kernel_params/training.h NormBackwardParams): the rows (dx
// and each row's statistics), the row blocks' partial sums, their sum in
// block order. R = 0 rows still writes dweight = dbias = 0.
template <class Backend>
void run_norm_backward(typename Backend::Stream& s, const NormBackwardCall& call) {
  kernel_params::NormBackwardParams p = norm_backward_params(call);
  const std::int64_t cols = p.layout.cols;
  if (cols == 0) return;
  const TrainingGrid partials = norm_partials_grid(cols, p.blocks);
  if (partials.x > std::numeric_limits<std::int32_t>::max())
    throw_unsupported(Backend::name, call.rms ? "rmsnorm_backward" : "layernorm_backward", "rows longer than 2^31 * 256 elements");
  const std::int64_t floats = norm_backward_scratch_floats(p);
  CallScratch<typename Backend::Stream> scratch(s, static_cast<std::size_t>(floats) * sizeof(float));
  p.stats = scratch.floats();
  p.partial_w = p.stats + 2 * p.layout.rows;
  p.partial_b = p.dbias != nullptr ? p.partial_w + p.blocks * cols : nullptr;
  if (p.layout.rows > 0) {
    launch(s, "hal_norm_backward_rows", training_shape<Backend>(one_block_per_item(p.layout.rows)), p);
    launch(s, "hal_norm_backward_partials", training_shape<Backend>(partials), p);
  }
  launch(s, "hal_norm_backward_finish", training_shape<Backend>(norm_finish_grid(cols)), p);
  scratch.finish();
}

template <class Backend>
void run_rope_backward(typename Backend::Stream& s, const RopeBackwardCall& call) {
  if (call.dx.numel() == 0) return;
  // The forward rope kernel with RopeParams::inverse; its work count per
  // backend is the forward launcher's (Backend::rope_work).
  launch(s, "hal_rope", Backend::grid(Backend::rope_work(call.dy, call.rotary_dim), s), rope_backward_params(call));
}

template <class Backend>
void run_adamw(typename Backend::Stream& s, const AdamwCall& call) {
  const kernel_params::AdamwParams p = adamw_params(call);
  if (p.n == 0) return;
  launch(s, "hal_adamw_step", Backend::grid(p.n, s), p);
}

// Pass 1 once per tensor into its range of the partials, then pass 2. With no
// element at all pass 2 still writes y = 0.
template <class Backend>
void run_global_norm(typename Backend::Stream& s, const GlobalNormCall& call) {
  std::int64_t chunks = 0;
  for (const Tensor& x : call.xs) chunks += kernel_params::global_norm_chunks(x.numel());
  CallScratch<typename Backend::Stream> scratch(s, static_cast<std::size_t>(chunks > 0 ? chunks : 1) * sizeof(float));
  std::int64_t at = 0;
  for (const Tensor& x : call.xs) {
    const std::int64_t n = kernel_params::global_norm_chunks(x.numel());
    if (n > 0)
      launch(s, "hal_global_norm_partials", training_shape<Backend>(one_block_per_item(n)),
             global_norm_partial_params(x, scratch.floats() + at));
    at += n;
  }
  typename Backend::LaunchShape one;
  one.block[0] = kTrainingBlockThreads;
  launch(s, "hal_global_norm_finish", one, global_norm_finish_params(call, scratch.floats()));
  scratch.finish();
}

// The target check first (one block; its result read back, the stream
// synchronised: a bad target throws before anything is written, as
// embedding's ids), then a block per row, then for sum / mean the reduction.
template <class Backend>
void run_cross_entropy(typename Backend::Stream& s, const CrossEntropyCall& call) {
  const std::int64_t n = call.logits.shape[0];
  const bool reduced = call.reduction != LossReduction::none;
  // Scratch: the check's result, then (sum / mean) one loss per row.
  const std::size_t check_bytes = sizeof(kernel_params::CrossEntropyCheck);
  const std::size_t bytes = check_bytes + (reduced ? static_cast<std::size_t>(n) * sizeof(float) : 0);
  CallScratch<typename Backend::Stream> scratch(s, bytes);
  kernel_params::CrossEntropyCheck check{0, -1, 0};
  if (n > 0) {
    kernel_params::CrossEntropyCheckParams cp = cross_entropy_check_params(call);
    cp.result = reinterpret_cast<kernel_params::CrossEntropyCheck*>(scratch.floats());
    typename Backend::LaunchShape one;
    one.block[0] = kTrainingBlockThreads;
    launch(s, "hal_cross_entropy_check", one, cp);
    s.copy(&check, cp.result, sizeof(check), CopyKind::device_to_host);
    s.synchronize();
  }
  if (check.bad_row >= 0)
    throw_invalid_argument("cross_entropy", "targets",
                           fmt::format("targets in [0, {}) or ignore_index {}", call.logits.shape[1], call.ignore_index),
                           fmt::format("{} at row {}", check.bad_value, check.bad_row));
  kernel_params::CrossEntropyParams p = cross_entropy_params(call, check.counted);
  float* row_loss = reinterpret_cast<float*>(reinterpret_cast<char*>(scratch.floats()) + check_bytes);
  if (reduced) p.row_loss = row_loss;
  if (n > 0) launch(s, "hal_cross_entropy_rows", training_shape<Backend>(one_block_per_item(n)), p);
  if (reduced) {
    kernel_params::CrossEntropyReduceParams r{};
    r.row_loss = row_loss;
    r.loss = static_cast<float*>(call.loss.first());
    r.n = n;
    r.counted = static_cast<float>(check.counted);
    r.mean = call.reduction == LossReduction::mean;
    typename Backend::LaunchShape one;
    one.block[0] = kTrainingBlockThreads;
    launch(s, "hal_cross_entropy_reduce", one, r);
  }
  scratch.finish();
}

// embedding_backward (kernel_params/embedding.h EmbeddingBackwardParams; the
// plan in embedding_backward_plan.h): the id check, the keys, the bitonic
// sort, the segments -- all queued at once, since none of them uses an id as
// an address -- then the check's result read back (the stream synchronised):
// a bad id throws here, before dtable is touched, as the forward embedding's
// check does. Then the accumulate. Scratch through the device allocator
// (CallScratch, as the other training ops): keys, tile counts and offsets,
// segment starts; about 16 bytes per position.
template <class Backend>
void run_embedding_backward(typename Backend::Stream& s, const EmbeddingBackwardCall& call) {
  kernel_params::EmbeddingBackwardParams p = embedding_backward_params(call);
  if (p.count == 0) return;
  constexpr const char* op = "embedding_backward";
  if (p.count >= (std::int64_t{1} << 32)) throw_unsupported(Backend::name, op, "more than 2^32 - 1 ids (the sort key holds a 32-bit position)");
  if (p.vocab >= (std::int64_t{1} << 32) - 1) throw_unsupported(Backend::name, op, "a table of 2^32 - 1 rows or more (the sort key holds a 32-bit id)");
  const EmbeddingAccumulateGrid acc = embedding_accumulate_grid(p.count, p.vocab, p.dim);
  if (acc.y > kEmbeddingMaxGridX) throw_unsupported(Backend::name, op, "rows longer than 65535 * 256 elements");
  CallScratch<typename Backend::Stream> scratch(s, embedding_backward_scratch(p.count).bytes);
  place_embedding_backward_scratch(p, scratch.floats());

  typename Backend::LaunchShape one;
  one.block[0] = kernel_params::kEmbeddingBackwardThreads;
  launch(s, "hal_embedding_backward_check", one, p);
  launch(s, "hal_embedding_backward_keys", Backend::grid(p.padded, s), p);
  const TrainingGrid chunks = one_block_per_item(p.padded / kernel_params::kEmbeddingSortChunk);
  for (const BitonicLaunch& b : bitonic_plan(p.padded)) {
    p.sort_k = b.k;
    p.sort_j = b.j;
    switch (b.kind) {
      case BitonicLaunch::local: launch(s, "hal_embedding_backward_sort_local", training_shape<Backend>(chunks), p); break;
      case BitonicLaunch::step: launch(s, "hal_embedding_backward_sort_step", Backend::grid(p.padded / 2, s), p); break;
      case BitonicLaunch::merge: launch(s, "hal_embedding_backward_sort_merge", training_shape<Backend>(chunks), p); break;
    }
  }
  const TrainingGrid tiles = one_block_per_item(p.tiles);
  launch(s, "hal_embedding_backward_segments_count", training_shape<Backend>(tiles), p);
  launch(s, "hal_embedding_backward_segments_scan", one, p);
  launch(s, "hal_embedding_backward_segments_write", training_shape<Backend>(tiles), p);

  kernel_params::EmbeddingBackwardCheck check{};
  s.copy(&check, p.check, sizeof(check), CopyKind::device_to_host);
  s.synchronize();
  if (check.bad_pos >= 0)
    throw_invalid_argument(op, "ids", fmt::format("ids in [0, {})", p.vocab),
                           fmt::format("{} at position {}", check.bad_value, check.bad_pos));
  if (p.dim > 0) {
    typename Backend::LaunchShape shape;
    shape.block[0] = kernel_params::kEmbeddingBackwardThreads;
    shape.grid[0] = static_cast<unsigned>(acc.x);
    shape.grid[1] = static_cast<unsigned>(acc.y);
    launch(s, "hal_embedding_backward_accumulate", shape, p);
  }
  scratch.finish();
}

}  // namespace hal::gpu

#include "backends/cuda/cuda_tma.h"

#include <cstring>

#include "backends/cuda/cuda_driver.h"

namespace hal::cuda {

static_assert(sizeof(CUtensorMap) == sizeof(ptx::TmaDescriptorBytes), "opaque TMA descriptor must match CUtensorMap");
// The bytes are copied (memcpy) into the kernel parameter, where the struct's
// 64-byte alignment is what cp.async.bulk.tensor needs on sm_90; the host-side
// CUtensorMap's own (larger, CUDA 13) alignment does not carry over.
static_assert(alignof(ptx::TmaDescriptorBytes) >= 64, "TMA descriptor alignment");

bool encode_tma_16bit(ptx::TmaDescriptorBytes& out, const void* base, DType t, int rank, const std::uint64_t* dims,
                      const std::uint64_t* strides_bytes, const std::uint32_t* box) {
  constexpr int kMaxRank = 5;
  const Driver* d = driver();
  if (d == nullptr || d->cuTensorMapEncodeTiled == nullptr || rank < 1 || rank > kMaxRank) return false;
  cuuint64_t dims_c[kMaxRank], strides_c[kMaxRank];
  cuuint32_t box_c[kMaxRank], elem_strides[kMaxRank];
  for (int i = 0; i < rank; ++i) {
    dims_c[i] = static_cast<cuuint64_t>(dims[i]);
    box_c[i] = static_cast<cuuint32_t>(box[i]);
    elem_strides[i] = 1;
    if (i + 1 < rank) strides_c[i] = static_cast<cuuint64_t>(strides_bytes[i]);
  }
  CUtensorMap map;
  const CUresult r = d->cuTensorMapEncodeTiled(
      &map, t == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      static_cast<cuuint32_t>(rank), const_cast<void*>(base), dims_c, strides_c, box_c, elem_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return false;
  std::memcpy(out.bytes, &map, sizeof(map));
  return true;
}

}  // namespace hal::cuda

#include "backends/cuda/cuda_attention_tma.h"

#include <cstring>

#include "backends/cuda/cuda_driver.h"

namespace hal::cuda {

static_assert(sizeof(CUtensorMap) == sizeof(ptx::TmaDescriptorBytes), "opaque TMA descriptor must match CUtensorMap");

bool encode_attention_view(ptx::TmaDescriptorBytes& out, const void* base, DType t, const TmaView4D& v) {
  const Driver* d = driver();
  if (d == nullptr || d->cuTensorMapEncodeTiled == nullptr) return false;
  CUtensorMap map;
  cuuint64_t dims[4], strides[3];
  cuuint32_t box[4];
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<cuuint64_t>(v.dims[i]);
    box[i] = static_cast<cuuint32_t>(v.box[i]);
  }
  for (int i = 0; i < 3; ++i) strides[i] = static_cast<cuuint64_t>(v.strides_bytes[i]);
  const CUresult r = d->cuTensorMapEncodeTiled(
      &map, t == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
      const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return false;
  std::memcpy(out.bytes, &map, sizeof(map));
  return true;
}

}  // namespace hal::cuda

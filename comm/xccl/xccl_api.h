#pragma once
// The few NCCL prototypes hal calls, declared here rather than by including
// nccl.h (which pulls in the CUDA runtime headers). RCCL exports the same API
// (same names, enums and struct layout), so one table serves both libraries.
// Values from nccl.h (NCCL 2.18+) and rccl.h (ROCm 5.x/6.x): ncclAvg needs
// NCCL/RCCL 2.10 or later.
#include <cstddef>

namespace hal::comm::xccl {

using ncclComm_t = struct ncclComm*;
using ncclStream_t = void*;  // cudaStream_t / hipStream_t (CUstream is the same handle)
constexpr int kUniqueIdBytes = 128;
struct ncclUniqueId {
  char internal[kUniqueIdBytes];
};

enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};
enum ncclDataType_t : int {
  ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
  ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9,
};
enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

struct Api {
  ncclResult_t (*GetVersion)(int*);
  const char* (*GetErrorString)(ncclResult_t);
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int nranks, ncclUniqueId id, int rank);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*);
  ncclResult_t (*AllReduce)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, ncclStream_t);
  ncclResult_t (*AllGather)(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t, ncclStream_t);
  ncclResult_t (*ReduceScatter)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                ncclStream_t);
  ncclResult_t (*Broadcast)(const void*, void*, std::size_t, ncclDataType_t, int root, ncclComm_t, ncclStream_t);
  ncclResult_t (*Send)(const void*, std::size_t, ncclDataType_t, int peer, ncclComm_t, ncclStream_t);
  ncclResult_t (*Recv)(void*, std::size_t, ncclDataType_t, int peer, ncclComm_t, ncclStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
};

}  // namespace hal::comm::xccl

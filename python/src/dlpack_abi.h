#pragma once
// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), written out
// from the specification: the structs and codes this module exchanges. The
// layout is a stable C ABI; only what hal uses is declared.
#include <cstdint>

namespace hal::python::dlpack {

enum DeviceType : std::int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kROCM = 10, kROCMHost = 11 };

enum TypeCode : std::uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kBfloat = 4,
  kBool = 6,
  kFloat8_e4m3fn = 10,  // DLPack 1.1: OCP e4m3fn, hal's f8e4m3
  kFloat8_e4m3fnuz = 11,  // DLPack 1.1: FNUZ e4m3 (MI300), hal's f8e4m3fnuz
  kFloat8_e5m2 = 12,    // DLPack 1.1: OCP e5m2, hal's f8e5m2
  kFloat8_e5m2fnuz = 13,  // DLPack 1.1: FNUZ e5m2 (MI300), hal's f8e5m2fnuz
};

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; may be null (compact row-major)
  std::uint64_t byte_offset;
};

// The legacy (pre-1.0) capsule "dltensor".
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// The 1.0 capsule "dltensor_versioned".
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1;
inline constexpr std::uint64_t kFlagIsCopied = 2;

// The version this module produces in versioned capsules (it knows the fp8 codes).
inline constexpr PackVersion kVersion{1, 1};

}  // namespace hal::python::dlpack

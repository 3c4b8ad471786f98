#include "cpu_ref/unary_table16.h"

#include <vector>

namespace hal::cpu_ref {

namespace {

using Map = void (*)(const float*, float*, std::int64_t);

Map map_of(const VectorKernels& vk, FusedOp op) {
  switch (op) {
    case FusedOp::exp: return vk.exp;
    case FusedOp::sigmoid: return vk.sigmoid;
    case FusedOp::silu: return vk.silu;
    default: return nullptr;
  }
}

std::unique_ptr<std::uint16_t[]> build(const VectorKernels& vk, Map map, DType t) {
  auto table = std::make_unique<std::uint16_t[]>(kUnaryTable16Entries);
  std::vector<std::uint16_t> bits(kUnaryTable16Entries);
  for (std::int64_t i = 0; i < kUnaryTable16Entries; ++i) bits[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(i);
  std::vector<float> wide(kUnaryTable16Entries), out(kUnaryTable16Entries);
  vk.widen(bits.data(), t, kUnaryTable16Entries, wide.data());
  map(wide.data(), out.data(), kUnaryTable16Entries);
  vk.narrow(table.get(), t, kUnaryTable16Entries, out.data());
  return table;
}

}  // namespace

const std::uint16_t* UnaryTables16::get(const VectorKernels& vk, FusedOp op, DType t) {
  const Map map = map_of(vk, op);
  if (!map || (t != DType::bf16 && t != DType::f16)) return nullptr;
  const int o = op == FusedOp::exp ? 0 : op == FusedOp::sigmoid ? 1 : 2;
  const int d = t == DType::bf16 ? 0 : 1;
  std::call_once(once_[o][d], [&] { tables_[o][d] = build(vk, map, t); });
  return tables_[o][d].get();
}

}  // namespace hal::cpu_ref

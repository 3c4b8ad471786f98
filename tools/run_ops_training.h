#pragma once
// `hal run` for the training ops: their table rows and call construction
// (run_ops.cpp asks here for every op it does not know itself).
#include <optional>

#include "tools/run_ops.h"

namespace hal::tools {

void add_training_op_specs(std::vector<OpSpec>& specs);
// The call for a training op, or nullopt when `spec` is not one.
std::optional<BuiltCall> build_training_call(const OpSpec& spec, const std::map<std::string, HostArray>& inputs,
                                             const Attrs& attrs, const std::set<std::string>& requested,
                                             DeviceArena& arena);

}  // namespace hal::tools

// libFuzzer target: the op interface on the CPU device. Each input decodes
// into one op call (op_fuzz_decoder.h) whose tensors are views into a
// canary-filled arena. Properties:
//  - the call either runs or throws hal::Error; nothing else escapes;
//  - when it throws, not one byte of the arena changed (no output is written
//    before validation passes);
//  - when it runs, no byte outside the output views changed (inputs, the
//    holes of strided outputs, the gaps between regions);
//  - with nice values (op_fuzz_decoder.h), every output is within the
//    accuracy contract of the fp64 oracle (conformance/contract.h), the
//    check the conformance suite makes.
// A crash or a sanitizer report is a finding too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "conformance/oracle.h"
#include "conformance/score.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/op_fuzz_decoder.h"

namespace {

using hal::fuzz::finding;

std::string describe(const hal::OpCall& call) {
  std::string s(hal::op_name(call));
  hal::for_each_tensor(call, [&](std::string_view name, const hal::Tensor& t, hal::TensorRole) {
    s += fmt::format(" {}={} offset {}", name, t.str(), t.offset);
  });
  return s;
}

void expect_unchanged(const hal::fuzz::OpCase& c, const std::vector<std::byte>& before, const std::string& when) {
  if (std::memcmp(c.arena.data(), before.data(), before.size()) == 0) return;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (c.arena[i] != before[i])
      finding(fmt::format("{}: arena byte {} changed ({})", when, i, describe(c.call)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static hal::fuzz::OpCase c;
  if (!hal::fuzz::decode_op_case(data, size, c)) return 0;
  static hal::Stream stream(hal::device("cpu"));
  // The arena is memory hal did not allocate: registered with the CPU device,
  // so the validation layer (hal/bounds_check.h) takes views inside it and
  // refuses, as a hal::Error, the ones that reach past it.
  static hal::ExternalAllocation registered;
  static const void* registered_at = nullptr;
  static std::size_t registered_bytes = 0;
  if (c.arena.data() != registered_at || c.arena.size() != registered_bytes) {
    registered = hal::device("cpu").register_external(c.arena.data(), c.arena.size());
    registered_at = c.arena.data();
    registered_bytes = c.arena.size();
  }
  const std::vector<std::byte> before = c.arena;

  try {
    (void)hal::ops::validate(c.call);
  } catch (const hal::Error&) {
    // Refused by validation: running it must be refused too, with no write.
    try {
      hal::ops::run(stream, c.call);
    } catch (const hal::Error&) {
      expect_unchanged(c, before, "refused call");
      return 0;
    }
    finding("ops::validate refused a call that ops::run accepted: " + describe(c.call));
  }

  // The oracle reads the inputs (and accumulated outputs) before the run
  // overwrites anything; it may refuse what only the data makes invalid
  // (an embedding id out of range), as the run must then.
  std::vector<hal::conformance::Reference> refs;
  bool have_refs = false;
  if (c.nice_values) {
    try {
      refs = hal::conformance::compute_references(c.call);
      have_refs = true;
    } catch (const hal::Error&) {
    }
    expect_unchanged(c, before, "the oracle");
  }

  try {
    hal::ops::run(stream, c.call);
    stream.synchronize();
  } catch (const hal::Error& e) {
    expect_unchanged(c, before, std::string("call refused at run time (") + e.what() + ")");
    return 0;
  }

  // The arena after the run with every output element put back as it was
  // must be the arena before it.
  std::vector<std::byte> others = c.arena;
  const std::vector<hal::Tensor> outputs = hal::conformance::outputs_of(c.call);
  for (const hal::Tensor& t : outputs) hal::fuzz::restore_elements(c, t, before, others);
  if (std::memcmp(others.data(), before.data(), before.size()) != 0)
    for (std::size_t i = 0; i < before.size(); ++i)
      if (others[i] != before[i]) finding(fmt::format("byte {} outside every output view changed: {}", i, describe(c.call)));

  if (!have_refs) return 0;
  if (refs.size() != outputs.size()) finding("the oracle returned another number of outputs: " + describe(c.call));
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::vector<std::uint8_t> got = hal::fuzz::gather(outputs[o]);
    const hal::conformance::Score s = hal::conformance::score_output(got, outputs[o].dtype, refs[o].values,
                                                                     refs[o].bounds, refs[o].zero_sign);
    if (!s.passed()) finding(fmt::format("outside the accuracy contract: {} ({})", s.failure, describe(c.call)));
  }
  return 0;
}

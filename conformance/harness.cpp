#include "conformance/harness.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "conformance/oracle.h"
#include "conformance/registry.h"
#include "conformance/tensor_util.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "ops/ops.h"

namespace hal::conformance {

std::string_view status_name(Status s) {
  switch (s) {
    case Status::passed: return "passed";
    case Status::failed: return "failed";
    case Status::skipped: return "skipped";
    case Status::unsupported: return "unsupported";
    case Status::expected_failure: return "expected_failure";
  }
  return "?";
}

std::string recorded_name(const std::string& case_name, std::size_t index) {
  return index == 0 ? case_name : fmt::format("{}#{}", case_name, index);
}

std::uint64_t case_seed(std::string_view name, std::uint64_t salt) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return h ^ (salt * 0x9E3779B97F4A7C15ull);
}

std::vector<std::uint8_t> generate(const Generator& gen, DType dtype, const Shape& storage, std::uint64_t seed) {
  const std::int64_t n = checked_numel(storage);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n) * dtype_size(dtype));
  if (n == 0) return bytes;
  Device& cpu = cpu_device();
  Buffer raw = Buffer::for_tensor(cpu, DType::f32, Shape{n});
  Stream s(cpu);
  ops::RandomOptions o;
  o.seed = seed;
  o.distribution = gen.kind == Generator::normal ? RandomDistribution::normal : RandomDistribution::uniform;
  o.a = static_cast<float>(gen.a);
  o.b = static_cast<float>(gen.b);
  ops::fill_random(s, raw.view(DType::f32, Shape{n}), o);
  s.synchronize();
  const auto* f = static_cast<const float*>(raw.data());
  for (std::int64_t i = 0; i < n; ++i) {
    if (gen.kind == Generator::integers)
      store_element(bytes.data(), dtype, i, std::floor(static_cast<double>(f[i])));
    else
      store_element_f32(bytes.data(), dtype, i, f[i]);
  }
  for (const Special& sp : gen.specials)
    if (sp.index < n) store_element(bytes.data(), dtype, sp.index, sp.value);
  return bytes;
}

namespace {

using Clock = std::chrono::steady_clock;

struct Prepared {
  std::vector<std::vector<std::uint8_t>> inputs;           // storage bytes per input
  std::vector<std::vector<std::uint8_t>> initial_outputs;  // poison or initial contents, per output
};

Prepared prepare(const Case& c) {
  Prepared p;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    p.inputs.push_back(generate(c.inputs[i].gen, c.inputs[i].dtype, c.inputs[i].storage, case_seed(c.name, i + 1)));
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const OutputSpec& o = c.outputs[i];
    if (o.initial)
      p.initial_outputs.push_back(generate(*o.initial, o.dtype, o.shape, case_seed(c.name, 1000 + i)));
    else
      p.initial_outputs.emplace_back(static_cast<std::size_t>(checked_numel(o.shape)) * dtype_size(o.dtype), kPoisonByte);
  }
  return p;
}

Tensor apply_view(const InputSpec& spec, const Tensor& storage) { return spec.view ? spec.view(storage) : storage; }

// The call on `dev` over freshly uploaded copies of the prepared bytes.
struct Placed {
  std::vector<Buffer> buffers;
  std::vector<Tensor> inputs;
  std::vector<Buffer> guarded;  // per output: guard | output | guard
  std::vector<Tensor> outputs;
  OpCall call;
};

std::vector<std::uint8_t> guarded_image(const std::vector<std::uint8_t>& out) {
  std::vector<std::uint8_t> img(out.size() + 2 * kGuardBytes, kGuardByte);
  std::copy(out.begin(), out.end(), img.begin() + kGuardBytes);
  return img;
}

void upload_outputs(Stream& s, Placed& pl, const Prepared& p) {
  for (std::size_t i = 0; i < pl.guarded.size(); ++i) {
    const std::vector<std::uint8_t> img = guarded_image(p.initial_outputs[i]);
    s.copy_from_host(pl.guarded[i].data(), img.data(), img.size());
  }
  s.synchronize();
}

Placed place(const Case& c, const Prepared& p, Device& dev, Stream& s) {
  Placed pl;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    pl.buffers.emplace_back(dev, p.inputs[i].size());
    if (!p.inputs[i].empty()) s.copy_from_host(pl.buffers.back().data(), p.inputs[i].data(), p.inputs[i].size());
    pl.inputs.push_back(apply_view(c.inputs[i], Tensor::contiguous(pl.buffers.back().data(), &dev, c.inputs[i].dtype, c.inputs[i].storage)));
  }
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    pl.guarded.emplace_back(dev, p.initial_outputs[i].size() + 2 * kGuardBytes);
    pl.outputs.push_back(Tensor::contiguous(static_cast<std::uint8_t*>(pl.guarded.back().data()) + kGuardBytes, &dev,
                                            c.outputs[i].dtype, c.outputs[i].shape));
  }
  upload_outputs(s, pl, p);
  pl.call = c.make_call(pl.inputs, pl.outputs);
  return pl;
}

// "" for a single output, else " (output 'dweight')": where a failure was seen.
std::string output_label(const Placed& pl, std::size_t i) {
  if (pl.outputs.size() < 2) return "";
  std::string name = std::to_string(i);
  std::size_t k = 0;
  for_each_tensor(pl.call, [&](std::string_view n, const Tensor&, TensorRole role) {
    if (role != TensorRole::input && k++ == i) name = std::string(n);
  });
  return fmt::format(" (output '{}')", name);
}

// Runs once; fills `out` with every output's bytes; returns an error message or "".
std::string run_once(Stream& s, Placed& pl, const Prepared& p, std::vector<std::vector<std::uint8_t>>& out) {
  upload_outputs(s, pl, p);
  ops::run(s, pl.call);
  s.synchronize();
  out.clear();
  for (std::size_t o = 0; o < pl.guarded.size(); ++o) {
    const std::size_t n = p.initial_outputs[o].size();
    std::vector<std::uint8_t> got(n + 2 * kGuardBytes);
    s.copy_to_host(got.data(), pl.guarded[o].data(), got.size());
    s.synchronize();
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      if (got[i] != kGuardByte)
        return fmt::format("write before the output{}: guard byte -{} changed", output_label(pl, o), kGuardBytes - i);
      if (got[kGuardBytes + n + i] != kGuardByte)
        return fmt::format("write past the end of the output{}: guard byte +{} changed", output_label(pl, o), i);
    }
    out.emplace_back(got.begin() + kGuardBytes, got.begin() + static_cast<std::ptrdiff_t>(kGuardBytes + n));
  }
  return "";
}

std::string check_inputs_unchanged(Stream& s, const Placed& pl, const Prepared& p) {
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    std::vector<std::uint8_t> now(p.inputs[i].size());
    if (now.empty()) continue;
    s.copy_to_host(now.data(), pl.buffers[i].data(), now.size());
    s.synchronize();
    if (now != p.inputs[i]) return fmt::format("input {} was modified", i);
  }
  return "";
}

std::string first_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, DType t) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return fmt::format("element {}", i / dtype_size(t));
  return "size";
}

// The device is absent: say why, from the backend's status.
std::string absent_reason(const std::string& device_name) {
  const std::string backend = device_name.substr(0, device_name.find(':'));
  for (const BackendStatus& b : hal::backends())
    if (b.name == backend) return b.available ? fmt::format("{}: no device '{}'", backend, device_name)
                                              : fmt::format("{} unavailable: {}", backend, b.reason);
  return fmt::format("backend '{}' is not compiled in", backend);
}

Device* find_device(const std::string& name) {
  for (Device* d : hal::devices())
    if (d->name() == name) return d;
  return nullptr;
}

}  // namespace

CaseResult run_case(const Case& c, const std::string& device_name, const RunOptions& options) {
  const auto t0 = Clock::now();
  CaseResult r;
  r.name = c.name, r.op = c.op, r.dtype = std::string(dtype_name(c.dtype)), r.device = device_name;
  auto finish = [&](Status st, std::string why) {
    r.status = st;
    r.reason = std::move(why);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  Device* dev = find_device(device_name);
  if (!dev) return finish(Status::skipped, absent_reason(device_name));
  const BackendEntry* entry = backend_entry_for(device_name);
  if (entry) {
    if (const PatternReason* u = match_case(entry->unsupported, c.name)) return finish(Status::unsupported, u->reason);
  }
  const PatternReason* xfail = entry ? match_case(entry->expected_failures, c.name) : nullptr;
  auto verdict = [&](bool ok, std::string why) {
    if (xfail) {
      if (ok) return finish(Status::failed, fmt::format("unexpected pass: remove expected_failure '{}' ({})", xfail->pattern, xfail->reason));
      return finish(Status::expected_failure, fmt::format("{} [expected: {}]", why, xfail->reason));
    }
    return finish(ok ? Status::passed : Status::failed, std::move(why));
  };

  try {
    if (c.is_model) {
      if (options.recorded) return finish(Status::skipped, "model case: scored per stage against the oracle; not compared with a recording");
      ModelOutcome m = c.run_model(*dev);
      r.score = m.score;
      r.outputs.push_back({c.outputs[0].dtype, c.outputs[0].shape, std::move(m.output)});
      if (m.passed) r.reason = m.reason;
      return m.passed ? verdict(true, m.reason) : verdict(false, m.reason);
    }
    const Prepared p = prepare(c);
    // The oracle sees exactly the device's input bytes, on the CPU.
    Stream cpu_stream(cpu_device());
    Placed host = place(c, p, cpu_device(), cpu_stream);
    const std::vector<Reference> refs = compute_references(host.call, fp8_block_sum_model(device_name));

    Stream s(*dev);
    Placed pl = place(c, p, *dev, s);
    const Support sup = ops::supports(*dev, pl.call);
    if (!sup.ok) return verdict(false, fmt::format("declined by the device but not listed as unsupported: {}", sup.reason));
    std::vector<std::vector<std::uint8_t>> first, second;
    std::string err = run_once(s, pl, p, first);
    if (err.empty()) err = check_inputs_unchanged(s, pl, p);
    if (err.empty()) {
      err = run_once(s, pl, p, second);
      for (std::size_t o = 0; err.empty() && o < first.size(); ++o)
        if (first[o] != second[o])
          err = fmt::format("not deterministic: two runs differ{} at {}", output_label(pl, o),
                            first_difference(first[o], second[o], c.outputs[o].dtype));
    }
    for (std::size_t o = 0; o < first.size(); ++o) r.outputs.push_back({c.outputs[o].dtype, c.outputs[o].shape, first[o]});
    if (!err.empty()) return verdict(false, err);

    // Every output is scored; the case keeps the worst score and the first failure.
    for (std::size_t o = 0; o < c.outputs.size(); ++o) {
      const OutputSpec& spec = c.outputs[o];
      const Reference& ref = refs[o];
      Score sc;
      if (options.recorded) {
        const RecordedOutput* rec = options.recorded(recorded_name(c.name, o));
        if (!rec) return finish(Status::skipped, fmt::format("no recorded output{} for this case", output_label(pl, o)));
        if (rec->dtype != spec.dtype || !(rec->shape == spec.shape))
          return verdict(false, fmt::format("recorded output{} has another dtype or shape", output_label(pl, o)));
        // Both outputs meet the contract against the same oracle, so they may be
        // up to bound(recorded) + bound(here) = 2 * bound apart.
        std::vector<double> recorded(ref.values.size());
        for (std::size_t i = 0; i < recorded.size(); ++i)
          recorded[i] = load_element(rec->bytes.data(), rec->dtype, static_cast<std::int64_t>(i));
        sc = score_output(first[o], spec.dtype, recorded, ref.bounds, ref.zero_sign, 2.0);
      } else {
        sc = score_output(first[o], spec.dtype, ref.values, ref.bounds, ref.zero_sign);
      }
      if (!sc.passed() && c.outputs.size() > 1) sc.failure = fmt::format("{}: {}", output_label(pl, o).substr(1), sc.failure);
      if (o == 0 || sc.score > r.score.score) r.score.score = sc.score;
      r.score.nmse = std::max(r.score.nmse, sc.nmse);
      r.score.max_ulp = std::max(r.score.max_ulp, sc.max_ulp);
      if (r.score.failure.empty()) r.score.failure = sc.failure;
    }
    return verdict(r.score.passed(), r.score.failure);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::unsupported)
      return verdict(false, fmt::format("declined by the device but not listed as unsupported: {}", e.what()));
    return verdict(false, fmt::format("{}: {}", error_code_name(e.code()), e.what()));
  } catch (const std::exception& e) {
    return verdict(false, e.what());
  }
}

}  // namespace hal::conformance

#include "conformance/registry.h"

#include <mutex>

#include "conformance/cases.h"

namespace hal::conformance {

void register_builtin_backend_entries();  // backends_builtin.cpp

namespace cases {

std::vector<Special> special_values(DType dt, std::int64_t first, std::int64_t stride) {
  const double sub = dt == DType::f32 ? 0x1p-149 : dt == DType::f16 ? 0x1p-24 : dt == DType::bf16 ? 0x1p-133
                   : dt == DType::f8e4m3 ? 0x1p-9 : dt == DType::f8e4m3fnuz ? 0x1p-10 : dt == DType::f8e5m2fnuz ? 0x1p-17
                   : 0x1p-16;
  const double big = dtype_max_finite(dt);
  const double values[] = {NAN, INFINITY, -INFINITY, -0.0, sub, big, -big};
  std::vector<Special> out;
  for (std::size_t i = 0; i < std::size(values); ++i) out.push_back({first + static_cast<std::int64_t>(i) * stride, values[i]});
  return out;
}

}  // namespace cases

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> v;
    cases::add_gemm(v);
    cases::add_elementwise(v);
    cases::add_rows(v);
    cases::add_misc(v);
    cases::add_fp8(v);
    cases::add_model(v);
    cases::add_training(v);
    cases::add_model_training(v);
    return v;
  }();
  return cases;
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with backtracking to the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi, ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++, mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1, ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::vector<const Case*> select_cases(std::string_view op_pattern, std::string_view dtype_pattern) {
  std::vector<const Case*> out;
  for (const Case& c : all_cases()) {
    if (!op_pattern.empty() && !glob_match(op_pattern, c.op)) continue;
    if (!dtype_pattern.empty() && !glob_match(dtype_pattern, dtype_name(c.dtype))) continue;
    out.push_back(&c);
  }
  return out;
}

const Case* find_case(std::string_view name) {
  for (const Case& c : all_cases())
    if (c.name == name) return &c;
  return nullptr;
}

namespace {
struct Entries {
  std::mutex mutex;
  std::vector<BackendEntry> list;
};
Entries& entries() {
  static Entries e;
  return e;
}
void ensure_builtin() {
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_backend_entries(); });
}
}  // namespace

void register_backend_entry(BackendEntry entry) {
  Entries& e = entries();
  std::lock_guard lock(e.mutex);
  for (BackendEntry& existing : e.list)
    if (existing.backend == entry.backend) {
      existing = std::move(entry);
      return;
    }
  e.list.push_back(std::move(entry));
}

const BackendEntry* backend_entry_for(std::string_view device_name) {
  ensure_builtin();
  Entries& e = entries();
  std::lock_guard lock(e.mutex);
  for (const BackendEntry& b : e.list)
    if (glob_match(b.device_pattern, device_name)) return &b;
  return nullptr;
}

const PatternReason* match_case(const std::vector<PatternReason>& list, std::string_view case_name) {
  for (const PatternReason& p : list)
    if (glob_match(p.pattern, case_name)) return &p;
  return nullptr;
}

}  // namespace hal::conformance

#include "faulty_backend.h"

#include <cmath>
#include <cstring>
#include <mutex>

#include "conformance/oracle.h"
#include "hal/registry.h"

namespace hal::conformance::testing {

std::string fault_device_name(Fault f) {
  switch (f) {
    case Fault::none: return "faulty:none";
    case Fault::declines: return "faulty:declines";
    case Fault::beyond_bound: return "faulty:beyond_bound";
    case Fault::skipped_tile: return "faulty:skipped_tile";
    case Fault::write_past_end: return "faulty:write_past_end";
    case Fault::dropped_nan: return "faulty:dropped_nan";
    case Fault::nondeterministic: return "faulty:nondeterministic";
    case Fault::wrong_transpose: return "faulty:wrong_transpose";
  }
  return "faulty:?";
}

namespace {

constexpr std::int64_t kTile = 16;

// Forwards memory, streams and ops to the CPU device; memory is host memory,
// so the planted faults can edit outputs directly.
class FaultyDevice final : public Device {
 public:
  explicit FaultyDevice(Fault f) : fault_(f), cpu_(hal::device("cpu")) {
    info_ = cpu_.info();
    info_.name = fault_device_name(f);
    info_.backend = "faulty";
  }
  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return true; }
  void* allocate(std::size_t bytes) override { return cpu_.allocate(bytes); }
  void deallocate(void* p) noexcept override { cpu_.deallocate(p); }
  std::unique_ptr<StreamImpl> create_stream() override { return cpu_.create_stream(); }
  std::unique_ptr<EventImpl> create_event() override { return cpu_.create_event(); }
  Support supports(const OpCall& call) const override {
    if (fault_ == Fault::declines) return {false, "faulty:declines: declines everything"};
    return cpu_.supports(call);
  }

  void execute(StreamImpl& stream, const OpCall& call) override {
    OpCall run = call;
    if (auto* g = std::get_if<GemmCall>(&run)) {
      const int ra = g->a.rank(), rb = g->b.rank();
      if (fault_ == Fault::skipped_tile) {
        const std::int64_t k = g->trans_a ? g->a.shape[ra - 2] : g->a.shape[ra - 1];
        if (k > kTile) {
          g->a.shape[g->trans_a ? ra - 2 : ra - 1] = k - kTile;
          g->b.shape[g->trans_b ? rb - 1 : rb - 2] = k - kTile;
        }
      }
      if (fault_ == Fault::wrong_transpose && g->trans_b && rb == 2) {
        g->b = Tensor::contiguous(g->b.first(), g->b.device, g->b.dtype, Shape{g->b.shape[1], g->b.shape[0]});
        g->trans_b = false;
      }
    }
    cpu_.execute(stream, run);
    const Tensor& y = output_of(call);
    const std::int64_t n = y.numel();
    auto* out = static_cast<std::uint8_t*>(y.first());
    const std::size_t w = dtype_size(y.dtype);
    switch (fault_) {
      case Fault::beyond_bound: {
        if (n == 0) break;
        const Reference ref = compute_reference(call);
        store_element(out, y.dtype, 0, ref.values[0] + 1.5 * ref.bounds[0]);
        break;
      }
      case Fault::write_past_end:
        std::memset(out + static_cast<std::size_t>(n) * w, 0, w);
        break;
      case Fault::dropped_nan:
        for (std::int64_t i = 0; i < n; ++i)
          if (std::isnan(load_element(out, y.dtype, i))) store_element(out, y.dtype, i, 0.0);
        break;
      case Fault::nondeterministic:
        if (n > 0 && (++runs_ % 2 == 0)) out[0] ^= 1;  // lowest mantissa bit (little endian)
        break;
      default: break;
    }
  }

 private:
  Fault fault_;
  Device& cpu_;
  DeviceInfo info_;
  int runs_ = 0;
};

}  // namespace

void register_faulty_devices() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (Fault f : {Fault::none, Fault::declines, Fault::beyond_bound, Fault::skipped_tile, Fault::write_past_end,
                    Fault::dropped_nan, Fault::nondeterministic, Fault::wrong_transpose})
      hal::register_device(std::make_unique<FaultyDevice>(f), "faulty");
  });
}

}  // namespace hal::conformance::testing

#include "tests/fuzz/op_fuzz_decoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "hal/dtype.h"
#include "hal/registry.h"

namespace hal::fuzz {

bool avoid_known_defects() {
  static const bool avoid = [] {
    const char* v = std::getenv("HAL_FUZZ_AVOID_KNOWN_DEFECTS");
    return v && *v && *v != '0';
  }();
  return avoid;
}

namespace {

constexpr std::size_t kArenaBytes = 1 << 18;
constexpr std::size_t kGap = 64;  // canary bytes before every region

// The canary: position-dependent, so a kernel that writes a constant, or
// copies one region into another, changes it.
std::byte canary(std::size_t i) { return static_cast<std::byte>(0xA5u ^ ((i * 31u) & 0xFFu)); }

struct OutOfArena : std::exception {};

constexpr DType kFloats[] = {DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2, DType::f64};

class Builder {
 public:
  Builder(FuzzedDataProvider& in, OpCase& c) : in_(in), c_(c) {}

  std::uint8_t byte() { return in_.ConsumeIntegral<std::uint8_t>(); }
  bool one_in(unsigned n) { return byte() % n == 0; }
  bool flag() { return byte() & 1; }

  // Small dimensions, 0 and 1 common, now and then one past a kernel's
  // block (16, 17, 33).
  std::int64_t dim() {
    static constexpr std::int64_t kDims[] = {1, 2, 3, 4, 5, 1, 2, 3, 0, 7, 8, 16, 17, 6, 33, 1};
    return kDims[byte() % 16];
  }

  DType float_dtype() { return kFloats[byte() % 6]; }
  // The intended dtype, or now and then any (a mismatch validation must catch).
  DType maybe_other(DType t) {
    if (!one_in(16)) return t;
    const DType all[] = {DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2,
                         DType::f64, DType::i8,  DType::i32,  DType::i64,    DType::boolean};
    return all[byte() % 10];
  }

  // Now and then one dimension off by one, or a dimension more or fewer.
  Shape perturb(Shape s) {
    if (!one_in(24)) return s;
    const int what = byte() % 3;
    if (what == 0 && s.rank() > 0) {
      const int i = byte() % s.rank();
      s[i] = std::max<std::int64_t>(0, s[i] + (flag() ? 1 : -1));
    } else if (what == 1 && s.rank() < 5) {
      s.insert(0, 1 + byte() % 2);
    } else if (s.rank() > 0) {
      s.erase(0);
    }
    return s;
  }

  enum class Fill { floats, ids, positions, none };

  // A view of `shape` in a fresh region of the arena; inputs get values,
  // outputs keep the canary.
  Tensor make(DType dtype, Shape shape, Fill fill, std::int64_t id_limit = 0) {
    Tensor t;
    t.device = &cpu_;
    t.dtype = dtype;
    t.shape = shape;
    const int rank = shape.rank();
    const int layout = byte() % 16;
    Strides strides = contiguous_strides(shape);
    if (layout == 10 && rank >= 2) {
      // Stored transposed: the last two axes swapped in memory.
      Shape stored = shape;
      std::swap(stored[rank - 1], stored[rank - 2]);
      Strides s = contiguous_strides(stored);
      std::swap(s[rank - 1], s[rank - 2]);
      strides = s;
    } else if (layout == 11 && rank >= 1) {
      strides[byte() % rank] = 0;  // broadcast along one axis
    } else if (layout == 12 && rank >= 1) {
      // Padded rows: the second-to-last stride is the row length plus a pad.
      const std::int64_t pad = 1 + byte() % 3;
      std::int64_t s = 1;
      for (int i = rank - 1; i >= 0; --i) {
        strides[i] = s;
        s *= std::max<std::int64_t>(shape[i], 1);
        if (i == rank - 1) s += pad;
      }
    } else if (layout == 13) {
      for (int i = 0; i < rank; ++i) strides[i] = byte() % 6;
    }
    t.strides = strides;
    t.offset = (layout >= 13 || one_in(8)) ? byte() % 5 : 0;

    const std::int64_t numel = checked_numel(shape);
    std::int64_t span = t.offset;
    if (numel > 0) {
      std::int64_t last = t.offset;
      for (int i = 0; i < rank; ++i) last += (shape[i] - 1) * strides[i];
      span = last + 1;
    }
    const std::size_t esize = dtype_size(dtype);
    const std::size_t bytes = static_cast<std::size_t>(span) * esize + 1;  // +1: room for a misaligned base
    cursor_ = (cursor_ + kGap + 63) / 64 * 64;
    if (cursor_ + bytes + kGap > c_.arena.size()) throw OutOfArena();
    std::byte* base = c_.arena.data() + cursor_;
    cursor_ += bytes;
    const bool misaligned = esize > 1 && one_in(32);
    if (misaligned) base += 1;
    t.data = base;
    if (numel == 0 && !avoid_known_defects() && one_in(4)) t.data = nullptr;

    if (fill != Fill::none) {
      for (std::int64_t i = 0; i < span; ++i) {
        void* at = base + static_cast<std::size_t>(i) * esize;
        if (fill == Fill::ids) {
          const std::int64_t v = one_in(64) ? (flag() ? -1 : id_limit) : (id_limit > 0 ? byte() % id_limit : 0);
          store_int(at, dtype, v);
        } else if (fill == Fill::positions) {
          const std::int64_t v = one_in(64) ? (flag() ? -3 : (std::int64_t{1} << 40)) : byte() % 64;
          store_int(at, dtype, v);
        } else if (!c_.nice_values) {
          for (std::size_t k = 0; k < esize; ++k) static_cast<std::uint8_t*>(at)[k] = byte();
        } else if (is_floating(dtype)) {
          store_element(base, dtype, i, static_cast<double>(static_cast<std::int8_t>(byte())) / 16.0);
        } else {
          store_int(at, dtype, static_cast<std::int8_t>(byte()) % 3);
        }
      }
    }
    return t;
  }

  Tensor input(DType dtype, const Shape& shape) { return make(dtype, perturb(shape), Fill::floats); }
  Tensor output(DType dtype, const Shape& shape) { return make(dtype, perturb(shape), Fill::none); }

  template <class Enum>
  Enum kind(int count) {
    if (!avoid_known_defects() && one_in(64)) return static_cast<Enum>(count + byte() % 4);
    return static_cast<Enum>(byte() % count);
  }

  float attribute(std::initializer_list<float> usual) {
    const std::size_t i = byte() % (usual.size() + 1);
    if (i < usual.size()) return *(usual.begin() + i);
    return static_cast<float>(static_cast<std::int8_t>(byte())) / 8.0f;
  }

 private:
  static void store_int(void* at, DType t, std::int64_t v) {
    switch (t) {
      case DType::i8: { const auto x = static_cast<std::int8_t>(v); std::memcpy(at, &x, 1); break; }
      case DType::i32: { const auto x = static_cast<std::int32_t>(v); std::memcpy(at, &x, 4); break; }
      case DType::i64: std::memcpy(at, &v, 8); break;
      case DType::boolean: { const std::uint8_t x = v != 0; std::memcpy(at, &x, 1); break; }
      default: store_element(at, t, 0, static_cast<double>(v)); break;
    }
  }

  FuzzedDataProvider& in_;
  OpCase& c_;
  Device& cpu_ = device("cpu");
  std::size_t cursor_ = 0;
};

Shape shape_of_rank(Builder& b, int rank) {
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(b.dim());
  return s;
}

OpCall decode_call(Builder& b) {
  const DType t = b.float_dtype();
  switch (b.byte() % 13) {
    case 0: {
      GemmCall g;
      const std::int64_t m = b.dim(), n = b.dim(), k = b.dim();
      const bool batched = b.one_in(4);
      const std::int64_t batch = batched ? b.dim() : 0;
      g.trans_a = b.flag();
      g.trans_b = b.flag();
      auto with_batch = [&](Shape s) { if (batched) s.insert(0, batch); return s; };
      g.a = b.input(b.maybe_other(t), with_batch(g.trans_a ? Shape{k, m} : Shape{m, k}));
      g.b = b.input(b.maybe_other(t), with_batch(g.trans_b ? Shape{n, k} : Shape{k, n}));
      g.alpha = b.attribute({1.0f, 1.0f, 0.5f, -2.0f});
      g.beta = b.attribute({0.0f, 0.0f, 1.0f, 0.5f});
      if (b.one_in(3)) g.bias = b.input(b.maybe_other(t), Shape{n});
      g.activation = b.kind<Activation>(4);
      g.c = g.beta != 0.0f ? b.input(b.maybe_other(t), with_batch(Shape{m, n}))
                           : b.output(b.maybe_other(t), with_batch(Shape{m, n}));
      return g;
    }
    case 1: {
      BinaryCall c;
      c.kind = b.kind<BinaryKind>(6);
      const Shape y = shape_of_rank(b, b.byte() % 5);
      auto operand = [&] {
        Shape s = y;
        for (int i = 0; i < s.rank(); ++i)
          if (b.one_in(4)) s[i] = 1;
        while (s.rank() > 0 && b.one_in(4)) s.erase(0);
        return s;
      };
      c.a = b.input(b.maybe_other(t), operand());
      c.b = b.input(b.maybe_other(t), operand());
      c.y = b.output(b.maybe_other(t), y);
      return c;
    }
    case 2: {
      UnaryCall c;
      c.kind = b.kind<UnaryKind>(12);
      const Shape s = shape_of_rank(b, b.byte() % 5);
      c.x = b.input(t, s);
      c.y = b.output(b.maybe_other(t), s);
      return c;
    }
    case 3: {
      SwigluCall c;
      const Shape s = shape_of_rank(b, b.byte() % 4);
      c.gate = b.input(t, s);
      c.up = b.input(b.maybe_other(t), s);
      c.y = b.output(b.maybe_other(t), s);
      return c;
    }
    case 4: {
      ReduceCall c;
      c.kind = b.kind<ReduceKind>(5);
      const int rank = b.byte() % 5;
      const Shape x = shape_of_rank(b, rank);
      c.axis = static_cast<int>(b.byte() % (2 * rank + 3)) - rank - 1;
      c.keepdim = b.flag();
      Shape y = x;
      const int axis = c.axis < 0 ? c.axis + rank : c.axis;
      if (axis >= 0 && axis < rank) {
        if (c.keepdim) y[axis] = 1;
        else y.erase(axis);
      }
      c.x = b.input(t, x);
      c.y = b.output(b.maybe_other(c.kind == ReduceKind::argmax ? DType::i64 : t), y);
      return c;
    }
    case 5: {
      SoftmaxCall c;
      Shape s = shape_of_rank(b, 1 + b.byte() % 4);
      c.scale = b.attribute({1.0f, 0.125f, -1.0f});
      c.causal = b.flag();
      c.log = b.flag();
      c.x = b.input(t, s);
      c.y = b.output(b.maybe_other(t), s);
      return c;
    }
    case 6: {
      NormCall c;
      c.rms = b.flag();
      Shape s = shape_of_rank(b, 1 + b.byte() % 3);
      const std::int64_t d = s.back();
      c.eps = b.attribute({1e-5f, 1e-6f, 0.5f});
      c.x = b.input(t, s);
      c.weight = b.input(b.maybe_other(t), Shape{d});
      if (!c.rms && b.flag()) c.bias = b.input(b.maybe_other(t), Shape{d});
      c.y = b.output(b.maybe_other(t), s);
      return c;
    }
    case 7: {
      RopeCall c;
      const std::int64_t batch = b.dim(), seq = b.dim(), heads = b.dim();
      const std::int64_t d = 2 * (b.byte() % 9) + (b.one_in(16) ? 1 : 0);
      c.theta = b.attribute({10000.0f, 500000.0f, 1.0f});
      c.style = b.kind<RopeStyle>(2);
      c.rotary_dim = b.one_in(2) ? 0 : 2 * static_cast<int>(b.byte() % (d / 2 + 2));
      const DType pos = b.flag() ? DType::i32 : DType::i64;
      c.x = b.input(t, Shape{batch, seq, heads, d});
      c.positions = b.make(b.maybe_other(pos), b.flag() ? Shape{seq} : Shape{batch, seq}, Builder::Fill::positions);
      if (b.one_in(4)) {
        const std::int64_t rd = c.rotary_dim ? c.rotary_dim : d;
        c.inv_freq = b.input(b.maybe_other(t == DType::f64 ? DType::f64 : DType::f32), Shape{rd / 2});
      }
      c.y = b.output(b.maybe_other(t), Shape{batch, seq, heads, d});
      return c;
    }
    case 8: {
      CastCall c;
      const Shape s = shape_of_rank(b, b.byte() % 4);
      c.scale = b.attribute({1.0f, 1.0f, 0.25f, 448.0f});
      c.x = b.input(t, s);
      c.y = b.output(b.maybe_other(b.float_dtype()), s);
      return c;
    }
    case 9: {
      EmbeddingCall c;
      const std::int64_t rows = b.dim(), dim = b.dim();
      const Shape ids = shape_of_rank(b, b.byte() % 3);
      c.table = b.input(t, Shape{rows, dim});
      const DType id_type = b.flag() ? DType::i32 : DType::i64;
      c.ids = b.make(b.maybe_other(id_type), ids, Builder::Fill::ids, rows);
      Shape y = ids;
      y.push_back(dim);
      c.y = b.output(b.maybe_other(t), y);
      return c;
    }
    case 10: {
      AttentionCall c;
      const std::int64_t batch = b.dim(), sq = b.dim(), sk = b.dim(), d = b.dim(), dv = b.dim();
      std::int64_t hkv = 1 + b.byte() % 3;
      std::int64_t hq = hkv * (1 + b.byte() % 3);
      if (b.one_in(16)) hq = b.byte() % 5;  // not a multiple, or zero
      if (hq == 0 && avoid_known_defects()) hq = hkv;
      c.causal = b.flag();
      c.scale = b.attribute({0.0f, 0.0f, 0.5f});
      c.q = b.input(t, Shape{batch, sq, hq, d});
      c.k = b.input(b.maybe_other(t), Shape{batch, sk, hkv, d});
      c.v = b.input(b.maybe_other(t), Shape{batch, sk, hkv, dv});
      c.y = b.output(b.maybe_other(t), Shape{batch, sq, hq, dv});
      return c;
    }
    case 11: {
      CopyCall c;
      const Shape s = shape_of_rank(b, b.byte() % 5);
      c.x = b.input(t, s);
      c.y = b.output(b.one_in(8) ? b.float_dtype() : t, s);
      return c;
    }
    default: {
      FillRandomCall c;
      c.seed = b.byte();
      c.distribution = b.kind<RandomDistribution>(2);
      c.a = b.attribute({0.0f, -1.0f, 2.0f});
      c.b = b.attribute({1.0f, 0.5f, 3.0f});
      c.y = b.output(t, shape_of_rank(b, b.byte() % 4));
      return c;
    }
  }
}

// Calls f(byte offset of element) for each element of t, in logical order.
template <class F>
void each_element(const Tensor& t, F&& f) {
  const std::int64_t numel = checked_numel(t.shape);
  if (numel == 0) return;
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(t.rank()), 0);
  for (std::int64_t n = 0; n < numel; ++n) {
    std::int64_t e = t.offset;
    for (int i = 0; i < t.rank(); ++i) e += idx[static_cast<std::size_t>(i)] * t.strides[i];
    f(e * esize);
    for (int i = t.rank() - 1; i >= 0; --i) {
      if (++idx[static_cast<std::size_t>(i)] < t.shape[i]) break;
      idx[static_cast<std::size_t>(i)] = 0;
    }
  }
}

}  // namespace

bool decode_op_case(const std::uint8_t* data, std::size_t size, OpCase& out) {
  if (size < 4) return false;
  FuzzedDataProvider in(data, size);
  static const std::vector<std::byte> pattern = [] {
    std::vector<std::byte> p(kArenaBytes);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = canary(i);
    return p;
  }();
  out.arena = pattern;
  out.nice_values = in.ConsumeIntegral<std::uint8_t>() % 4 != 0;
  Builder b(in, out);
  try {
    out.call = decode_call(b);
  } catch (const OutOfArena&) {
    return false;
  }
  return true;
}

void restore_elements(const OpCase& c, const Tensor& t, const std::vector<std::byte>& from,
                      std::vector<std::byte>& to) {
  if (!t.data) return;
  const std::size_t base = static_cast<std::size_t>(static_cast<const std::byte*>(t.data) - c.arena.data());
  const std::size_t esize = dtype_size(t.dtype);
  each_element(t, [&](std::int64_t at) {
    const std::size_t i = base + static_cast<std::size_t>(at);
    std::memcpy(to.data() + i, from.data() + i, esize);
  });
}

std::vector<std::uint8_t> gather(const Tensor& t) {
  std::vector<std::uint8_t> out;
  const std::size_t esize = dtype_size(t.dtype);
  const auto* base = static_cast<const std::uint8_t*>(t.data);
  each_element(t, [&](std::int64_t at) { out.insert(out.end(), base + at, base + at + esize); });
  return out;
}

}  // namespace hal::fuzz

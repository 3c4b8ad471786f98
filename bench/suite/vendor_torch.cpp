#include "bench/suite/vendor_torch.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hal/dtype.h"
#include "hal/error.h"

namespace hal::bench {
namespace {

// The helper: reads commands on stdin, answers one line each on stdout.
//   shape M N K DTYPE -> "ok" (random normal A [M,K], B [K,N], C [M,N] there)
//   run               -> "done" after C = A @ B (torch.matmul with out=)
// Its OpenMP threads are asked to sleep when idle (OMP_WAIT_POLICY=PASSIVE,
// unless the user set a policy; read when torch loads its OpenMP): spinning
// between its calls, they would take the cores from hal's samples, which
// alternate with its own.
constexpr const char* kHelper = R"(
import os, sys
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
try:
    import torch
except Exception as e:
    print("error", type(e).__name__, str(e).replace("\n", " ")); sys.stdout.flush(); sys.exit(0)
torch.set_num_threads(int(sys.argv[1]))
print("ready torch %s, %d threads" % (torch.__version__, torch.get_num_threads())); sys.stdout.flush()
a = b = c = None
for line in sys.stdin:
    w = line.split()
    if not w: continue
    if w[0] == "shape":
        m, n, k = int(w[1]), int(w[2]), int(w[3])
        dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[w[4]]
        g = torch.Generator().manual_seed(1)
        a = torch.randn(m, k, generator=g).to(dt); b = torch.randn(k, n, generator=g).to(dt)
        c = torch.empty(m, n, dtype=dt)
        torch.matmul(a, b, out=c)
        print("ok")
    elif w[0] == "run":
        torch.matmul(a, b, out=c)
        print("done")
    sys.stdout.flush()
)";

class TorchGemm final : public VendorGemm {
 public:
  ~TorchGemm() override {
    if (to_) std::fclose(to_);  // EOF ends the helper's loop
    if (from_) std::fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  // Starts `python` on the helper; false (and *why) if it does not report ready.
  bool start(const char* python, int threads, std::string* why) {
    int down[2], up[2];
    if (pipe(down) != 0) return false;
    if (pipe(up) != 0) {
      close(down[0]), close(down[1]);
      return false;
    }
    const std::string thread_arg = std::to_string(threads);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(down[0], 0);
      dup2(up[1], 1);
      close(down[0]), close(down[1]), close(up[0]), close(up[1]);
      execlp(python, python, "-c", kHelper, thread_arg.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(down[0]), close(up[1]);
    if (pid_ < 0) {
      close(down[1]), close(up[0]);
      return false;
    }
    to_ = fdopen(down[1], "w");
    from_ = fdopen(up[0], "r");
    const std::string reply = read_line();
    if (reply.rfind("ready ", 0) != 0) {
      *why = fmt::format("{}: {}", python, reply.empty() ? "did not start" : reply);
      return false;
    }
    version_ = reply.substr(6);
    return true;
  }

  // version_: "torch 1.13.0, 2 threads"
  std::string name() const override { return fmt::format("PyTorch torch.matmul ({}; python helper)", version_); }
  bool supports(DType t) const override { return t == DType::bf16; }

  void gemm(Stream&, const Tensor& a, const Tensor& b, const Tensor&) override {
    const std::int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (m != m_ || n != n_ || k != k_ || a.dtype != dtype_) {
      command(fmt::format("shape {} {} {} {}\n", m, n, k, dtype_name(a.dtype)), "ok");
      m_ = m, n_ = n, k_ = k, dtype_ = a.dtype;
    }
    command("run\n", "done");
  }

 private:
  std::string read_line() {
    char buf[512];
    if (!from_ || !std::fgets(buf, sizeof buf, from_)) return {};
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }
  void command(const std::string& line, const char* expected) {
    if (std::fputs(line.c_str(), to_) < 0 || std::fflush(to_) != 0)
      throw Error(ErrorCode::device_error, "torch baseline: the python helper is gone");
    const std::string reply = read_line();
    if (reply != expected)
      throw Error(ErrorCode::device_error,
                  fmt::format("torch baseline: expected '{}' from the python helper, got '{}'", expected, reply));
  }

  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  std::string version_;
  std::int64_t m_ = -1, n_ = -1, k_ = -1;
  DType dtype_ = DType::f32;
};

}  // namespace

std::unique_ptr<VendorGemm> open_torch_gemm(int threads, std::string* why) {
  // A helper that dies must not kill hal bench with SIGPIPE on the next write.
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("HAL_BENCH_PYTHON")) candidates.emplace_back(p);
  candidates.emplace_back("/usr/bin/python3");
  candidates.emplace_back("python3");
  std::string tried;
  for (const auto& python : candidates) {
    auto g = std::make_unique<TorchGemm>();
    std::string reason;
    if (g->start(python.c_str(), threads, &reason)) return g;
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", reason.empty() ? python + ": could not start" : reason);
  }
  if (why) *why = tried;
  return nullptr;
}

}  // namespace hal::bench

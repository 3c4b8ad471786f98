// The blocked GEMM's rate by wall clock and by process CPU time (divided by
// the thread count): on a shared VM the CPU-time rate moves much less with
// the neighbours' load than the wall-clock one. Random bf16 inputs (exact in
// f32 for the f32 runs), square N, best of 3 per variant, variants run in the
// order given (alternate them). Each argument is WHICH:MC:NC:KC:MAXROWS:
//   f  f32 A/B on the AVX-512 kernel          b  bf16 A/B on the AVX-512 BF16 kernel
//   p  as b with the plain pair packing        w  bf16 A/B on the AVX-512 (fp32) kernel
//   c  as b with a bf16 C (the rounding epilogue)
// Usage: gemm_cpu_time N THREADS f:144:1024:256:1024 b:144:1024:256:1024 ...
// Build: g++ -O2 -std=c++20 -I<repo> gemm_cpu_time.cpp <build>/libhal.a -ltbb -lfmt
#include <tbb/global_control.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cstring>
#include <ctime>
static double cpu(){timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
#include "cpu_ref/gemm_blocked.h"
using namespace hal::cpu_ref;
using hal::DType;
int main(int argc, char** argv) {
  const std::int64_t n = atoll(argv[1]); int threads = atoi(argv[2]);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
  std::vector<float> af(n*n), bf(n*n), c(n*n);
  std::vector<std::uint16_t> ab(n*n), bb(n*n);
  std::mt19937 g(1);
  for (std::int64_t i=0;i<n*n;++i){ ab[i]=0x3f00|(g()&0xff); bb[i]=0x3f00|(g()&0xff); std::uint32_t u=ab[i]<<16; memcpy(&af[i],&u,4); u=bb[i]<<16; memcpy(&bf[i],&u,4);}
  auto ks = gemm_microkernels_available();
  const GemmMicroKernel* f32k=nullptr; const GemmMicroKernel* bk=nullptr;
  for (auto& k: ks){ if (std::string(k.name)=="avx512_12x32") f32k=&k; if (std::string(k.name)=="avx512bf16_12x32") bk=&k;}
  for (int arg=3; arg<argc; ++arg) {
    GemmBlocking bl; char which; long mc,nc,kc,mr;
    sscanf(argv[arg], "%c:%ld:%ld:%ld:%ld", &which,&mc,&nc,&kc,&mr); bl.mc=mc; bl.nc=nc; bl.kc=kc; bl.max_rows_per_task=mr;
    GemmProblem p; p.m=p.n=p.k=n;
    bool bf16 = which=='b' || which=='w' || which=='p' || which=='c';
    p.a = {bf16? (void*)ab.data():(void*)af.data(), bf16?DType::bf16:DType::f32, 0,0,n,1};
    p.b = {bf16? (void*)bb.data():(void*)bf.data(), bf16?DType::bf16:DType::f32, 0,0,n,1};
    p.c = {c.data(), which=='c' ? DType::bf16 : DType::f32,0,0,n,1};
    GemmMicroKernel plain = *bk; plain.pack_pairs = nullptr;
    const GemmMicroKernel& k = (which=='b' || which=='c')? *bk : which=='p' ? plain : *f32k;
    double best=1e30, bestc=1e30;
    for (int r=0;r<3;++r){ auto t0=std::chrono::steady_clock::now(); double c0=cpu(); gemm_fp32_blocked(p,k,bl); bestc=std::min(bestc,(cpu()-c0)/threads); best=std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count()); }
    printf("%-22s wall %.1f  cpu %.1f GFLOP/s\n", argv[arg], 2.0*n*n*n/best/1e9, 2.0*n*n*n/bestc/1e9);
  }
}

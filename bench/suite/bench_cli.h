#pragma once
// `hal bench [--device DEV] [--op OP] [--dtype DT] [--shape AxBxC] [--json FILE]
//            [--csv FILE] [--quick] [--no-vendor]`
namespace hal::bench {
int bench_main(int argc, char** argv);  // argv[0] is "bench"
}

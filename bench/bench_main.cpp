// Benchmarks: filled in below.
#include <benchmark/benchmark.h>
BENCHMARK_MAIN();

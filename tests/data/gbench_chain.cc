// Google Benchmark executables of known difference for `compare --gbench` (tests/commands/test_gbench.py):
// BM_chain runs N dependent register adds an iteration (N core cycles on any x86 core: one add's latency
// is 1 cycle), BM_same 200 in every build. -DN=309 makes a build 3% slower in BM_chain alone;
// -DEXTRA adds BM_extra (a benchmark only that build has), -DCRASH a benchmark that aborts, -DHANG one
// that never ends, -DERROR one that reports an error (SkipWithError), -DSHAPES benchmarks registered
// with ->Threads(2), ->Iterations(20000) and ->UseManualTime().
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>

#ifndef N
#define N 300
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

static void BM_chain(benchmark::State& st) {
    uint64_t x = 0, y = 1;
    for (auto _ : st) asm volatile(".rept " STR(N) "\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    benchmark::DoNotOptimize(x);
    st.SetItemsProcessed(static_cast<int64_t>(st.iterations()) * N);
    st.counters["adds"] = N;
}
BENCHMARK(BM_chain);

static void BM_same(benchmark::State& st) {
    uint64_t x = 0, y = 1;
    for (auto _ : st) asm volatile(".rept 200\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_same);

#ifdef EXTRA
static void BM_extra(benchmark::State& st) {
    for (auto _ : st) benchmark::ClobberMemory();
}
BENCHMARK(BM_extra);
#endif
#ifdef CRASH
static void BM_crash(benchmark::State& st) {
    for (auto _ : st) abort();
}
BENCHMARK(BM_crash);
#endif
#ifdef HANG
static void BM_hang(benchmark::State& st) {
    for (auto _ : st) pause();
}
BENCHMARK(BM_hang);
#endif
#ifdef ERROR
static void BM_error(benchmark::State& st) {
    st.SkipWithError("the input file is missing");
    for (auto _ : st) {
    }
}
BENCHMARK(BM_error);
#endif

#ifdef SHAPES
// The registrations a suite has beyond the plain loop: two threads, a fixed iteration count, and a
// manual time (here the chain's own duration by steady_clock, as a GPU benchmark times its kernel).
static void BM_threads(benchmark::State& st) {
    uint64_t x = 0, y = 1;
    for (auto _ : st) asm volatile(".rept 200\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_threads)->Threads(2);

static void BM_fixed(benchmark::State& st) {
    uint64_t x = 0, y = 1;
    for (auto _ : st) asm volatile(".rept 200\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_fixed)->Iterations(20000);

static void BM_manual(benchmark::State& st) {
    uint64_t x = 0, y = 1;
    for (auto _ : st) {
        auto t0 = std::chrono::steady_clock::now();
        asm volatile(".rept 200\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
        st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_manual)->UseManualTime();
#endif

BENCHMARK_MAIN();

/* alloc/ — allocator cost per malloc+free pair (seed 004: memory-allocation performance
 * measured with TSC-based profiling). glibc's malloc here; sizes cross its thresholds:
 * tcache (≤ 1032 B), bins, and mmap (≥ 128 KiB by default, where each pair is an
 * mmap+munmap). The pointer escapes through cb_do_not_optimize, otherwise GCC may delete
 * a malloc/free pair whose memory is never used. */
#include <stdlib.h>

#include <cyclebench.h>

#define ALLOC_SIZES 16, 64, 256, 1024, 4096, 65536, 262144, 1048576

static uint64_t null_returns;

CB_GROUP_SETUP(alloc) { null_returns = 0; }
CB_GROUP_VERIFY(alloc) {
    if (null_returns) cb_fail(s, "malloc/calloc returned NULL");
    return null_returns == 0;
}

CB_BENCH_PARAMS(alloc, malloc_free, ALLOC_SIZES) {
    size_t n = (size_t)cb_param(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        void *p = malloc(n);
        cb_do_not_optimize(p);
        null_returns += p == NULL;
        free(p);
    }
}

/* calloc must hand back zeroed memory: its cost grows with the size where malloc's does
 * not, except above the mmap threshold, where fresh pages are already zero. */
CB_BENCH_PARAMS(alloc, calloc_free, ALLOC_SIZES) {
    size_t n = (size_t)cb_param(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        void *p = calloc(1, n);
        cb_do_not_optimize(p);
        null_returns += p == NULL;
        free(p);
    }
}

/* alloc/ — allocator cost per malloc+free pair (seed 004: memory-allocation performance
 * measured with TSC-based profiling). glibc's malloc here; the sizes cross its thresholds:
 * tcache (≤ 1032 B), the bins, and mmap (≥ 128 KiB by default, where a pair can be an
 * mmap+munmap — until glibc's dynamic threshold rises after the first free). The pointer
 * escapes through cb_do_not_optimize, otherwise GCC may delete a malloc/free pair whose
 * memory is never used. */
#include <stdlib.h>

#include <cyclebench.h>

#define ALLOC_SIZES 16, 64, 256, 1024, 4096, 65536, 262144, 1048576

/* NULL returns are counted per (benchmark, size) in engine-owned memory rather than in one
 * static: the engine sets up several benchmarks before measuring them interleaved, so a
 * shared counter reset by each setup would lose or misattribute failures. */
CB_GROUP_SETUP(alloc) {
    uint64_t *nulls = cb_buffer(s, sizeof *nulls, 64, 0);
    if (!nulls) return; /* cb_buffer has recorded why */
    *nulls = 0;
    cb_set_user(s, nulls);
}

CB_GROUP_VERIFY(alloc) {
    const uint64_t *nulls = cb_user(s);
    if (*nulls == 0) return 1;
    cb_fail(s, "malloc/calloc returned NULL");
    return 0;
}

/* Seed 004: one malloc(n) and its free(p) per operation. The NULL count is kept in a
 * register and stored once per batch. */
CB_BENCH_PARAMS(alloc, malloc_free, ALLOC_SIZES) {
    size_t n = (size_t)cb_param(s);
    uint64_t nulls = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        void *p = malloc(n);
        cb_do_not_optimize(p);
        nulls += p == NULL;
        free(p);
    }
    *(uint64_t *)cb_user(s) += nulls;
}

/* Seed 004: calloc must hand back zeroed memory, so its cost grows with the size where
 * malloc's does not. Only a chunk fresh from mmap skips the clearing (the kernel zeroed it);
 * once the dynamic mmap threshold has risen above n, every calloc(n) comes from the heap
 * and clears all n bytes. */
CB_BENCH_PARAMS(alloc, calloc_free, ALLOC_SIZES) {
    size_t n = (size_t)cb_param(s);
    uint64_t nulls = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        void *p = calloc(1, n);
        cb_do_not_optimize(p);
        nulls += p == NULL;
        free(p);
    }
    *(uint64_t *)cb_user(s) += nulls;
}

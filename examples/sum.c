/* examples/sum.c — a user's benchmark file: two ways to sum an array of uint32_t.
 *
 *     cyclebench run examples/sum.c
 *     cyclebench run examples/sum.c -p 4096 --cflags "-O3 -march=x86-64-v3"
 *
 * Shows the whole API: parameters (array length), an engine-owned aligned buffer made
 * in a setup hook, a verify hook that checks the work was really done, and a
 * CPU-feature gate. One "operation" here is summing the whole array once.
 */
#include <cyclebench.h>
#include <stdlib.h>

struct sum_ctx {
    uint32_t *a;
    uint64_t expect, last;
};

/* One setup for every benchmark of the group: the array, filled with known values. */
CB_GROUP_SETUP(sum) {
    size_t n = (size_t)cb_param(s);
    struct sum_ctx *c = calloc(1, sizeof *c);
    c->a = cb_buffer(s, n * sizeof(uint32_t), 64, 0); /* 64-byte aligned, pages touched */
    if (!c->a) return;                                  /* cb_buffer recorded why */
    for (size_t i = 0; i < n; i++) {
        c->a[i] = (uint32_t)(i * 2654435761u);
        c->expect += c->a[i];
    }
    cb_set_user(s, c);
}

CB_GROUP_TEARDOWN(sum) { free(cb_user(s)); }

/* Checked after timing: a benchmark whose loop the compiler dropped would fail here. */
CB_GROUP_VERIFY(sum) {
    struct sum_ctx *c = cb_user(s);
    if (c->last != c->expect) cb_fail(s, "wrong sum");
    return c->last == c->expect;
}

CB_BENCH_PARAMS(sum, simple, 64, 1024, 4096, 65536) {
    struct sum_ctx *c = cb_user(s);
    size_t n = (size_t)cb_param(s);
    for (uint64_t it = 0; it < cb_iters(s); it++) {
        uint32_t *a = c->a;
        cb_opaque(a); /* the compiler may not hoist the sum out of the loop */
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++) sum += a[i];
        c->last = sum;
        cb_clobber();
    }
}

CB_BENCH_PARAMS(sum, unrolled4, 64, 1024, 4096, 65536) {
    struct sum_ctx *c = cb_user(s);
    size_t n = (size_t)cb_param(s);
    for (uint64_t it = 0; it < cb_iters(s); it++) {
        uint32_t *a = c->a;
        cb_opaque(a);
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four independent chains */
        size_t i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
        }
        for (; i < n; i++) s0 += a[i];
        c->last = s0 + s1 + s2 + s3;
        cb_clobber();
    }
}

#if defined(__x86_64__)
#include <immintrin.h>
/* AVX2: eight 32-bit lanes widened to 64-bit sums. Skipped (with a reason) without AVX2. */
__attribute__((target("avx2"))) static uint64_t sum_avx2(const uint32_t *a, size_t n) {
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(a + i));
        acc = _mm256_add_epi64(acc, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
        acc = _mm256_add_epi64(acc, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
    }
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)lanes, acc);
    uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) sum += a[i];
    return sum;
}

CB_BENCH_PARAMS(sum, avx2, 64, 1024, 4096, 65536) {
    struct sum_ctx *c = cb_user(s);
    for (uint64_t it = 0; it < cb_iters(s); it++) {
        uint32_t *a = c->a;
        cb_opaque(a);
        c->last = sum_avx2(a, (size_t)cb_param(s));
        cb_clobber();
    }
}
CB_REQUIRE(sum, avx2, "avx2")
#endif

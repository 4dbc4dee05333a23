/* copy/ — copying n bytes, hot in cache (seeds 000 and 003: FreeBSD's bcopy/memcpy, where
 * removing two `rep movs` start-ups won 55.9 cycles, and rep movsb vs rep movsq + tail).
 * One operation copies cb_param(s) bytes from src to dst; buffers are 64-byte aligned and
 * reused, so sizes up to L2 measure the copy, not DRAM. cb_clobber() after every copy keeps
 * the compiler from merging or dropping repeated copies; verify checks dst == src. */
#include <stdlib.h>
#include <string.h>

#include <cyclebench.h>

#define COPY_SIZES 16, 48, 64, 256, 1024, 4096, 65536, 1048576

struct bufs {
    unsigned char *src, *dst;
};

CB_GROUP_SETUP(copy) {
    size_t n = (size_t)cb_param(s);
    struct bufs *b = malloc(sizeof *b);
    if (!b) {
        cb_fail(s, "out of memory");
        return;
    }
    b->src = cb_buffer(s, n, 64, 0);
    b->dst = cb_buffer(s, n, 64, 0); /* zeroed: a copy that copies nothing fails verify */
    cb_set_user(s, b);
    if (!b->src || !b->dst) return;
    for (size_t i = 0; i < n; i++) b->src[i] = (unsigned char)(i * 131 + 7);
}

CB_GROUP_TEARDOWN(copy) { free(cb_user(s)); }

CB_GROUP_VERIFY(copy) {
    struct bufs *b = cb_user(s);
    if (memcmp(b->dst, b->src, (size_t)cb_param(s)) == 0) return 1;
    cb_fail(s, "dst != src after copy");
    return 0;
}

#define COPY_LOOP(call)                                  \
    struct bufs *b = cb_user(s);                         \
    size_t n = (size_t)cb_param(s);                      \
    unsigned char *dst = b->dst, *src = b->src;          \
    for (uint64_t i = 0; i < cb_iters(s); i++) {         \
        call;                                            \
        cb_clobber();                                    \
    }

CB_BENCH_PARAMS(copy, memcpy, COPY_SIZES) { COPY_LOOP(memcpy(dst, src, n)) } /* libc's (ifunc-selected) */
CB_BENCH_PARAMS(copy, memmove, COPY_SIZES) { COPY_LOOP(memmove(dst, src, n)) }

/* A byte at a time; the empty asm stops GCC turning the loop into memcpy or vectorising it.
 * The baseline the string instructions are measured against. */
static void byte_copy(unsigned char *d, const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        d[i] = s[i];
        __asm__ volatile("");
    }
}
CB_BENCH_PARAMS(copy, byte_loop, COPY_SIZES) { COPY_LOOP(byte_copy(dst, src, n)) }

#if defined(__x86_64__)
#include <immintrin.h>

static inline void rep_movsb(void *d, const void *s, size_t n) {
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

/* rep movsq for n/8 words, then rep movsb for the n%8 tail — always executed: the second
 * rep start-up is paid even when the tail is empty (FreeBSD's old bcopy). */
static inline void rep_movsq_tail(void *d, const void *s, size_t n) {
    size_t q = n >> 3;
    __asm__ volatile("rep movsq\n\t"
                     "movq %[r], %%rcx\n\t"
                     "rep movsb"
                     : "+D"(d), "+S"(s), "+c"(q)
                     : [r] "r"(n & 7)
                     : "memory");
}

/* The same with the tail skipped by `je` when n%8 == 0: one rep start-up fewer (seed 000). */
static inline void rep_movsq_je(void *d, const void *s, size_t n) {
    size_t q = n >> 3;
    __asm__ volatile("rep movsq\n\t"
                     "movq %[r], %%rcx\n\t"
                     "testq %%rcx, %%rcx\n\t"
                     "je 1f\n\t"
                     "rep movsb\n"
                     "1:"
                     : "+D"(d), "+S"(s), "+c"(q)
                     : [r] "r"(n & 7)
                     : "memory", "cc");
}

static inline void tail_copy(unsigned char *d, const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
}

/* SSE2, 64 bytes per iteration in four independent 16-byte load/store pairs. */
static void sse2_copy(unsigned char *d, const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_storeu_si128((__m128i *)(d + i), a);
        _mm_storeu_si128((__m128i *)(d + i + 16), b);
        _mm_storeu_si128((__m128i *)(d + i + 32), c);
        _mm_storeu_si128((__m128i *)(d + i + 48), e);
    }
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    tail_copy(d + i, s + i, n - i);
}

/* AVX2, 64 bytes per iteration in two 32-byte pairs; gated on the CPU having AVX2. */
__attribute__((target("avx2"))) static void avx2_copy(unsigned char *d, const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        _mm256_storeu_si256((__m256i *)(d + i), a);
        _mm256_storeu_si256((__m256i *)(d + i + 32), b);
    }
    for (; i + 32 <= n; i += 32) _mm256_storeu_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    _mm256_zeroupper(); /* avoid the AVX→SSE transition penalty in the caller */
    tail_copy(d + i, s + i, n - i);
}

/* Non-temporal stores bypass the cache (write-combining): slower for data reused soon,
 * faster for copies larger than the cache. sfence orders them before the next copy. */
static void nt_copy(unsigned char *d, const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    _mm_sfence();
    tail_copy(d + i, s + i, n - i);
}

CB_BENCH_PARAMS(copy, rep_movsb, COPY_SIZES) { COPY_LOOP(rep_movsb(dst, src, n)) }
CB_BENCH_PARAMS(copy, rep_movsq, COPY_SIZES) { COPY_LOOP(rep_movsq_tail(dst, src, n)) }
CB_BENCH_PARAMS(copy, rep_movsq_je, COPY_SIZES) { COPY_LOOP(rep_movsq_je(dst, src, n)) }
CB_BENCH_PARAMS(copy, sse2_unrolled, COPY_SIZES) { COPY_LOOP(sse2_copy(dst, src, n)) }
CB_BENCH_PARAMS(copy, avx2, COPY_SIZES) { COPY_LOOP(avx2_copy(dst, src, n)) }
CB_REQUIRE(copy, avx2, "avx2")
CB_BENCH_PARAMS(copy, nt_store, COPY_SIZES) { COPY_LOOP(nt_copy(dst, src, n)) }
#endif

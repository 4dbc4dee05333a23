/* copy/ — copying n bytes, hot in cache (Evans 2018, docs/references.md#getpid-copy-freebsd-2018:
 * FreeBSD's bcopy/memcpy, where the start-ups of bcopy's two `rep movs` cost 55.9 cycles per
 * getpid() against an inline copy and skipping the empty tail with je won back 48 of them; rep
 * movsb vs rep movsq + tail; Evans's table of copy variants — unrolled SSE, non-temporal stores,
 * "now AVX is enough better"; Evans 2013, docs/references.md#counter-u64-add-freebsd-2013: a
 * table of variants of one operation, selected by CPU feature, as avx2 is here).
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
    b->src = cb_buffer(s, n, 64, 0); /* two buffers: never overlapping, both 64-byte aligned */
    b->dst = cb_buffer(s, n, 64, 0);
    cb_set_user(s, b);
    if (!b->src || !b->dst) return; /* cb_buffer has recorded why */
    /* A pattern with no zero run and period 256 (so it is not all one value), and a zeroed
     * dst: a copy that copies nothing, or only part, fails verify. */
    for (size_t i = 0; i < n; i++) b->src[i] = (unsigned char)(i * 131 + 7);
    memset(b->dst, 0, n);
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

/* Evans 2018 and 2013: libc's memcpy, the implementation glibc's ifunc picks for this CPU. n is
 * only known at run time, so GCC calls it rather than expanding inline moves, and the
 * cb_clobber() after it keeps it from being dropped as a repeat of the same copy. */
CB_BENCH_PARAMS(copy, memcpy, COPY_SIZES) { COPY_LOOP(memcpy(dst, src, n)) }
/* Evans 2018 (bcopy is memmove): the overlap check first, then usually the same code path. */
CB_BENCH_PARAMS(copy, memmove, COPY_SIZES) { COPY_LOOP(memmove(dst, src, n)) }

/* Evans 2018: a byte at a time — the baseline that rep movsb (a single instruction doing the
 * same) is measured against, in cycles and in instruction counts. The empty asm volatile
 * in the loop stops GCC turning it into a memcpy call (-ftree-loop-distribute-patterns) or
 * vectorising it, at -O2 and -O3 alike, without adding an instruction. */
static void byte_copy(unsigned char *d, const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        d[i] = s[i];
        __asm__ volatile("");
    }
}
CB_BENCH_PARAMS(copy, byte_loop, COPY_SIZES) { COPY_LOOP(byte_copy(dst, src, n)) }

#if defined(__x86_64__)
#include <immintrin.h>

/* Evans 2018: rep movsb for all n bytes — one rep start-up; fast on CPUs with ERMS/FSRM, but it
 * works everywhere, so it is not gated. */
static inline void rep_movsb(void *d, const void *s, size_t n) {
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

/* Evans 2018: rep movsq for n/8 words, then rep movsb for the n%8 tail — always executed: the
 * second rep start-up is paid even when the tail is empty (FreeBSD's old bcopy). */
static inline void rep_movsq_tail(void *d, const void *s, size_t n) {
    size_t q = n >> 3;
    __asm__ volatile("rep movsq\n\t"
                     "movq %[r], %%rcx\n\t"
                     "rep movsb"
                     : "+D"(d), "+S"(s), "+c"(q)
                     : [r] "r"(n & 7)
                     : "memory");
}

/* Evans 2018: the same with the tail skipped by test+je when n%8 == 0 — one rep start-up fewer
 * (Evans's `je 666f` fix: getpid() 328 → 280 cycles). Every size of COPY_SIZES is a
 * multiple of 8, so here the tail is always skipped and rep_movsq − rep_movsq_je is
 * exactly the start-up of an empty rep movsb. */
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

/* Evans 2018 (his "movdqa"/"unroll 64" copies): SSE2, 64 bytes per iteration in
 * four independent 16-byte unaligned load/store pairs, then 16-byte steps, then bytes. */
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

/* Evans 2018 ("now AVX is enough better to be worth using"), gated by CPU feature as in Evans
 * 2013: AVX2, 64 bytes per iteration in two 32-byte pairs. target("avx2") compiles just
 * this function for AVX2 without -mavx2 for the file, so CB_REQUIRE gates it at run time. */
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

/* Evans 2018 (his movnt* copies, "barely worth using"): non-temporal stores bypass the
 * cache (write-combining): slower for data reused soon, faster for copies larger than the
 * cache. Only whole 64-byte lines are streamed (four movntdq, a line's write-combining
 * buffer filled and written out as one full-line write), as Evans's 64-byte loops and every
 * real non-temporal memcpy do; the head up to a line boundary (none, with cb_buffer's
 * 64-byte alignment) and the tail under 64 bytes take ordinary stores. Streaming a partial
 * line, as this copy once did in 16-byte steps, leaves a partly filled buffer that the
 * sfence flushes as partial writes: 48 bytes cost 670–850 ref-cycles, twice a full line,
 * and moved ±12% between runs (docs/method.md §8, "Small non-temporal copies"). So
 * below 64 bytes this is an ordinary copy plus the sfence, which is what a non-temporal
 * memcpy does there. The sfence at the end of each copy makes the weakly-ordered stores
 * visible before anything later, as a real memcpy must; its cost is part of the op: with
 * a line streamed it waits for the writes to reach memory, so from 64 bytes on the op
 * costs about one DRAM write round trip, not one per line, and moves with the memory's
 * latency from run to run (337–450 ref-cycles at 64 B on the Xeon VM, each run's CI ±1–3). */
static void nt_copy(unsigned char *d, const unsigned char *s, size_t n) {
    size_t i = (size_t)(-(uintptr_t)d & 63);
    if (i > n) i = n;
    tail_copy(d, s, i);
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    _mm_sfence();
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    tail_copy(d + i, s + i, n - i);
}

CB_BENCH_PARAMS(copy, rep_movsb, COPY_SIZES) { COPY_LOOP(rep_movsb(dst, src, n)) }
CB_BENCH_PARAMS(copy, rep_movsq, COPY_SIZES) { COPY_LOOP(rep_movsq_tail(dst, src, n)) }
CB_BENCH_PARAMS(copy, rep_movsq_je, COPY_SIZES) { COPY_LOOP(rep_movsq_je(dst, src, n)) }
CB_BENCH_PARAMS(copy, sse2_unrolled, COPY_SIZES) { COPY_LOOP(sse2_copy(dst, src, n)) }
CB_BENCH_PARAMS(copy, avx2, COPY_SIZES) { COPY_LOOP(avx2_copy(dst, src, n)) }
CB_REQUIRE(copy, avx2, "avx2")
CB_BENCH_PARAMS(copy, nt_store, COPY_SIZES) { COPY_LOOP(nt_copy(dst, src, n)) }

/* Evans 2018's exact comparison (FreeBSD r333266): getpid() copied a 48-byte frame either with an
 * inline fixed-size copy or by calling bcopy, an out-of-line function of a variable size whose
 * two rep movs start-ups cost 55.9 cycles a call (272 vs 328 cycles/getpid), of which skipping
 * the empty tail with je won back 48. Here the same three: the size is a constant only for
 * inline48 (GCC expands it into a few wide moves, no call, no rep); the bcopy ones are noinline
 * calls taking n at run time, as the kernel's were. 53 bytes: a 5-byte tail, which je cannot
 * skip. */
CB_BENCH_PARAMS(copy, inline48, 48) { COPY_LOOP((void)n; __builtin_memcpy(dst, src, 48)) }

__attribute__((noinline)) static void bcopy_rep(void *d, const void *s, size_t n) { rep_movsq_tail(d, s, n); }
__attribute__((noinline)) static void bcopy_rep_je(void *d, const void *s, size_t n) { rep_movsq_je(d, s, n); }
CB_BENCH_PARAMS(copy, bcopy_call, 48, 53) { COPY_LOOP(bcopy_rep(dst, src, n)) }
CB_BENCH_PARAMS(copy, bcopy_je_call, 48, 53) { COPY_LOOP(bcopy_rep_je(dst, src, n)) }
#endif

/* selftest_chains.c — known effects for `cyclebench selftest`: dependent chains of n
 * register-register adds cost exactly n core cycles (1-cycle latency on every x86-64 and
 * arm64 core; reg-reg because Golden Cove folds add $imm at rename, docs/method.md §3). */
#include <cyclebench.h>

#if defined(__x86_64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0\n\t.endr" : "+r"(x))
#elif defined(__aarch64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0, %0\n\t.endr" : "+r"(x))
#endif

#define CHAIN_BENCH(n)                                                 \
    CB_BENCH(selftest, add##n) {                                       \
        uint64_t x = 1;                                                \
        for (uint64_t i = 0; i < cb_iters(s); i++) CHAIN(n);           \
        cb_do_not_optimize(x);                                         \
    }

CHAIN_BENCH(100)
CHAIN_BENCH(200)
CHAIN_BENCH(300)
CHAIN_BENCH(301)
CHAIN_BENCH(302)
CHAIN_BENCH(303)
CHAIN_BENCH(305)
CHAIN_BENCH(400)
CHAIN_BENCH(330)
CHAIN_BENCH(800)

/* Truths other than the calibrating add chain itself (bench/chains.py checks them too): imul
 * has a 3-cycle latency (Intel since Nehalem, AMD since K8; 3 on Cortex-A76/Neoverse too), and
 * xor with a second register is another 1-cycle op (xor of a register with itself is a zeroing
 * idiom, removed at rename, so the second operand is a different register). */
#if defined(__x86_64__)
#define IMULS(n) __asm__ volatile(".rept " #n "\n\timul %0, %0\n\t.endr" : "+r"(x))
#define XORS(n) __asm__ volatile(".rept " #n "\n\txor %1, %0\n\t.endr" : "+r"(x) : "r"(y))
#elif defined(__aarch64__)
#define IMULS(n) __asm__ volatile(".rept " #n "\n\tmul %0, %0, %0\n\t.endr" : "+r"(x))
#define XORS(n) __asm__ volatile(".rept " #n "\n\teor %0, %0, %1\n\t.endr" : "+r"(x) : "r"(y))
#endif

CB_BENCH(selftest, imul100) {
    uint64_t x = 3;
    for (uint64_t i = 0; i < cb_iters(s); i++) IMULS(100);
    cb_do_not_optimize(x);
}

CB_BENCH(selftest, xor300) {
    uint64_t x = 1, y = 0x5555;
    cb_do_not_optimize(y);
    for (uint64_t i = 0; i < cb_iters(s); i++) XORS(300);
    cb_do_not_optimize(x);
}

/* More truths, each of one published latency on every x86-64 core cyclebench meets (Agner Fog's
 * "Instruction tables" and Granlund's "Instruction latencies and throughput for AMD and Intel x86
 * processors", docs/references.md; llvm-mca's znver3/4/5 and sapphirerapids models agree): a shift
 * by an immediate 1 cycle, crc32 3 cycles, a scalar double FMA on its accumulator 4 cycles (Zen 2's
 * was 5: Zen 3 and later only). bench/chains.py measures them beside the add chains; they are not
 * the selftest's (docs/method.md §3). */
#if defined(__x86_64__)
CB_BENCH(selftest, shl300) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile(".rept 300\n\tshl $1, %0\n\t.endr" : "+r"(x));
    cb_do_not_optimize(x);
}

CB_BENCH(selftest, crc100) {
    uint64_t x = 1, y = 0x1234;
    cb_do_not_optimize(y);
    for (uint64_t i = 0; i < cb_iters(s); i++)
        __asm__ volatile(".rept 100\n\tcrc32q %1, %0\n\t.endr" : "+r"(x) : "r"(y));
    cb_do_not_optimize(x);
}
CB_REQUIRE(selftest, crc100, "sse4.2")

/* x += 1.0 × 0.0 on the accumulator: its value never changes, nor leaves the normal range. The
 * loop is the asm's own: with the loop in C, GCC carried x in a general register between
 * iterations (movq to and from xmm0 on the chain) and the chain read 407 cycles~, not 400. */
CB_BENCH(selftest, fma100) {
    double x = 1.0, a = 1.0, b = 0.0;
    uint64_t n = cb_iters(s);
    if (n)
        __asm__ volatile("1:\n\t.rept 100\n\tvfmadd231sd %2, %3, %0\n\t.endr\n\tdec %1\n\tjnz 1b"
                         : "+x"(x), "+r"(n) : "x"(a), "x"(b) : "cc");
    cb_do_not_optimize(x);
}
CB_REQUIRE(selftest, fma100, "avx2") /* every AVX2 core has FMA3 (Haswell, Zen and later) */
#endif

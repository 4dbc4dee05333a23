/* chain.h — core-clock calibration by dependent chains (docs/method.md §3).
 *
 * Without a PMU, the core clock is estimated from a chain of register-register adds:
 * each add needs the previous result, so the chain runs at one add per core cycle on
 * every x86-64 and arm64 core in use (1-cycle integer add latency). Timed with the TSC,
 * CB_CHAIN_ADDS / ticks = core cycles per TSC tick at that moment; a per-op cost in ticks
 * times that ratio is in core cycles (`cycles~`, an estimate).
 *   - reg-reg add, never add $imm: Intel Golden Cove folds immediate adds at rename
 *     (300 of them ran in 41 TSC ticks on this project's VM, against 230 for reg-reg).
 *   - a loop of 8 × 256 adds keeps the code at ~1 KiB, out of the benchmark's way in the
 *     I-cache; the loop counter is not on the dependency chain, so it is free. One untimed
 *     block runs before each timed add chain (cb_chain_ticks): a chain whose code had to be
 *     fetched again after a batch read up to 20% slow (measure.c).
 *   - the imul chain (3-cycle latency on Intel since Nehalem and AMD since K8) cross-checks
 *     the add chain: both must give the same clock, or the estimate is not trusted. It is timed
 *     after every batch too, and its fixed part measured as the adds' is (1 and 4 blocks): on an
 *     AMD EPYC Zen 3 guest the two clocks of one process agreed within 0.1% from ~300 readings
 *     each, and processes a second apart differed by 0.3–2.4% — the 1-cycle chain slowed by
 *     something the guest cannot see (docs/method.md §3).
 *   - a timed chain is longer than its adds by a fixed part: the timer pair, the call, the
 *     first add waiting for the lfence, the last for rdtscp. Subtracting the empty timer
 *     pair's cost left cycles~ biased by −0.3% (AMD EPYC) to +0.4% (Intel Xeon) on chains of
 *     known length (bench/chains.py), so the fixed part is measured instead: chains of 1 and of 8
 *     blocks timed alternately (CB_CHAIN_FIXED_READS of each); their difference is 1792 adds.
 *     The value enters and leaves in a register, so no load is on the chain.
 * Limits: a clock change inside a batch is averaged, not seen; an SMT sibling's load slows
 * the chain and the benchmark alike (a ratio that no longer means the clock).
 */
#ifndef CB_CHAIN_H
#define CB_CHAIN_H

#include <stdint.h>

#define CB_CHAIN_ADDS 2048 /* 8 × 256 */
#define CB_CHAIN_IMULS 512 /* 4 × 128, 3 cycles each */
#define CB_IMUL_LATENCY 3
#define CB_IMUL_BLOCK 128 /* imuls per block: CB_CHAIN_IMULS / 4 */
#define CB_CHAIN_BLOCK 256 /* adds per block: CB_CHAIN_ADDS / 8 */
#define CB_CHAIN_FIXED_READS 128 /* 64 before the rounds, 64 after: the imul chain's fixed part to ~0.9 ticks (0.08% of its chain) */
#define CB_CHAIN_PAIR_READS 5 /* add and imul chains timed alternately, at the start and at the end */

#if defined(__x86_64__)
#define CB_HAVE_CHAIN 1
#define CB_ADD256 ".rept 256\n\tadd %0, %0\n\t.endr"
#define CB_IMUL128 ".rept 128\n\timul %0, %0\n\t.endr"
#elif defined(__aarch64__)
#define CB_HAVE_CHAIN 1
#define CB_ADD256 ".rept 256\n\tadd %0, %0, %0\n\t.endr"
#define CB_IMUL128 ".rept 128\n\tmul %0, %0, %0\n\t.endr"
#else
#define CB_HAVE_CHAIN 0
#endif

#if CB_HAVE_CHAIN
/* blocks × 256 dependent adds on x; the same code for every length, so the fixed part is too */
static __attribute__((noinline, unused)) uint64_t cb_add_chain(uint64_t x, int blocks) {
    for (int i = 0; i < blocks; i++) __asm__ volatile(CB_ADD256 : "+r"(x));
    return x;
}
/* blocks × 128 dependent imuls (0: the whole CB_CHAIN_IMULS); one and four time its fixed part as
 * the adds' one and eight time theirs */
static __attribute__((noinline, unused)) uint64_t cb_imul_chain(uint64_t x, int blocks) {
    x |= 1;
    if (!blocks) blocks = CB_CHAIN_IMULS / CB_IMUL_BLOCK;
    for (int i = 0; i < blocks; i++) __asm__ volatile(CB_IMUL128 : "+r"(x));
    return x;
}
#endif

#endif

/* counter/ — the counter_u64_add() implementations of seed 003 (Evans ↔ Belousov, 2013)
 * that user space can run. The seed's cycle counts (Athlon64): plain `*c += inc` 4–7,
 * unlocked cmpxchg8b 20, the same with a lock prefix 31 and with an mfence 35, critical
 * section emulations 7–13, cli/sti 12. Each body does exactly cb_iters(s) increments of
 * one 64-bit counter, and verify checks the counter equals every increment ever made
 * (cb_total_iters), as the seed's "N = TSC frequency" loop was checked: a variant that
 * loses or doubles an update fails instead of looking fast.
 * Consecutive increments form a dependency chain through memory (store → load
 * forwarding), as repeated increments of one per-CPU counter do. */
#include <signal.h>
#include <stdio.h>

#include <cyclebench.h>

typedef struct {
    uint64_t lo, hi; /* hi: the upper half of the 128-bit cmpxchg16b counter, else 0 */
} __attribute__((aligned(16))) counter_t; /* cmpxchg16b faults on a non-16-aligned operand */

CB_GROUP_SETUP(counter) { /* 64-byte aligned, alone on its cache line, zeroed */
    counter_t *c = cb_buffer(s, sizeof(counter_t), 64, 0);
    if (!c) return; /* cb_buffer has recorded why */
    c->lo = c->hi = 0;
    cb_set_user(s, c);
}

CB_GROUP_VERIFY(counter) {
    counter_t *c = cb_user(s);
    if (c->lo == cb_total_iters(s) && c->hi == 0) return 1;
    char msg[160];
    if (c->hi)
        snprintf(msg, sizeof msg, "counter is %llu:%llu (high:low 64 bits) after %llu increments",
                 (unsigned long long)c->hi, (unsigned long long)c->lo, (unsigned long long)cb_total_iters(s));
    else
        snprintf(msg, sizeof msg, "counter is %llu after %llu increments", (unsigned long long)c->lo,
                 (unsigned long long)cb_total_iters(s));
    cb_fail(s, msg);
    return 0;
}

#if defined(__x86_64__)
/* Why asm with "+m" rather than `c->lo++`: the kernel's per-CPU add is one read-modify-write
 * instruction on memory (`addq $1, %gs:(…)`). In C, GCC would keep the counter in a register
 * for the whole loop and store it once (the seed made its counters volatile for the same
 * reason: "preventing optimizations that aren't possible for pcpu variables"). "+m" makes
 * the operand that memory location, read and written by each instruction; volatile keeps
 * every one of them. */

/* Seed 003: the plain add of a per-CPU counter (~4–7 cycles there) — not atomic against other
 * CPUs, correct only because each CPU has its own counter. */
CB_BENCH(counter, plain_add) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("addq $1, %0" : "+m"(c->lo));
}

/* Seed 003: the atomic alternative to a per-CPU counter — a locked RMW, a full barrier on
 * x86 ("we could use atomic ops for everything and only be 50% slower"). */
CB_BENCH(counter, lock_add) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("lock addq $1, %0" : "+m"(c->lo));
}

/* Seed 003: atomic_fetchadd — the same locked RMW, also returning the old value. */
CB_BENCH(counter, lock_xadd) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t one = 1;
        __asm__ volatile("lock xaddq %0, %1" : "+r"(one), "+m"(c->lo));
    }
}

/* Seed 003: the compare-and-swap loop every atomic op can be built from: load, compute,
 * lock cmpxchg, retry when another writer got in between (never, uncontended). */
CB_BENCH(counter, cmpxchg_loop) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t next;
        __asm__ volatile("movq %[c], %%rax\n"
                         "1:\tleaq 1(%%rax), %[next]\n\t"
                         "lock cmpxchgq %[next], %[c]\n\t"
                         "jne 1b"
                         : [c] "+m"(c->lo), [next] "=&r"(next)
                         :
                         : "rax", "cc");
    }
}

/* Seed 003: FreeBSD i386 updated its 64-bit per-CPU counters with an *unlocked* cmpxchg8b
 * loop (counter_64_inc_8b, ~20 cycles): one instruction, so atomic against an interrupt on
 * the same CPU, though not against other CPUs. On x86-64 the same code is a 128-bit counter
 * and cmpxchg16b (rdx:rax expected, rcx:rbx new). */
#define CMPXCHG16B_INC(prefix)                                 \
    __asm__ volatile("movq (%[p]), %%rax\n\t"                  \
                     "movq 8(%[p]), %%rdx\n"                   \
                     "1:\tmovq %%rax, %%rbx\n\t"               \
                     "movq %%rdx, %%rcx\n\t"                   \
                     "addq $1, %%rbx\n\t"                      \
                     "adcq $0, %%rcx\n\t" prefix               \
                     "cmpxchg16b (%[p])\n\t"                   \
                     "jne 1b"                                  \
                     :                                         \
                     : [p] "r"(c)                              \
                     : "rax", "rbx", "rcx", "rdx", "cc", "memory")

CB_BENCH(counter, cmpxchg16b) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) CMPXCHG16B_INC("");
}
CB_REQUIRE(counter, cmpxchg16b, "cx16")

/* Seed 003: the same with a lock prefix (31 cycles against 20 there): what the lock alone
 * costs on a double-width compare-and-swap. */
CB_BENCH(counter, lock_cmpxchg16b) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) CMPXCHG16B_INC("lock\n\t");
}
CB_REQUIRE(counter, lock_cmpxchg16b, "cx16")

/* Seed 003 (cmpxchg8b with an mfence, 35 cycles): here the plain per-CPU add followed by an
 * mfence, which drains the store buffer — the price of making each update globally visible
 * before going on, without a lock. */
CB_BENCH(counter, mfence_add) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("addq $1, %0\n\tmfence" : "+m"(c->lo) : : "memory");
}

#else /* Portable spellings (aarch64 …): C11-model relaxed atomics through GCC's __atomic
       * builtins, so the counter stays a plain uint64_t that verify reads. On aarch64 GCC ≥ 10
       * compiles them to calls of libgcc's outline atomics (-moutline-atomics is the
       * default), which use LSE ldadd/cas when the CPU has them and ldxr/stxr loops
       * otherwise (seed 002); -march=armv8.1-a or later inlines the LSE form. */

/* Seed 003: the plain per-CPU add. volatile for the reason the seed gives: it keeps the
 * counter in memory, one load-add-store per increment, as for a per-CPU variable. */
CB_BENCH(counter, plain_add) {
    volatile uint64_t *lo = &((counter_t *)cb_user(s))->lo;
    for (uint64_t i = 0; i < cb_iters(s); i++) *lo = *lo + 1;
}

/* Seed 003: the atomic add (x86's lock add): LSE stadd/ldadd or an ldxr/add/stxr loop. */
CB_BENCH(counter, lock_add) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __atomic_fetch_add(&c->lo, 1, __ATOMIC_RELAXED);
}

/* Seed 003: load, compare-and-swap, retry (LSE cas, or ldxr/stxr). */
CB_BENCH(counter, cmpxchg_loop) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t old = __atomic_load_n(&c->lo, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&c->lo, &old, old + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
    }
}

/* Seed 003's mfence variant: a plain add then a full barrier (dmb ish on aarch64). Named
 * fence_add, not mfence_add, because it is not the x86 instruction. */
CB_BENCH(counter, fence_add) {
    volatile uint64_t *lo = &((counter_t *)cb_user(s))->lo;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        *lo = *lo + 1;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
}
#endif

/* Seed 003's critical section (7–13 cycles in its emulation) and cli/sti (12) cannot be had
 * in user space; blocking every signal around the add is their user-space stand-in: no
 * handler can run in the middle of the update. Two rt_sigprocmask system calls per
 * increment, so this measures what the kernel's cheap primitives save. */
CB_BENCH(counter, sigprocmask) {
    counter_t *c = cb_user(s);
    sigset_t all, old;
    sigfillset(&all);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        sigprocmask(SIG_BLOCK, &all, &old);
        c->lo++; /* sigprocmask is an external call: GCC must load and store around it */
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
}

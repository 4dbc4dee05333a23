/* counter/ — the counter_u64_add() implementations of Evans ↔ Belousov, 2013
 * (docs/references.md#counter-u64-add-freebsd-2013) that user space can run. Evans's cycle
 * counts (Athlon64): plain `*c += inc` 4–7, addl 4, the racy addl+adcl pair 13 in a critical
 * section, unlocked cmpxchg8b 20, the same with a lock prefix 31 and with an mfence 35,
 * critical section emulations 7–13, cli/sti 12, pushfl;cli; …;popfl 16–20. Each body does
 * exactly cb_iters(s) increments, and verify checks the counters hold every increment ever made
 * (cb_total_iters), as Evans's "N = TSC frequency" loop was checked: a variant that loses or
 * doubles an update fails instead of looking fast.
 *
 * Latency and throughput (Evans's "pipelining vs dependent chains"): NAME increments one
 * counter, so consecutive increments form a dependency chain through memory (store → load
 * forwarding), as repeated increments of one per-CPU counter do; NAME_x4 makes the same
 * increments round-robin over four counters on four cache lines, so up to four are in flight.
 * One increment is one op in both. Where x4 is no faster, the update serialises on its own:
 * a lock or an mfence drains the store buffer, a critical section chains through td_critnest.
 *
 * Not here, because user space cannot run them: cli/sti and pushfl; cli; …; popfl. cli and sti
 * fault (#GP) at CPL 3 unless IOPL is 3, and Linux (since 5.5) no longer grants a real IOPL 3
 * even to iopl(3): it emulates only port I/O. The per-CPU counter itself (FreeBSD's %fs/%gs
 * segment prefix) needs a kernel; rseq could emulate it, but that is another mechanism. */
#include <signal.h>
#include <stdio.h>

#include <cyclebench.h>

#define NCOUNTERS 4 /* the x4 variants' counters; the others use the first */

typedef struct {
    union {
        uint64_t lo;
        uint32_t half[2]; /* the i386-style variants' 32-bit halves (little-endian: half[0] is low) */
    };
    uint64_t hi; /* the upper half of the 128-bit cmpxchg16b counter, else 0 */
} __attribute__((aligned(64))) counter_t; /* each alone on its cache line; cmpxchg16b needs 16 */

CB_GROUP_SETUP(counter) { /* NCOUNTERS counters, 64-byte aligned, zeroed */
    counter_t *c = cb_buffer(s, NCOUNTERS * sizeof(counter_t), 64, 0);
    if (!c) return; /* cb_buffer has recorded why */
    for (int k = 0; k < NCOUNTERS; k++) c[k].lo = c[k].hi = 0;
    cb_set_user(s, c);
}

/* ok: the counters add up to every increment; else the reason, in msg. `mod32`: the counters
 * are 32 bits wide (addl), so they hold the increments modulo 2^32. */
static int counted(const counter_t *c, uint64_t total, int mod32, char *msg, size_t len) {
    uint64_t sum = 0, hi = 0;
    for (int k = 0; k < NCOUNTERS; k++) {
        sum += mod32 ? (uint32_t)c[k].lo : c[k].lo;
        hi |= c[k].hi | (mod32 ? c[k].lo >> 32 : 0);
    }
    if ((mod32 ? (uint32_t)sum == (uint32_t)total : sum == total) && hi == 0) return 1;
    snprintf(msg, len, "counters hold %llu (high bits %llx) after %llu increments", (unsigned long long)sum,
             (unsigned long long)hi, (unsigned long long)total);
    return 0;
}

CB_GROUP_VERIFY(counter) {
    char msg[160];
    if (counted(cb_user(s), cb_total_iters(s), 0, msg, sizeof msg)) return 1;
    cb_fail(s, msg);
    return 0;
}

/* NAME: every increment on counter 0 (a dependency chain); NAME_x4: round-robin over four. */
#define COUNTER_BENCH(name, UPDATE)                                               \
    CB_BENCH(counter, name) {                                                     \
        counter_t *c = cb_user(s);                                                \
        for (uint64_t i = 0; i < cb_iters(s); i++) UPDATE(&c[0]);                 \
    }                                                                             \
    CB_BENCH(counter, name##_x4) {                                                \
        counter_t *c = cb_user(s);                                                \
        uint64_t i = 0, n = cb_iters(s);                                          \
        for (; i + 4 <= n; i += 4) {                                              \
            UPDATE(&c[0]);                                                        \
            UPDATE(&c[1]);                                                        \
            UPDATE(&c[2]);                                                        \
            UPDATE(&c[3]);                                                        \
        }                                                                         \
        for (; i < n; i++) UPDATE(&c[0]);                                         \
    }

#if defined(__x86_64__)
/* Why asm with "+m" rather than `c->lo++`: the kernel's per-CPU add is one read-modify-write
 * instruction on memory (`addq $1, %gs:(…)`). In C, GCC would keep the counter in a register
 * for the whole loop and store it once (Evans made his counters volatile for the same
 * reason: "preventing optimizations that aren't possible for pcpu variables"). "+m" makes
 * the operand that memory location, read and written by each instruction; volatile keeps
 * every one of them. */

/* Evans 2013: the plain add of a per-CPU counter (~4–7 cycles there) — not atomic against other
 * CPUs, correct only because each CPU has its own counter. */
#define PLAIN_ADD(p) __asm__ volatile("addq $1, %0" : "+m"((p)->lo))
COUNTER_BENCH(plain_add, PLAIN_ADD)

/* Evans 2013: the i386 per-CPU add of a 32-bit counter (addl, ~4 cycles): counts modulo 2^32. */
#define ADDL(p) __asm__ volatile("addl $1, %0" : "+m"((p)->half[0]) : : "cc")
COUNTER_BENCH(addl, ADDL)

static int verify_mod32(cb_state *s) {
    char msg[160];
    if (counted(cb_user(s), cb_total_iters(s), 1, msg, sizeof msg)) return 1;
    cb_fail(s, msg);
    return 0;
}
CB_VERIFY(counter, addl) { return verify_mod32(s); }
CB_VERIFY(counter, addl_x4) { return verify_mod32(s); }

/* Evans 2013: a full 64-bit add done the racy i386 way, addl on the low half then adcl of the
 * carry into the high half — two instructions, so an interrupt between them sees a torn value
 * ("this didn't pipeline well either": 2 cycles more than addl there). */
#define ADDL_ADCL(p)                                                       \
    __asm__ volatile("addl $1, %0\n\tadcl $0, %1"                          \
                     : "+m"((p)->half[0]), "+m"((p)->half[1]) \
                     :                                                     \
                     : "cc")
COUNTER_BENCH(addl_adcl, ADDL_ADCL)

/* Evans 2013: addl, and only on a carry out of the low half (once in 2^32) the rare path —
 * there `call accum` folded it into a 64-bit total; here the carry goes into the high half. */
#define ADDL_JNC(p)                                                        \
    __asm__ volatile("addl $1, %0\n\tjnc 1f\n\taddl $1, %1\n1:"            \
                     : "+m"((p)->half[0]), "+m"((p)->half[1]) \
                     :                                                     \
                     : "cc")
COUNTER_BENCH(addl_jnc, ADDL_JNC)

/* Evans 2013's complete critical-section emulation (11 cycles there, "everything inlined"):
 * save td_critnest and raise it, add, and on leaving the outermost section lower it and check
 * td_owepreempt (a preemption requested meanwhile) before going on. td is volatile and the
 * thread's own, as curthread is; fake_mi_switch never runs (nothing requests preemption) but
 * the check is made every time, as critical_exit makes it. */
struct thread {
    uint32_t td_critnest;
    uint32_t td_owepreempt;
};
static __thread struct thread td0;
__attribute__((noinline)) static void fake_mi_switch(void) { __asm__ volatile(""); }

#define CRITICAL_ADD(p)                                                    \
    do {                                                                   \
        volatile struct thread *td = &td0;                                 \
        uint32_t ocritnest = td->td_critnest;                              \
        td->td_critnest = ocritnest + 1;                                   \
        __asm__ volatile("addq $1, %0" : "+m"((p)->lo));                   \
        if (ocritnest == 0) {                                              \
            td->td_critnest = ocritnest;                                   \
            if (td->td_owepreempt) fake_mi_switch();                       \
        } else                                                             \
            td->td_critnest = ocritnest;                                   \
    } while (0)
COUNTER_BENCH(critical_section, CRITICAL_ADD)

/* Evans 2013: the locked RMW, a full barrier on x86 ("we could use atomic ops for everything and
 * only be 50% slower"). */
#define LOCK_ADD(p) __asm__ volatile("lock addq $1, %0" : "+m"((p)->lo))
COUNTER_BENCH(lock_add, LOCK_ADD)

/* Evans 2013: atomic_fetchadd — the same locked RMW, also returning the old value. */
#define LOCK_XADD(p)                                                           \
    do {                                                                       \
        uint64_t one = 1;                                                      \
        __asm__ volatile("lock xaddq %0, %1" : "+r"(one), "+m"((p)->lo));      \
    } while (0)
COUNTER_BENCH(lock_xadd, LOCK_XADD)

/* Evans 2013: the compare-and-swap loop every atomic op can be built from: load, compute,
 * lock cmpxchg, retry when another writer got in between (never, uncontended). */
#define CMPXCHG_LOOP(p)                                                        \
    do {                                                                       \
        uint64_t next;                                                         \
        __asm__ volatile("movq %[c], %%rax\n"                                  \
                         "1:\tleaq 1(%%rax), %[next]\n\t"                      \
                         "lock cmpxchgq %[next], %[c]\n\t"                     \
                         "jne 1b"                                              \
                         : [c] "+m"((p)->lo), [next] "=&r"(next)               \
                         :                                                     \
                         : "rax", "cc");                                       \
    } while (0)
COUNTER_BENCH(cmpxchg_loop, CMPXCHG_LOOP)

/* Evans 2013: FreeBSD i386 updated its 64-bit per-CPU counters with an *unlocked* cmpxchg8b loop
 * (counter_64_inc_8b, ~20 cycles): one instruction, so atomic against an interrupt on the same
 * CPU, though not against other CPUs. x86-64 still has cmpxchg8b on a 64-bit operand
 * (edx:eax expected, ecx:ebx new): Evans's exact loop. */
#define CMPXCHG8B_INC(p, prefix)                                               \
    __asm__ volatile("movl (%[q]), %%eax\n\t"                                  \
                     "movl 4(%[q]), %%edx\n"                                   \
                     "1:\tmovl %%eax, %%ebx\n\t"                               \
                     "movl %%edx, %%ecx\n\t"                                   \
                     "addl $1, %%ebx\n\t"                                      \
                     "adcl $0, %%ecx\n\t" prefix                               \
                     "cmpxchg8b (%[q])\n\t"                                    \
                     "jne 1b"                                                  \
                     :                                                         \
                     : [q] "r"(&(p)->lo)                                       \
                     : "rax", "rbx", "rcx", "rdx", "cc", "memory")
#define CMPXCHG8B(p) CMPXCHG8B_INC(p, "")
#define LOCK_CMPXCHG8B(p) CMPXCHG8B_INC(p, "lock\n\t")
COUNTER_BENCH(cmpxchg8b, CMPXCHG8B)
/* Evans 2013: with the lock prefix (31 cycles against 20 there): what the lock alone costs. */
COUNTER_BENCH(lock_cmpxchg8b, LOCK_CMPXCHG8B)

/* The same on a 128-bit counter with cmpxchg16b (rdx:rax expected, rcx:rbx new), as an
 * x86-64 per-CPU counter of twice the width would be updated. */
#define CMPXCHG16B_INC(p, prefix)                                              \
    __asm__ volatile("movq (%[q]), %%rax\n\t"                                  \
                     "movq 8(%[q]), %%rdx\n"                                   \
                     "1:\tmovq %%rax, %%rbx\n\t"                               \
                     "movq %%rdx, %%rcx\n\t"                                   \
                     "addq $1, %%rbx\n\t"                                      \
                     "adcq $0, %%rcx\n\t" prefix                               \
                     "cmpxchg16b (%[q])\n\t"                                   \
                     "jne 1b"                                                  \
                     :                                                         \
                     : [q] "r"(p)                                              \
                     : "rax", "rbx", "rcx", "rdx", "cc", "memory")
#define CMPXCHG16B(p) CMPXCHG16B_INC(p, "")
#define LOCK_CMPXCHG16B(p) CMPXCHG16B_INC(p, "lock\n\t")
COUNTER_BENCH(cmpxchg16b, CMPXCHG16B)
CB_REQUIRE(counter, cmpxchg16b, "cx16")
CB_REQUIRE(counter, cmpxchg16b_x4, "cx16")
COUNTER_BENCH(lock_cmpxchg16b, LOCK_CMPXCHG16B)
CB_REQUIRE(counter, lock_cmpxchg16b, "cx16")
CB_REQUIRE(counter, lock_cmpxchg16b_x4, "cx16")

/* Evans 2013 (cmpxchg8b with an mfence, 35 cycles): here the plain per-CPU add followed by an
 * mfence, which drains the store buffer — the price of making each update globally visible
 * before going on, without a lock. */
#define MFENCE_ADD(p) __asm__ volatile("addq $1, %0\n\tmfence" : "+m"((p)->lo) : : "memory")
COUNTER_BENCH(mfence_add, MFENCE_ADD)

#else /* Portable spellings (aarch64 …): C11-model relaxed atomics through GCC's __atomic
       * builtins, so the counter stays a plain uint64_t that verify reads. On aarch64 GCC ≥ 10
       * compiles them to calls of libgcc's outline atomics (-moutline-atomics is the
       * default), which use LSE ldadd/cas when the CPU has them and ldxr/stxr loops
       * otherwise (docs/references.md#aarch64-atomics-postgresql-2021); -march=armv8.1-a or
       * later inlines the LSE form. */

/* Evans 2013: the plain per-CPU add. volatile for the reason Evans gives: it keeps the
 * counter in memory, one load-add-store per increment, as for a per-CPU variable. */
#define PLAIN_ADD(p)                                                           \
    do {                                                                       \
        volatile uint64_t *lo = &(p)->lo;                                      \
        *lo = *lo + 1;                                                         \
    } while (0)
COUNTER_BENCH(plain_add, PLAIN_ADD)

/* Evans 2013: the atomic add (x86's lock add): LSE stadd/ldadd or an ldxr/add/stxr loop. */
#define LOCK_ADD(p) __atomic_fetch_add(&(p)->lo, 1, __ATOMIC_RELAXED)
COUNTER_BENCH(lock_add, LOCK_ADD)

/* Evans 2013: load, compare-and-swap, retry (LSE cas, or ldxr/stxr). */
#define CMPXCHG_LOOP(p)                                                                                      \
    do {                                                                                                     \
        uint64_t old = __atomic_load_n(&(p)->lo, __ATOMIC_RELAXED);                                          \
        while (!__atomic_compare_exchange_n(&(p)->lo, &old, old + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
            ;                                                                                                \
    } while (0)
COUNTER_BENCH(cmpxchg_loop, CMPXCHG_LOOP)

/* Evans 2013's mfence variant: a plain add then a full barrier (dmb ish on aarch64). Named
 * fence_add, not mfence_add, because it is not the x86 instruction. */
#define FENCE_ADD(p)                                                           \
    do {                                                                       \
        PLAIN_ADD(p);                                                          \
        __atomic_thread_fence(__ATOMIC_SEQ_CST);                               \
    } while (0)
COUNTER_BENCH(fence_add, FENCE_ADD)
#endif

/* A user-space stand-in that is NOT comparable with Evans's 7–13-cycle critical sections
 * or cli/sti: blocking every signal around the add, so no handler can run in the middle of
 * the update. Two rt_sigprocmask system calls per increment (~1,000+ cycles): it measures
 * what the kernel's cheap primitives save, not what they cost. */
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

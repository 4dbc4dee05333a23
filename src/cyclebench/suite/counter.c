/* counter/ — the counter_u64_add() implementations of seed 003 (Evans ↔ Belousov, 2013)
 * that user space can run. Their cycle counts there (Athlon64): plain add ~7, cmpxchg8b ~20,
 * lock add ~31, mfence ~35, critical section 7–13. Each body does exactly cb_iters(s)
 * increments of one 64-bit counter, and verify checks the counter equals every increment
 * ever made (cb_total_iters), as the seed's "N = TSC frequency" loop was checked.
 * Consecutive increments form a dependency chain through memory (store → load
 * forwarding), as repeated increments of one per-CPU counter do. */
#include <signal.h>
#include <stdio.h>

#include <cyclebench.h>

typedef struct {
    uint64_t lo, hi; /* hi: the carry of the 128-bit cmpxchg16b counter */
} __attribute__((aligned(16))) counter_t;

CB_GROUP_SETUP(counter) { /* 64-byte aligned, zeroed, alone on its cache line */
    cb_set_user(s, cb_buffer(s, sizeof(counter_t), 64, 0));
}

CB_GROUP_VERIFY(counter) {
    counter_t *c = cb_user(s);
    if (c->lo == cb_total_iters(s) && c->hi == 0) return 1;
    char msg[128];
    snprintf(msg, sizeof msg, "counter is %llu:%llu after %llu increments", (unsigned long long)c->hi,
             (unsigned long long)c->lo, (unsigned long long)cb_total_iters(s));
    cb_fail(s, msg);
    return 0;
}

#if defined(__x86_64__)
/* "+m": the add is a read-modify-write of memory, like the per-CPU `addq $1,%gs:(%rdi)`. */
CB_BENCH(counter, plain_add) { /* not atomic: correct only per CPU (seed: ~7 cycles) */
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("addq $1, %0" : "+m"(c->lo));
}

CB_BENCH(counter, lock_add) { /* atomic RMW (seed: ~31 cycles with the lock prefix) */
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("lock addq $1, %0" : "+m"(c->lo));
}

CB_BENCH(counter, lock_xadd) { /* atomic RMW that also returns the old value */
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t one = 1;
        __asm__ volatile("lock xaddq %0, %1" : "+r"(one), "+m"(c->lo));
    }
}

CB_BENCH(counter, cmpxchg_loop) { /* load, lock cmpxchg, retry on failure (never fails uncontended) */
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

/* FreeBSD i386 updated its 64-bit per-CPU counters with an *unlocked* cmpxchg8b (the seed's
 * ~20 cycles): atomic against interrupts on the same CPU, not against other CPUs. On
 * x86-64 the same idea needs a 128-bit counter and cmpxchg16b. */
CB_BENCH(counter, cmpxchg16b) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        __asm__ volatile("movq (%[p]), %%rax\n\t"
                         "movq 8(%[p]), %%rdx\n"
                         "1:\tmovq %%rax, %%rbx\n\t"
                         "movq %%rdx, %%rcx\n\t"
                         "addq $1, %%rbx\n\t"
                         "adcq $0, %%rcx\n\t"
                         "cmpxchg16b (%[p])\n\t"
                         "jne 1b"
                         :
                         : [p] "r"(c)
                         : "rax", "rbx", "rcx", "rdx", "cc", "memory");
    }
}
CB_REQUIRE(counter, cmpxchg16b, "cx16")

CB_BENCH(counter, mfence_add) { /* plain add made globally visible before going on (seed: ~35) */
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("addq $1, %0\n\tmfence" : "+m"(c->lo) : : "memory");
}

#else /* portable spellings for other architectures (aarch64: ldxr/stxr or LSE by -march) */

CB_BENCH(counter, plain_add) {
    volatile uint64_t *lo = &((counter_t *)cb_user(s))->lo;
    for (uint64_t i = 0; i < cb_iters(s); i++) *lo = *lo + 1;
}

CB_BENCH(counter, lock_add) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) __atomic_fetch_add(&c->lo, 1, __ATOMIC_RELAXED);
}

CB_BENCH(counter, cmpxchg_loop) {
    counter_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t old = __atomic_load_n(&c->lo, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&c->lo, &old, old + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
    }
}

CB_BENCH(counter, fence_add) { /* add then a full barrier: the mfence analogue */
    volatile uint64_t *lo = &((counter_t *)cb_user(s))->lo;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        *lo = *lo + 1;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
}
#endif

/* The critical section of the seed (7–13 cycles in the kernel) cannot be entered from user
 * space; blocking all signals around the add is its user-space stand-in: the add cannot
 * be interrupted by a handler. Two system calls per increment. */
CB_BENCH(counter, sigprocmask) {
    counter_t *c = cb_user(s);
    sigset_t all, old;
    sigfillset(&all);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        sigprocmask(SIG_BLOCK, &all, &old);
        __atomic_store_n(&c->lo, __atomic_load_n(&c->lo, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
}

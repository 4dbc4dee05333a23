/* contend/ — shared-memory contention, for the scaling mode (`cyclebench scale contend`).
 *
 * Each body does cb_iters(s) operations; run by N tasks at once (scale.c), the throughput
 * curves show what sharing costs:
 *   - will-it-scale (docs/references.md#getpid-copy-freebsd-2018): getppid, the syscall loop
 *     every task can run in parallel — the control that should scale perfectly;
 *   - Farina 2021, aarch64 atomics (docs/references.md#aarch64-atomics-postgresql-2021): one
 *     shared atomic (lock xadd / a CAS loop, `ldaxr/stlxr` vs `casal` on arm64) or one lock —
 *     throughput that stops growing, then collapses, with more clients;
 *   - Evans 2013, counter_u64_add (docs/references.md#counter-u64-add-freebsd-2013): per-CPU
 *     counters — each writer its own counter, padded apart (scales), versus adjacent 8-byte
 *     slots of one line (false sharing: the line ping-pongs, no data shared).
 *
 * The shared objects live in one MAP_SHARED|MAP_ANONYMOUS region mapped by a constructor, so
 * they are shared alike by threads and by the processes scale.c forks (fork happens after
 * the constructors ran). Every object is in its own 256-byte block (scale.c says why 256).
 * Outside the scaling mode cb_task(s) is 0: the bodies then measure the uncontended cost.
 *
 * Verify: each task remembers in its setup where its counter stood, and checks at the end
 * that its own increments all arrived (per-task counters: exactly; shared counters: at least
 * as many, since the other tasks add to them too).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cyclebench.h>

#define BLOCK 256
#define MAX_TASKS 1024 /* scale.c's CB_SCALE_MAX_TASKS; more tasks wrap around (still correct) */

typedef struct {
    uint64_t v;
} __attribute__((aligned(BLOCK))) padded_u64;

typedef struct {
    padded_u64 xadd, cas, locked, spin_count; /* the shared counters, one block each */
    struct {
        int lock;
    } __attribute__((aligned(BLOCK))) spin;
    struct {
        pthread_mutex_t m;
    } __attribute__((aligned(BLOCK))) mutex;
    padded_u64 padded[MAX_TASKS];                               /* per task, 256 bytes apart */
    uint64_t unpadded[MAX_TASKS] __attribute__((aligned(BLOCK))); /* per task, 8 bytes apart */
} shared_t;

static shared_t *sh;
static const char *init_error;

__attribute__((constructor)) static void contend_init(void) {
    void *p = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        init_error = "mmap of the shared region failed";
        return;
    }
    sh = p;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    /* PTHREAD_PROCESS_SHARED: the same mutex must work between forked processes */
    if (pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) != 0 || pthread_mutex_init(&sh->mutex.m, &a) != 0)
        init_error = "cannot create a process-shared pthread mutex";
    pthread_mutexattr_destroy(&a);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause(); /* spin-wait hint: yields to the SMT sibling, no memory-order flush on exit */
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#else
    __asm__ volatile("" ::: "memory");
#endif
}

/* The counter a benchmark works on, for this task. */
static uint64_t *counter_of(cb_state *s) {
    const char *n = s->name + sizeof "contend/" - 1;
    int t = cb_task(s) % MAX_TASKS;
    if (!strcmp(n, "lock_xadd")) return &sh->xadd.v;
    if (!strcmp(n, "cas_loop")) return &sh->cas.v;
    if (!strcmp(n, "mutex")) return &sh->locked.v;
    if (!strcmp(n, "spinlock")) return &sh->spin_count.v;
    if (!strcmp(n, "padded")) return &sh->padded[t].v;
    if (!strcmp(n, "unpadded")) return &sh->unpadded[t];
    return NULL;
}

typedef struct {
    uint64_t *counter;
    uint64_t start;  /* its value when this task was set up */
    int exact;       /* a per-task counter: nobody else adds to it */
} task_ctx;

CB_GROUP_SETUP(contend) {
    if (init_error) {
        cb_fail(s, init_error);
        return;
    }
    task_ctx *c = cb_buffer(s, sizeof *c, 64, 0);
    if (!c) return;
    c->counter = counter_of(s);
    c->start = c->counter ? __atomic_load_n(c->counter, __ATOMIC_RELAXED) : 0;
    int t = cb_task(s) % MAX_TASKS;
    c->exact = c->counter == &sh->padded[t].v || c->counter == &sh->unpadded[t];
    cb_set_user(s, c);
}

CB_GROUP_VERIFY(contend) {
    task_ctx *c = cb_user(s);
    if (!c->counter) return 1;
    uint64_t got = __atomic_load_n(c->counter, __ATOMIC_RELAXED) - c->start;
    /* tasks wrapping around MAX_TASKS share a per-task slot: then only "at least" holds */
    if ((c->exact && cb_task(s) < MAX_TASKS) ? got == cb_total_iters(s) : got >= cb_total_iters(s)) return 1;
    char msg[160];
    snprintf(msg, sizeof msg, "counter grew by %llu during %llu increments of task %d", (unsigned long long)got,
             (unsigned long long)cb_total_iters(s), cb_task(s));
    cb_fail(s, msg);
    return 0;
}

/* Farina 2021 / Evans 2013: one shared counter, atomic fetch-and-add (x86 `lock xadd`; arm64
 * `ldaddal` with LSE, else an `ldaxr/stlxr` retry loop). The result is used, so it is xadd, not
 * `lock add`. */
CB_BENCH(contend, lock_xadd) {
    uint64_t *c = &sh->xadd.v;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t old = __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST);
        cb_do_not_optimize(old);
    }
}

/* Farina 2021: the compare-and-swap loop (`lock cmpxchg`; arm64 `casal` or `ldaxr/stlxr`): under
 * contention the load and the CAS are separated by other writers, and it retries. */
CB_BENCH(contend, cas_loop) {
    uint64_t *c = &sh->cas.v;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(c, &old, old + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
        }
    }
}

/* Evans 2013: per-CPU counters done right — each task its own counter, 256 bytes from the next.
 * A plain load/add/store per increment (relaxed atomics so the compiler keeps every one, as
 * the kernel's `addq $1, %gs:…` does): no lock, no sharing, should scale linearly. */
CB_BENCH(contend, padded) {
    uint64_t *c = &sh->padded[cb_task(s) % MAX_TASKS].v;
    for (uint64_t i = 0; i < cb_iters(s); i++)
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* The same per-task counters in adjacent 8-byte slots: no datum is shared, but the cache line
 * is — every store needs the line exclusive, so it ping-pongs between the cores (false sharing). */
CB_BENCH(contend, unpadded) {
    uint64_t *c = &sh->unpadded[cb_task(s) % MAX_TASKS];
    for (uint64_t i = 0; i < cb_iters(s); i++)
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* Farina 2021's LWLock (PostgreSQL's lock) in miniature: a pthread mutex (process-shared)
 * around a plain increment. */
CB_BENCH(contend, mutex) {
    uint64_t *c = &sh->locked.v;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        pthread_mutex_lock(&sh->mutex.m);
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&sh->mutex.m);
    }
}

/* A test-and-test-and-set spinlock: spin reading (the line stays shared) with a pause/yield
 * hint, and only try the exchange when the lock looks free. Never sleeps: with more tasks
 * than CPUs a preempted holder makes the others spin out their time slices. */
CB_BENCH(contend, spinlock) {
    int *l = &sh->spin.lock;
    uint64_t *c = &sh->spin_count.v;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
            while (__atomic_load_n(l, __ATOMIC_RELAXED)) cpu_relax();
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        __atomic_store_n(l, 0, __ATOMIC_RELEASE);
    }
}

/* will-it-scale's getppid loop, through syscall(2) (never cached by libc). Nothing
 * shared in user space; in the kernel, the parent pointer is read under RCU: should scale. */
CB_BENCH(contend, getppid) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        long r = syscall(SYS_getppid);
        cb_do_not_optimize(r);
    }
}

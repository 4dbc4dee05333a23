/* alloc/ — allocator cost per operation (Evans, "Memory allocation performance", 2008,
 * docs/references.md#malloc-profiling-freebsd-2008: measured with TSC-based profiling), in the
 * patterns where allocators differ: one size class at a time,
 * many live objects freed in random order, realloc growth, free from another thread, and
 * calloc of large blocks. `--allocator glibc,jemalloc,mimalloc,tcmalloc` links each allocator
 * into its own runner (the same file, one binary each). For glibc's malloc the sizes cross its thresholds:
 * tcache (≤ 1032 B), the bins, and mmap (≥ 128 KiB by default, where a pair can be an
 * mmap+munmap — until glibc's dynamic threshold rises after the first free). The pointer
 * escapes through cb_do_not_optimize, otherwise GCC may delete a malloc/free pair whose
 * memory is never used. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Evans 2008: one malloc(n) and its free(p) per operation. The NULL count is kept in a
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

/* Evans 2008: calloc must hand back zeroed memory, so its cost grows with the size where
 * malloc's does not. Only a chunk fresh from mmap skips the clearing (the kernel zeroed it);
 * once the dynamic mmap threshold has risen above n, every calloc(n) comes from the heap
 * and clears all n bytes. */
CB_BENCH_PARAMS(alloc, calloc_free, ALLOC_SIZES, 4194304) {
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

/* ---- many live objects: a pool of N blocks, one freed at a random place and replaced per op ----
 * An allocator's free lists, size-class runs and caches see a heap that is fragmented the way a
 * long-running program's is, not the LIFO reuse of malloc_free. The victims and the new sizes
 * (16..512 B, the small classes every allocator has) come from a table drawn in set-up, so the
 * body does no random-number work. */
#define POOL_TABLE 4096 /* victims and sizes cycle through this many draws (power of two) */

struct pool {
    void **live;
    uint32_t *victim;
    uint16_t *size;
    uint64_t n, nulls;
};

static uint64_t xorshift(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

CB_SETUP(alloc, pool_random) {
    struct pool *p = cb_buffer(s, sizeof *p, 64, 0);
    uint64_t n = (uint64_t)cb_param(s), x = 0x9e3779b97f4a7c15u;
    if (!p) return;
    p->n = n;
    p->live = malloc(n * sizeof *p->live);
    p->victim = cb_buffer(s, POOL_TABLE * sizeof *p->victim, 64, 0);
    p->size = cb_buffer(s, POOL_TABLE * sizeof *p->size, 64, 0);
    if (!p->live || !p->victim || !p->size) {
        cb_fail(s, "pool_random: cannot allocate its tables");
        return;
    }
    for (uint64_t i = 0; i < POOL_TABLE; i++) {
        p->victim[i] = (uint32_t)(xorshift(&x) % n);
        p->size[i] = (uint16_t)(16 + xorshift(&x) % 497);
    }
    for (uint64_t i = 0; i < n; i++) p->live[i] = malloc(p->size[i % POOL_TABLE]);
    cb_set_user(s, p);
}

CB_BENCH_PARAMS(alloc, pool_random, 1000, 100000) {
    struct pool *p = cb_user(s);
    uint64_t k = cb_total_iters(s), nulls = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++, k++) {
        uint32_t v = p->victim[k & (POOL_TABLE - 1)];
        free(p->live[v]);
        void *q = malloc(p->size[(k * 7) & (POOL_TABLE - 1)]);
        cb_do_not_optimize(q);
        nulls += q == NULL;
        p->live[v] = q;
    }
    p->nulls += nulls;
}

CB_VERIFY(alloc, pool_random) {
    const struct pool *p = cb_user(s);
    if (p->nulls == 0) return 1;
    cb_fail(s, "malloc returned NULL");
    return 0;
}

CB_TEARDOWN(alloc, pool_random) {
    struct pool *p = cb_user(s);
    if (!p || !p->live) return;
    for (uint64_t i = 0; i < p->n; i++) free(p->live[i]);
    free(p->live);
}

/* ---- realloc growth: one realloc per op, a block grown 64 B at a time up to N bytes, then freed
 * and started again — a vector's or a string builder's growth without the doubling. In-place
 * growth (the next chunk is free, or the block sits in an mmap that mremap can move) is where
 * allocators differ most. Verified: the first and last bytes written survive every move. */
struct grow {
    unsigned char *p;
    uint64_t len, lost, nulls;
};

CB_SETUP(alloc, realloc_grow) {
    struct grow *g = cb_buffer(s, sizeof *g, 64, 0);
    if (!g) return;
    cb_set_user(s, g);
}

CB_BENCH_PARAMS(alloc, realloc_grow, 4096, 1048576) {
    struct grow *g = cb_user(s);
    uint64_t cap = (uint64_t)cb_param(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        if (g->len + 64 > cap) {
            free(g->p);
            g->p = NULL;
            g->len = 0;
        }
        unsigned char *q = realloc(g->p, g->len + 64);
        if (!q) {
            g->nulls++;
            continue;
        }
        g->lost += g->len && (q[0] != 0xA5 || q[g->len - 1] != (unsigned char)g->len);
        g->p = q;
        g->len += 64;
        q[0] = 0xA5;
        q[g->len - 1] = (unsigned char)g->len;
    }
}

CB_VERIFY(alloc, realloc_grow) {
    const struct grow *g = cb_user(s);
    if (g->nulls) cb_fail(s, "realloc returned NULL");
    else if (g->lost) cb_fail(s, "realloc lost the block's contents");
    return !g->nulls && !g->lost;
}

CB_TEARDOWN(alloc, realloc_grow) {
    struct grow *g = cb_user(s);
    if (g) free(g->p);
}

/* ---- free from another thread: malloc here, free on a consumer thread (producer/consumer) ----
 * Memory freed by a thread that did not allocate it goes back through the allocator's remote
 * path (glibc: the arena's lock; jemalloc: the owner's bin; mimalloc: the page's thread-free
 * list; tcmalloc: the consumer's thread cache, then the central lists). One op = one malloc
 * here plus one free there, the pointers passed through a single-producer single-consumer ring.
 * The consumer runs on another CPU when there is one (on the same CPU the two would only take
 * turns, and the remote free would never be concurrent); the producer yields when the ring is
 * full. Verified: every block produced was freed. In `scale`, each task has its own consumer. */
#define RING 1024 /* slots (power of two) */

struct ring {
    _Alignas(64) _Atomic uint64_t head; /* producer's count */
    _Alignas(64) _Atomic uint64_t tail; /* consumer's count */
    _Alignas(64) void *slot[RING];
    _Atomic int stop;
    uint64_t nulls;
    pthread_t consumer;
    int started;
};

static void *consume(void *arg) {
    struct ring *r = arg;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
        if (t == h) {
            if (atomic_load_explicit(&r->stop, memory_order_acquire) &&
                t == atomic_load_explicit(&r->head, memory_order_acquire))
                return NULL;
            sched_yield();
            continue;
        }
        for (; t != h; t++) free(r->slot[t & (RING - 1)]);
        atomic_store_explicit(&r->tail, t, memory_order_release);
    }
}

/* The consumer's CPU: the next online CPU after the producer's, when there is one. */
static void place_consumer(pthread_attr_t *attr) {
    int me = sched_getcpu();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (me < 0 || n < 2) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((me + 1) % n, &set);
    pthread_attr_setaffinity_np(attr, sizeof set, &set);
}

CB_SETUP(alloc, remote_free) {
    struct ring *r = cb_buffer(s, sizeof *r, 64, 0);
    if (!r) return;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    place_consumer(&attr);
    int rc = pthread_create(&r->consumer, &attr, consume, r);
    if (rc) { /* the CPU may be outside this task's cpuset: then anywhere */
        pthread_attr_destroy(&attr);
        pthread_attr_init(&attr);
        rc = pthread_create(&r->consumer, &attr, consume, r);
    }
    pthread_attr_destroy(&attr);
    if (rc) {
        cb_fail(s, "remote_free: cannot start the consumer thread");
        return;
    }
    r->started = 1;
    cb_set_user(s, r);
}

CB_BENCH_PARAMS(alloc, remote_free, 64, 4096) {
    struct ring *r = cb_user(s);
    size_t n = (size_t)cb_param(s);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (uint64_t i = 0; i < cb_iters(s); i++, h++) {
        while (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= RING) sched_yield();
        void *p = malloc(n);
        r->nulls += p == NULL;
        r->slot[h & (RING - 1)] = p;
        atomic_store_explicit(&r->head, h + 1, memory_order_release);
    }
}

static void stop_consumer(struct ring *r) {
    if (!r || !r->started) return;
    atomic_store_explicit(&r->stop, 1, memory_order_release);
    pthread_join(r->consumer, NULL);
    r->started = 0;
}

CB_VERIFY(alloc, remote_free) {
    struct ring *r = cb_user(s);
    stop_consumer(r); /* drains the ring first */
    uint64_t made = atomic_load(&r->head), freed = atomic_load(&r->tail);
    if (r->nulls) cb_fail(s, "malloc returned NULL");
    else if (made != freed || made != cb_total_iters(s)) cb_fail(s, "remote_free: not every block was freed");
    return !r->nulls && made == freed && made == cb_total_iters(s);
}

CB_TEARDOWN(alloc, remote_free) {
    stop_consumer(cb_user(s));
}

/* cyclebench.h — the public C API of cyclebench benchmarks.
 *
 * A benchmark file is plain C that includes this header; it needs no main().
 * Benchmarks register themselves from constructors, so the built-in suite and a
 * user's file are the same thing to the engine (the will-it-scale model: one tiny
 * file, the harness does the rest).
 *
 *     #include <cyclebench.h>
 *
 *     CB_BENCH(syscall, getpid) {                 // registered as "syscall/getpid"
 *         for (uint64_t i = 0; i < cb_iters(s); i++)
 *             cb_do_not_optimize(syscall(SYS_getpid));
 *     }
 *
 *     CB_BENCH_PARAMS(copy, memcpy, 48, 4096) {  // one result per parameter
 *         struct bufs *b = cb_user(s);            // made by the setup hook
 *         for (uint64_t i = 0; i < cb_iters(s); i++) { memcpy(b->dst, b->src, cb_param(s)); cb_clobber(); }
 *     }
 *
 * Contract of a body: do exactly cb_iters(s) operations.  The engine times whole
 * batches over a ladder of batch sizes and fits time = fixed + per_op * iters, so the
 * call, the timer and any per-batch set-up land in the fixed part, not in the per-op
 * cost.  Set-up, teardown and verification run outside the timed region.
 *
 * Hooks (CB_SETUP, CB_TEARDOWN, CB_VERIFY, CB_REQUIRE) exist per benchmark and per
 * group (CB_GROUP_SETUP(copy) applies to every copy/ benchmark without its own).
 *
 * Documented in docs/c-api.md; stable: spellings here are not renamed.
 */
#ifndef CYCLEBENCH_H
#define CYCLEBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CB_API_VERSION 1
#define CB_MAX_BUFFERS 16

typedef struct cb_state {
    /* Read with the accessors below; the fields are public only so they inline. */
    uint64_t iters;        /* operations the current batch must perform */
    int64_t param;         /* this run's parameter (0 when the benchmark has none) */
    uint64_t total_iters;  /* every operation performed since setup: warm-up and sizing included */
    void *user;            /* set by setup hooks: cb_set_user() */
    const char *name;      /* "group/name" */
    /* engine-private */
    int skip_;
    char reason_[256];
    void *buffers_[CB_MAX_BUFFERS];
    int nbuffers_;
    int task;              /* scaling mode (scale.c): this task's index 0..N-1; 0 outside it */
} cb_state;

typedef void (*cb_fn)(cb_state *s);
typedef int (*cb_verify_fn)(cb_state *s);

/* The accessors carry no probe: gcc's -finstrument-functions instruments inlined functions too
 * (gcc manual, "Program Instrumentation Options"), and `cyclebench profile BENCH` builds the body
 * so; an instrumented cb_iters put two probe events in every iteration of plain_add's loop. */
#define CB_ACCESSOR static inline __attribute__((no_instrument_function))

CB_ACCESSOR uint64_t cb_iters(const cb_state *s) { return s->iters; }
CB_ACCESSOR int64_t cb_param(const cb_state *s) { return s->param; }
CB_ACCESSOR uint64_t cb_total_iters(const cb_state *s) { return s->total_iters; }
CB_ACCESSOR void *cb_user(const cb_state *s) { return s->user; }
CB_ACCESSOR void cb_set_user(cb_state *s, void *p) { s->user = p; }
/* Scaling mode runs N copies of a benchmark at once (threads or processes): the index of
 * this copy, 0..N-1, e.g. to pick a per-task slot. 0 in every other mode. */
CB_ACCESSOR int cb_task(const cb_state *s) { return s->task; }

/* Memory owned by the engine for this (benchmark, parameter): `size` bytes starting
 * `offset` bytes past an `align`-byte boundary (align: power of two, 0 → 64), every
 * page touched (written) so no first-touch page fault lands in a timed batch.  Freed
 * after teardown.  Returns NULL and records a reason when it cannot allocate. */
void *cb_buffer(cb_state *s, size_t size, size_t align, size_t offset);

/* From a setup hook: do not run this benchmark here, with a one-line reason. */
void cb_skip(cb_state *s, const char *reason);
/* From a setup or verify hook: mark the result invalid with a one-line reason. */
void cb_fail(cb_state *s, const char *reason);
/* CPU feature test by name ("sse2", "avx2", "avx512f", "erms", "fsrm", "cx16",
 * "rdtscp", "invariant_tsc", "lse", "x86_64", "aarch64"); -1 for an unknown name. */
int cb_cpu_has(const char *feature);

/* Keep the compiler honest.
 * cb_do_not_optimize(x): x is treated as used (its computation cannot be dropped).
 * cb_clobber():          all memory may have been read and written (stores are kept).
 * cb_opaque(x):          x may have changed (no constant folding across it), no memory clobber.
 * The "r,m" form follows google/benchmark's DoNotOptimize. */
#define cb_do_not_optimize(x) do { __typeof__(x) cb_v_ = (x); __asm__ volatile("" : : "r,m"(cb_v_) : "memory"); } while (0)
#define cb_clobber() __asm__ volatile("" : : : "memory")
#define cb_opaque(x) __asm__ volatile("" : "+r"(x))

/* ---- registration (implementation detail of the macros below) ---- */
enum cb_hook_kind { CB_HOOK_SETUP, CB_HOOK_TEARDOWN, CB_HOOK_VERIFY, CB_HOOK_REQUIRE };

typedef struct cb_bench {
    const char *group, *name;
    cb_fn run;
    const int64_t *params;
    int nparams;
    const char *file;
    int line;
} cb_bench;

void cb_register_(const cb_bench *b);
void cb_register_hook_(const char *group, const char *name, int kind, void (*fn)(void), const char *arg);

/* Hooks and bodies need not use `s`; -Wunused-parameter must not fire on them. */
#define CB_UNUSED_ __attribute__((unused))
#define CB_CAT_(a, b) a##b
#define CB_CAT(a, b) CB_CAT_(a, b)

#define CB_DEFINE_(group, name, params_, nparams_)                                              \
    static void cb_body_##group##_##name(cb_state *s);                                          \
    static const cb_bench cb_bench_##group##_##name = {#group, #name, cb_body_##group##_##name, \
                                                      params_, nparams_, __FILE__, __LINE__};   \
    __attribute__((constructor)) static void cb_reg_##group##_##name(void) {                   \
        cb_register_(&cb_bench_##group##_##name);                                               \
    }                                                                                           \
    static void cb_body_##group##_##name(cb_state *s CB_UNUSED_)

/* A benchmark without parameters: "group/name". */
#define CB_BENCH(group, name) CB_DEFINE_(group, name, NULL, 0)

/* A benchmark run once per integer parameter (sizes, counts): cb_param(s). */
#define CB_BENCH_PARAMS(group, name, ...)                                                  \
    static const int64_t cb_params_##group##_##name[] = {__VA_ARGS__};                     \
    CB_DEFINE_(group, name, cb_params_##group##_##name,                                    \
               (int)(sizeof(cb_params_##group##_##name) / sizeof(cb_params_##group##_##name[0])))

#define CB_HOOK_(kind, tag, group, name, ret, nm)                                            \
    static ret cb_##tag##_##group##_##name(cb_state *s);                                     \
    __attribute__((constructor)) static void cb_reg_##tag##_##group##_##name(void) {         \
        cb_register_hook_(#group, nm, kind, (void (*)(void))cb_##tag##_##group##_##name, 0); \
    }                                                                                        \
    static ret cb_##tag##_##group##_##name(cb_state *s CB_UNUSED_)

/* Per-benchmark hooks; each is a function body with `cb_state *s` in scope. */
#define CB_SETUP(group, name) CB_HOOK_(CB_HOOK_SETUP, setup, group, name, void, #name)
#define CB_TEARDOWN(group, name) CB_HOOK_(CB_HOOK_TEARDOWN, teardown, group, name, void, #name)
/* Runs after timing; return non-zero when the work was done right (as in Evans's counter_u64_add
 * loop, docs/references.md#counter-u64-add-freebsd-2013: N adds must give N). */
#define CB_VERIFY(group, name) CB_HOOK_(CB_HOOK_VERIFY, verify, group, name, int, #name)

/* Group-wide hooks: used by every benchmark of the group that has none of its own. */
#define CB_GROUP_SETUP(group) CB_HOOK_(CB_HOOK_SETUP, gsetup, group, _all_, void, NULL)
#define CB_GROUP_TEARDOWN(group) CB_HOOK_(CB_HOOK_TEARDOWN, gteardown, group, _all_, void, NULL)
#define CB_GROUP_VERIFY(group) CB_HOOK_(CB_HOOK_VERIFY, gverify, group, _all_, int, NULL)

/* CPU-feature gate: comma-separated names of cb_cpu_has(); the benchmark is skipped
 * with a reason where one is missing. */
#define CB_REQUIRE(group, name, features)                                                 \
    __attribute__((constructor)) static void cb_reg_require_##group##_##name(void) {      \
        cb_register_hook_(#group, #name, CB_HOOK_REQUIRE, 0, features);                   \
    }

#ifdef __cplusplus
}
#endif
#endif /* CYCLEBENCH_H */

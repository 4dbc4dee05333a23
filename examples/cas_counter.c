/* examples/cas_counter.c — PostgreSQL on aarch64, 2021
 * (docs/references.md#aarch64-atomics-postgresql-2021): a counter bumped with a
 * compare-and-swap loop, as PostgreSQL's pg_atomic_fetch_add does. How the CAS is compiled
 * decides how it scales: an ldaxr/stlxr exclusive-monitor loop (ARMv8.0) collapses under
 * contention, an LSE `casal` (ARMv8.1+) does not, and GCC ≥ 10's default outline atomics
 * call a helper (__aarch64_cas8_acq_rel) that picks one at run time.
 *
 *     cyclebench variants examples/cas_counter.c --target aarch64 --disasm \
 *         --flags -O2 --flags "-O2 -march=armv8.2-a" --flags "-O2 -mno-outline-atomics"
 *
 * shows the three code shapes (cross-built, run under qemu for correctness only). */
#include <stdlib.h>

#include <cyclebench.h>

CB_SETUP(atomic, cas_counter) { cb_set_user(s, cb_buffer(s, sizeof(uint64_t), 64, 0)); }

CB_BENCH(atomic, cas_counter) {
    uint64_t *c = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(c, &old, old + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        }
    }
}

/* N increments must give N (Evans's check, docs/references.md#counter-u64-add-freebsd-2013):
 * a miscompiled CAS fails here, not silently. */
CB_VERIFY(atomic, cas_counter) { return *(uint64_t *)cb_user(s) == cb_total_iters(s); }

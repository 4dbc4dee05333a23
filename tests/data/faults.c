/* Benchmarks that misbehave on purpose: the run must survive each and store the rest. */
#include <signal.h>
#include <stdio.h>
#include <cyclebench.h>

CB_BENCH(faults, ok) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(faults, prints) { /* output on stdout must not corrupt the runner protocol */
    printf("{\"type\":\"result\",\"bogus\":true}\n");
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(faults, segv) {
    volatile int *p = (volatile int *)0;
    if (cb_iters(s)) *p = 1;
}

CB_BENCH(faults, hang) {
    for (;;) cb_clobber();
}

CB_BENCH(faults, verify_fails) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_VERIFY(faults, verify_fails) { return 0; }

CB_BENCH(faults, setup_skips) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_SETUP(faults, setup_skips) { cb_skip(s, "not applicable here"); }

CB_BENCH(faults, gated) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
#if defined(__x86_64__)
CB_REQUIRE(faults, gated, "sse2,lse") /* lse is an Arm feature: absent on x86 */
#else
CB_REQUIRE(faults, gated, "avx2")
#endif

CB_BENCH(faults, unknown_feature) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_REQUIRE(faults, unknown_feature, "no_such_feature_xyz")

CB_BENCH(faults, abort_in_body) {
    if (cb_iters(s)) raise(SIGABRT);
}

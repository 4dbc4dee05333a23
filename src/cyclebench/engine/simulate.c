/* simulate.c — the benchmark under valgrind's callgrind: exact, simulated counts.
 *
 * Run by `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no ... runner --sim`.
 * Instrumentation starts after set-up (the simulated caches then warm up with the body
 * itself), collection is switched on only around two batches of n1 and n2 operations, and
 * each batch's counts are dumped under its own label; the analysis takes
 * (count(n2) − count(n1)) / (n2 − n1), so every fixed cost — the call, the loop set-up, the
 * client requests themselves — cancels exactly (docs/method.md §5c). Natively the client
 * requests are no-ops: the mode then only runs the body.
 */
#define _GNU_SOURCE
#include "simulate.h"

#include <string.h>

#include "json.h"
#include "registry.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CB_HAVE_CALLGRIND 1
#endif
#endif
#ifndef CB_HAVE_CALLGRIND
#define CB_HAVE_CALLGRIND 0
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(x) ((void)(x))
#endif

static void emit(FILE *out, const cb_request *r, const char *type, const char *reason, uint64_t n1, uint64_t n2,
                 int verified) {
    fprintf(out, "{\"type\":\"%s\",\"bench\":", type);
    cb_json_str(out, r->name);
    if (r->has_param) fprintf(out, ",\"param\":%lld", (long long)r->param);
    else fputs(",\"param\":null", out);
    fprintf(out, ",\"n\":[%llu,%llu],\"labels\":[\"cb:n1\",\"cb:n2\"],\"callgrind_header\":%s,\"verified\":%s,"
            "\"reason\":",
            (unsigned long long)n1, (unsigned long long)n2, CB_HAVE_CALLGRIND ? "true" : "false",
            verified < 0 ? "null" : verified ? "true" : "false");
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

static void batch(const cb_bench *b, cb_state *s, uint64_t n) {
    s->iters = n;
    b->run(s);
    s->total_iters += n;
}

int cb_simulate(FILE *out, const cb_request *r, uint64_t n1) {
    const cb_bench *b = cb_find(r->name);
    cb_state s;
    memset(&s, 0, sizeof s);
    s.param = r->param;
    s.name = r->name;
    const cb_hook *req = cb_hook_for(b, CB_HOOK_REQUIRE);
    if (req && req->arg) {
        char missing[128], reason[200];
        int rc = cb_missing_feature(req->arg, missing, sizeof missing);
        if (rc) {
            snprintf(reason, sizeof reason, rc < 0 ? "%s" : "requires CPU feature '%s', absent here", missing);
            emit(out, r, rc < 0 ? "fail" : "skip", reason, 0, 0, -1);
            return 0;
        }
    }
    const cb_hook *setup = cb_hook_for(b, CB_HOOK_SETUP), *teardown = cb_hook_for(b, CB_HOOK_TEARDOWN);
    const cb_hook *verify = cb_hook_for(b, CB_HOOK_VERIFY);
    if (setup) ((cb_fn)setup->fn)(&s);
    if (s.skip_) {
        emit(out, r, s.skip_ == 1 ? "skip" : "fail", s.reason_, 0, 0, -1);
    } else {
        uint64_t n2 = 2 * n1;
        /* Every batch through the same instructions, the first a warm-up whose counts are zeroed
         * by the next: two call sites of their own (n1's, n2's) differed in their own fixed cost
         * (n2 reloaded after the dump: +2 Ir, +1 Dr, +1 I1 miss), which then read as +2/n1 Ir per
         * operation (303.2 for a body of 303 at n1 = 10). volatile: one loop, never unrolled. */
        const uint64_t sizes[3] = {n1, n1, n2};
        const char *const labels[3] = {NULL, "cb:n1", "cb:n2"};
        CALLGRIND_START_INSTRUMENTATION;
        for (volatile int k = 0; k < 3; k++) {
            CALLGRIND_ZERO_STATS;
            CALLGRIND_TOGGLE_COLLECT;
            batch(b, &s, sizes[k]);
            CALLGRIND_TOGGLE_COLLECT;
            if (labels[k]) CALLGRIND_DUMP_STATS_AT(labels[k]);
        }
        CALLGRIND_STOP_INSTRUMENTATION;
        int verified = -1;
        if (verify) {
            verified = ((cb_verify_fn)verify->fn)(&s) ? 1 : 0;
            if (!verified && !s.skip_) cb_fail(&s, "verify hook returned false");
        }
        emit(out, r, "sim", s.skip_ == 2 ? s.reason_ : NULL, n1, n2, verified);
    }
    if (teardown) ((cb_fn)teardown->fn)(&s);
    cb_free_buffers(&s);
    return 0;
}

/* runner.c — the cyclebench runner: lists, calibrates and measures benchmarks.
 *
 * Protocol: argv in, JSON lines out (one object per line on the original stdout;
 * fd 1 is pointed at stderr so a benchmark that prints cannot corrupt the stream).
 *   runner --list                      {"type":"bench",...} per benchmark
 *   runner --calibrate                 {"type":"calibration",...}: timer, its cost, TSC rate
 *   runner --features                  {"type":"features",...}: what the CB_REQUIRE gates see
 *   runner --run NAME [--param P] ...  {"type":"result"|"skip"|"fail"|"error",...}
 * Exit status: 0 when the line describes the outcome (even skip/fail), 2 on bad usage.
 *
 * How a number is made (DESIGN.md §4): the body is timed in whole batches of n
 * operations; n runs over a ladder k·n_base (k = 1..K, shuffled anew every round) so
 * the analysis can fit ticks = fixed + per_op·n and separate the per-op cost from the
 * fixed cost of the timer and the call (the "loop overhead" syscall_timing suffers from
 * in seed 000). n_base is sized so the smallest batch lasts at least --min-batch-ns and
 * the whole sampling lasts about --min-time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "json.h"
#include "registry.h"
#include "timer.h"

static FILE *out;
static int have_rdtscp = 1;

typedef struct options {
    const char *run;
    int64_t param;
    int has_param;
    int cpu;
    double min_time, max_time, warmup;
    uint64_t min_batch_ns;
    int repeat, ladder;
    uint64_t seed;
} options;

static void emit_error(const char *bench, const char *reason) {
    fputs("{\"type\":\"error\",\"bench\":", out);
    cb_json_str(out, bench);
    fputs(",\"reason\":", out);
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

static void emit_outcome(const char *type, const options *o, const char *reason) {
    fprintf(out, "{\"type\":\"%s\",\"bench\":", type);
    cb_json_str(out, o->run);
    if (o->has_param) fprintf(out, ",\"param\":%lld", (long long)o->param);
    else fputs(",\"param\":null", out);
    fputs(",\"reason\":", out);
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

/* ---- timer cost ---- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static inline uint64_t timer_stop(void) { return have_rdtscp ? cb_timer_stop() : cb_timer_stop_norscp(); }

/* Back-to-back start/stop pairs: the fixed cost every batch carries (seed 004 notes
 * that the cost of rdtsc itself differs between CPUs). */
static void timer_overhead(uint64_t *min, uint64_t *median) {
    enum { N = 1001 };
    static uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = cb_timer_start();
        uint64_t t1 = timer_stop();
        d[i] = t1 - t0;
    }
    qsort(d, N, sizeof d[0], cmp_u64);
    *min = d[0];
    *median = d[N / 2];
}

/* ---- calibration ---- */

static void calibrate(void) {
    uint64_t omin, omed;
    timer_overhead(&omin, &omed);
    double cpuid_hz = 0, base_mhz = 0;
    int invariant = -1;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    /* Leaf 0x15: TSC = crystal_hz * ebx / eax (Intel SDM vol. 3 §18.7.3). */
    if (__get_cpuid_max(0, NULL) >= 0x15) {
        __cpuid_count(0x15, 0, a, b, c, d);
        if (a && b && c) cpuid_hz = (double)c * b / a;
    }
    if (__get_cpuid_max(0, NULL) >= 0x16) {
        __cpuid_count(0x16, 0, a, b, c, d);
        base_mhz = a & 0xffff;
    }
    invariant = cb_cpu_has("invariant_tsc");
#endif
    /* The timer's rate measured against CLOCK_MONOTONIC_RAW over ~100 ms. */
    uint64_t n0 = cb_now_ns(), t0 = cb_timer_start();
    struct timespec req = {0, 100 * 1000 * 1000};
    while (nanosleep(&req, &req) == -1 && errno == EINTR) {
    }
    uint64_t t1 = cb_timer_start(), n1 = cb_now_ns();
    double measured = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
    double arch_hz = 0;
#if defined(__aarch64__)
    arch_hz = (double)cb_timer_hz();
#endif
    fprintf(out,
            "{\"type\":\"calibration\",\"timer\":\"%s\",\"unit\":\"%s\",\"rdtscp\":%s,"
            "\"invariant_tsc\":%d,\"cpuid_tsc_hz\":%.0f,\"cpuid_base_mhz\":%.0f,\"arch_timer_hz\":%.0f,"
            "\"measured_hz\":%.1f,\"measured_over_ns\":%llu,"
            "\"timer_overhead\":{\"min\":%llu,\"median\":%llu}}\n",
            CB_TIMER_NAME, CB_TIMER_UNIT, have_rdtscp ? "true" : "false", invariant, cpuid_hz, base_mhz,
            arch_hz, measured, (unsigned long long)(n1 - n0), (unsigned long long)omin,
            (unsigned long long)omed);
    fflush(out);
}

/* ---- CPU features, as the gates see them ---- */

static void features(void) {
    static const char *names[] = {"x86_64", "aarch64", "sse2", "sse4.2", "avx", "avx2", "avx512f", "bmi2",
                                  "erms", "fsrm", "cx16", "rdtscp", "invariant_tsc", "lse"};
    fputs("{\"type\":\"features\"", out);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) fprintf(out, ",\"%s\":%d", names[i], cb_cpu_has(names[i]));
    fputs("}\n", out);
    fflush(out);
}

/* ---- listing ---- */

static void list(void) {
    for (int i = 0; i < cb_nbenches(); i++) {
        const cb_bench *b = cb_bench_at(i);
        const cb_hook *req = cb_hook_for(b, CB_HOOK_REQUIRE);
        fputs("{\"type\":\"bench\",\"name\":", out);
        fprintf(out, "\"%s/%s\",\"group\":", b->group, b->name);
        cb_json_str(out, b->group);
        fputs(",\"params\":", out);
        if (b->nparams) {
            fputc('[', out);
            for (int j = 0; j < b->nparams; j++) fprintf(out, j ? ",%lld" : "%lld", (long long)b->params[j]);
            fputc(']', out);
        } else {
            fputs("null", out);
        }
        fputs(",\"require\":", out);
        cb_json_str(out, req ? req->arg : NULL);
        fputs(",\"file\":", out);
        cb_json_str(out, b->file);
        fprintf(out, ",\"line\":%d,\"has_setup\":%s,\"has_verify\":%s}\n", b->line,
                cb_hook_for(b, CB_HOOK_SETUP) ? "true" : "false", cb_hook_for(b, CB_HOOK_VERIFY) ? "true" : "false");
    }
    fflush(out);
}

/* ---- measuring ---- */

static uint64_t rng_state;
static uint64_t rng_next(void) { /* xorshift64*: enough to shuffle a ladder */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static inline uint64_t timed_batch(const cb_bench *b, cb_state *s, uint64_t n) {
    s->iters = n;
    uint64_t t0 = cb_timer_start();
    b->run(s);
    uint64_t t1 = timer_stop();
    s->total_iters += n;
    return t1 - t0;
}

static uint64_t wall_batch(const cb_bench *b, cb_state *s, uint64_t n) {
    uint64_t w0 = cb_now_ns();
    timed_batch(b, s, n);
    return cb_now_ns() - w0;
}

static int measure(const cb_bench *b, const options *o) {
    char reason[320];
    const cb_hook *req = cb_hook_for(b, CB_HOOK_REQUIRE);
    if (req && req->arg) {
        char missing[128];
        int r = cb_missing_feature(req->arg, missing, sizeof missing);
        if (r < 0) {
            emit_outcome("fail", o, missing);
            return 0;
        }
        if (r > 0) {
            snprintf(reason, sizeof reason, "requires CPU feature '%s', absent here", missing);
            emit_outcome("skip", o, reason);
            return 0;
        }
    }

    cb_state s;
    memset(&s, 0, sizeof s);
    s.param = o->param;
    s.name = o->run;
    const cb_hook *setup = cb_hook_for(b, CB_HOOK_SETUP), *teardown = cb_hook_for(b, CB_HOOK_TEARDOWN);
    const cb_hook *verify = cb_hook_for(b, CB_HOOK_VERIFY);
    if (setup) ((cb_fn)setup->fn)(&s);
    if (s.skip_) {
        emit_outcome(s.skip_ == 1 ? "skip" : "fail", o, s.reason_);
        if (teardown) ((cb_fn)teardown->fn)(&s);
        cb_free_buffers(&s);
        return 0;
    }

    uint64_t start_ns = cb_now_ns();
    const int K = o->ladder;
    const double ladder_sum = K * (K + 1) / 2.0; /* batches per round, in units of n_base */
    /* Sizing: double n until a batch lasts the target, then scale linearly to it. */
    double target_ns = o->min_time * 1e9 / (ladder_sum * o->repeat);
    if (target_ns < (double)o->min_batch_ns) target_ns = (double)o->min_batch_ns;
    uint64_t n = 1, t = wall_batch(b, &s, 1); /* the first call also pays cold misses */
    t = wall_batch(b, &s, 1);
    while (t < target_ns / 2 && n < (1ull << 40)) {
        n *= 2;
        t = wall_batch(b, &s, n);
    }
    double per_op_ns = t > 0 ? (double)t / (double)n : 1.0;
    uint64_t n_base = (uint64_t)(target_ns / per_op_ns + 0.5);
    if (n_base < 1) n_base = 1;
    /* Slow operations: fewer rounds rather than a run past --max-time (at least 3). */
    int rounds = o->repeat;
    double round_ns = ladder_sum * (double)n_base * per_op_ns;
    if (round_ns * rounds > o->max_time * 1e9) {
        rounds = (int)(o->max_time * 1e9 / round_ns);
        if (rounds < 3) rounds = 3;
    }
    uint64_t sizing_ns = cb_now_ns() - start_ns;

    /* Warm-up: caches, TLB, branch predictors and the allocator reach steady state. */
    uint64_t w0 = cb_now_ns();
    do timed_batch(b, &s, n_base);
    while (cb_now_ns() - w0 < (uint64_t)(o->warmup * 1e9));
    uint64_t warmup_ns = cb_now_ns() - w0;

    uint64_t omin, omed;
    timer_overhead(&omin, &omed);

    size_t nsamples = (size_t)rounds * (size_t)K;
    uint64_t *ns = malloc(nsamples * sizeof *ns), *ticks = malloc(nsamples * sizeof *ticks);
    int *order = malloc((size_t)K * sizeof *order);
    if (!ns || !ticks || !order) {
        emit_outcome("fail", o, "runner: out of memory for samples");
        return 0;
    }
    for (int k = 0; k < K; k++) order[k] = k + 1;
    uint64_t m0 = cb_now_ns();
    size_t idx = 0;
    for (int r = 0; r < rounds; r++) {
        for (int k = K - 1; k > 0; k--) { /* Fisher–Yates: no drift aligns with batch size */
            int j = (int)(rng_next() % (uint64_t)(k + 1)), tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (int k = 0; k < K; k++) {
            uint64_t nb = (uint64_t)order[k] * n_base;
            ticks[idx] = timed_batch(b, &s, nb);
            ns[idx++] = nb;
        }
    }
    uint64_t measured_ns = cb_now_ns() - m0;

    int verified = -1; /* -1: no verify hook */
    if (verify) {
        verified = ((cb_verify_fn)verify->fn)(&s) ? 1 : 0;
        if (!verified && !s.skip_) cb_fail(&s, "verify hook returned false");
    } else if (s.skip_ == 2) {
        verified = 0;
    }

    fputs("{\"type\":\"result\",\"bench\":", out);
    cb_json_str(out, o->run);
    if (o->has_param) fprintf(out, ",\"param\":%lld", (long long)o->param);
    else fputs(",\"param\":null", out);
    fprintf(out,
            ",\"timer\":\"%s\",\"unit\":\"%s\",\"n_base\":%llu,\"rounds\":%d,\"ladder\":%d,"
            "\"seed\":%llu,\"sizing_ns\":%llu,\"warmup_ns\":%llu,\"measured_ns\":%llu,"
            "\"total_iters\":%llu,\"timer_overhead\":{\"min\":%llu,\"median\":%llu},\"verified\":%s,\"reason\":",
            CB_TIMER_NAME, CB_TIMER_UNIT, (unsigned long long)n_base, rounds, K, (unsigned long long)o->seed,
            (unsigned long long)sizing_ns, (unsigned long long)warmup_ns, (unsigned long long)measured_ns,
            (unsigned long long)s.total_iters, (unsigned long long)omin, (unsigned long long)omed,
            verified < 0 ? "null" : verified ? "true" : "false");
    cb_json_str(out, s.skip_ == 2 ? s.reason_ : NULL);
    fputs(",\"n\":", out);
    cb_json_u64_array(out, ns, idx);
    fputs(",\"ticks\":", out);
    cb_json_u64_array(out, ticks, idx);
    fputs("}\n", out);
    fflush(out);

    if (teardown) ((cb_fn)teardown->fn)(&s);
    cb_free_buffers(&s);
    free(ns);
    free(ticks);
    free(order);
    return 0;
}

/* ---- command line ---- */

static int usage_error(const char *msg) {
    emit_error(NULL, msg);
    return 2;
}

static int parse_double(const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno == 0 && end != s && *end == 0 && *v >= 0;
}

static int parse_i64(const char *s, int64_t *v) {
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 0);
    return errno == 0 && end != s && *end == 0;
}

int main(int argc, char **argv) {
    int fd = dup(1);
    out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        perror("cyclebench runner: stdout");
        return 2;
    }
    dup2(2, 1); /* anything a benchmark prints goes to stderr, never into the protocol */
#if defined(__x86_64__)
    have_rdtscp = cb_cpu_has("rdtscp") == 1;
#endif

    options o = {.cpu = -1, .min_time = 0.05, .max_time = 10, .warmup = 0.01, .min_batch_ns = 2000,
                 .repeat = 40, .ladder = 8, .seed = 0};
    int do_list = 0, do_cal = 0, do_features = 0;
    static const struct option longopts[] = {
        {"list", no_argument, 0, 'l'},          {"calibrate", no_argument, 0, 'c'},
        {"features", no_argument, 0, 'f'},
        {"run", required_argument, 0, 'r'},     {"param", required_argument, 0, 'p'},
        {"cpu", required_argument, 0, 'C'},     {"min-time", required_argument, 0, 't'},
        {"max-time", required_argument, 0, 'T'}, {"warmup", required_argument, 0, 'w'},
        {"min-batch-ns", required_argument, 0, 'b'}, {"repeat", required_argument, 0, 'R'},
        {"ladder", required_argument, 0, 'L'},  {"seed", required_argument, 0, 's'},
        {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int64_t v;
        double d;
        switch (c) {
        case 'l': do_list = 1; break;
        case 'c': do_cal = 1; break;
        case 'f': do_features = 1; break;
        case 'r': o.run = optarg; break;
        case 'p':
            if (!parse_i64(optarg, &o.param)) return usage_error("--param: not an integer");
            o.has_param = 1;
            break;
        case 'C':
            if (!parse_i64(optarg, &v) || v < 0) return usage_error("--cpu: not a CPU number");
            o.cpu = (int)v;
            break;
        case 't': if (!parse_double(optarg, &o.min_time)) return usage_error("--min-time: bad number"); break;
        case 'T': if (!parse_double(optarg, &o.max_time)) return usage_error("--max-time: bad number"); break;
        case 'w': if (!parse_double(optarg, &o.warmup)) return usage_error("--warmup: bad number"); break;
        case 'b':
            if (!parse_double(optarg, &d)) return usage_error("--min-batch-ns: bad number");
            o.min_batch_ns = (uint64_t)d;
            break;
        case 'R':
            if (!parse_i64(optarg, &v) || v < 1 || v > 100000) return usage_error("--repeat: 1..100000");
            o.repeat = (int)v;
            break;
        case 'L':
            if (!parse_i64(optarg, &v) || v < 2 || v > 64) return usage_error("--ladder: 2..64");
            o.ladder = (int)v;
            break;
        case 's': if (!parse_i64(optarg, &v)) return usage_error("--seed: not an integer"); o.seed = (uint64_t)v; break;
        default: return usage_error("unknown or incomplete option");
        }
    }
    if (optind < argc) return usage_error("unexpected argument");
    const cb_hook *orphan = cb_orphan_hook();
    if (orphan) {
        char msg[256];
        snprintf(msg, sizeof msg, "hook for %s/%s names no registered benchmark", orphan->group,
                 orphan->name ? orphan->name : "*");
        return usage_error(msg);
    }
    if (o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o.cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "cannot pin to CPU %d: %s", o.cpu, strerror(errno));
            return usage_error(msg);
        }
    }
    if (do_list) {
        list();
        return 0;
    }
    if (do_features) {
        features();
        return 0;
    }
    if (do_cal) {
        calibrate();
        return 0;
    }
    if (!o.run) return usage_error("nothing to do: --list, --calibrate or --run NAME");
    const cb_bench *b = cb_find(o.run);
    if (!b) {
        char msg[300];
        snprintf(msg, sizeof msg, "unknown benchmark '%.200s'", o.run);
        emit_error(o.run, msg);
        return 2;
    }
    if (b->nparams && !o.has_param) return usage_error("this benchmark takes --param");
    if (!b->nparams && o.has_param) return usage_error("this benchmark takes no --param");
    rng_state = o.seed ? o.seed : (cb_now_ns() | 1);
    if (!o.seed) o.seed = rng_state;
    return measure(b, &o);
}

/* measure.c — how a number is made (docs/method.md §1–2).
 *
 * The body is timed in whole batches of n operations; n runs over a ladder k·n_base (k =
 * 1..K, shuffled anew every round) so the analysis can fit ticks = fixed + per_op·n and
 * separate the per-op cost from the fixed cost of the timer and the call (the loop overhead
 * that made syscall_timing read 20% low in Evans's getpid measurements,
 * docs/references.md#getpid-copy-freebsd-2018). n_base is sized so the smallest batch lasts
 * at least min_batch_ns and the sampling lasts about min_time.
 *
 * Next to every batch, outside its timed interval:
 *   - an add chain is timed (chain.h): core cycles per TSC tick at that moment;
 *   - involuntary context switches and migrations are read (disturb.h): was the batch
 *     disturbed (preempted or moved, not asleep by design)?
 * With several benchmarks, they alternate batch by batch in ABBA order (see cb_measure),
 * so each sees the same drift and their rounds pair up.
 *
 * max_time caps each benchmark's sizing, warm-up and rounds together: the rounds are
 * planned from the sizing's per-op cost (at least 1, not 3), and before every round after
 * the first the time each benchmark has used so far plus its mean round is checked against
 * it. A plan alone was no cap: the sizing batch can be cheaper per op than the rounds'
 * (copy/nt_store at 64 B: non-temporal stores absorbed by the write buffers in a short
 * batch, a DRAM write each in a long one) and ran 6.7 s with --min-time 5 --max-time 5.
 * Only whole rounds are run, so a run can pass the cap by at most one round — and the
 * first round always runs (36 operations at least).
 */
#define _GNU_SOURCE
#include "measure.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "disturb.h"
#include "json.h"
#include "registry.h"
#include "timer.h"

int cb_have_rdtscp = 1;

/* Injected faults (CYCLEBENCH_FAULT, docs/method.md §11): a broken tool on purpose, so that
 * `cyclebench selftest` can be shown to catch one. Never set in normal use; a result made
 * with one says so ("fault" in its line).
 *   calibration — every timed chain reads 1% short: cycles~ comes out 1% high, the size of a
 *                 wrong fixed part (docs/method.md §3: 0.3–0.4%) with room to spare;
 *   timer-skip  — the clock advances in steps of 256 ticks, as a coarse counter does: short
 *                 intervals read 0 or 256, never their length.
 * Both act on readings already taken (after the stop read), so the timed code is unchanged. */
const char *cb_fault = NULL;
static uint64_t timer_mask = ~(uint64_t)0;
static int chain_short;

void cb_fault_init(void) {
    const char *f = getenv("CYCLEBENCH_FAULT");
    if (!f || !*f) return;
    if (!strcmp(f, "calibration")) chain_short = 1;
    else if (!strcmp(f, "timer-skip")) timer_mask = ~(uint64_t)255;
    else return;
    cb_fault = f;
}

static inline uint64_t timer_stop(void) { return cb_have_rdtscp ? cb_timer_stop() : cb_timer_stop_norscp(); }
static inline uint64_t elapsed(uint64_t t0, uint64_t t1) { return (t1 & timer_mask) - (t0 & timer_mask); }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void cb_timer_overhead(uint64_t *min, uint64_t *median) {
    enum { N = 1001 };
    static uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = cb_timer_start();
        uint64_t t1 = timer_stop();
        d[i] = elapsed(t0, t1);
    }
    qsort(d, N, sizeof d[0], cmp_u64);
    *min = d[0];
    *median = d[N / 2];
}

static uint64_t rng_state;
static uint64_t rng_next(void) { /* xorshift64*: enough to shuffle a ladder */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

typedef struct job {
    const cb_request *req;
    const cb_bench *b;
    cb_state s;
    const cb_hook *teardown, *verify;
    int active;  /* set up, measuring */
    uint64_t n_base, sizing_ns, warmup_ns, measured_ns; /* sizing + warm-up + measured: what max_time caps */
    int rounds;
    double per_op_ns;
    uint64_t *n, *ticks, *cal, *cal_imul, *pmu;
    uint64_t irqs; /* interrupts counted during its timed batches */
    uint64_t *creads; /* per sample: every counter group's raw read, concatenated */
    unsigned char *disturbed;
    size_t idx;
} job;

/* The scheduling policy and priority the benchmark really ran under (--fifo was once
 * dropped before the engine and nothing showed it): ,"sched":{"policy":"SCHED_FIFO","priority":10} */
static void emit_sched(FILE *out) {
    struct sched_param sp = {0};
    int policy = sched_getscheduler(0);
    sched_getparam(0, &sp);
    const char *name = policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR"
                       : policy == SCHED_OTHER ? "SCHED_OTHER" : policy == SCHED_BATCH ? "SCHED_BATCH"
                       : policy == SCHED_IDLE ? "SCHED_IDLE" : "unknown";
    fprintf(out, ",\"sched\":{\"policy\":\"%s\",\"priority\":%d}", name, sp.sched_priority);
}

void cb_emit_head(FILE *out, const char *type, const cb_request *r) {
    fputs("{\"type\":", out);
    cb_json_str(out, type);
    fputs(",\"bench\":", out);
    cb_json_str(out, r->name);
    if (r->has_param) fprintf(out, ",\"param\":%lld", (long long)r->param);
    else fputs(",\"param\":null", out);
}

static void emit_outcome(FILE *out, const char *type, const cb_request *r, const char *reason) {
    cb_emit_head(out, type, r);
    fputs(",\"reason\":", out);
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

static inline uint64_t timed_batch(const cb_bench *b, cb_state *s, uint64_t n) {
    s->iters = n;
    uint64_t t0 = cb_timer_start();
    b->run(s);
    uint64_t t1 = timer_stop();
    s->total_iters += n;
    return elapsed(t0, t1);
}

static uint64_t wall_batch(const cb_bench *b, cb_state *s, uint64_t n) {
    uint64_t w0 = cb_now_ns();
    timed_batch(b, s, n);
    return cb_now_ns() - w0;
}

#if CB_HAVE_CHAIN
typedef struct {
    uint64_t x, ticks;
} chain_reading;

/* The timed path itself: timer, call, chain, timer. x enters and leaves in a register (the
 * struct comes back in two), so no memory access is on the chain. */
static __attribute__((noinline)) chain_reading chain_timed(uint64_t x, int imul, int blocks) {
    uint64_t t0 = cb_timer_start();
    x = imul ? cb_imul_chain(x, blocks) : cb_add_chain(x, blocks);
    uint64_t t = elapsed(t0, timer_stop());
    return (chain_reading){x, t};
}
#endif

/* One timed chain: `blocks` blocks of imuls (0: CB_CHAIN_IMULS of them), or of adds. The whole
 * timed path runs once untimed first with one block, so the timed run finds its code in the instruction
 * caches. Right after a batch it often did not (the body's code, or the host's other work,
 * had evicted it): on an AMD EPYC (Zen 3) guest the reading after a batch was up to 20% slower
 * than one right after it, and cycles~ of 300 adds read 2–9% low in 58 of 200 runs; warmed,
 * 0 of 200 beyond 1% (docs/method.md §3). Shared with the scaling engine (scale.c), which
 * times it on a task's CPU. */
uint64_t cb_chain_ticks(int imul, int blocks) {
#if CB_HAVE_CHAIN
    static uint64_t v = 1;
    uint64_t x = v;
    x = chain_timed(x, imul, 1).x;
    chain_reading r = chain_timed(x, imul, blocks);
    v = r.x;
    return chain_short ? r.ticks - r.ticks / 100 : r.ticks;
#else
    (void)imul;
    (void)blocks;
    return 0;
#endif
}

/* Feature gate and setup. Returns 1 when the job is ready to measure. */
static int job_setup(FILE *out, job *j) {
    char reason[320];
    const cb_hook *req = cb_hook_for(j->b, CB_HOOK_REQUIRE);
    if (req && req->arg) {
        char missing[128];
        int r = cb_missing_feature(req->arg, missing, sizeof missing);
        if (r < 0) {
            emit_outcome(out, "fail", j->req, missing);
            return 0;
        }
        if (r > 0) {
            snprintf(reason, sizeof reason, "requires CPU feature '%s', absent here", missing);
            emit_outcome(out, "skip", j->req, reason);
            return 0;
        }
    }
    memset(&j->s, 0, sizeof j->s);
    j->s.param = j->req->param;
    j->s.name = j->req->name;
    const cb_hook *setup = cb_hook_for(j->b, CB_HOOK_SETUP);
    j->teardown = cb_hook_for(j->b, CB_HOOK_TEARDOWN);
    j->verify = cb_hook_for(j->b, CB_HOOK_VERIFY);
    if (setup) ((cb_fn)setup->fn)(&j->s);
    if (j->s.skip_) {
        emit_outcome(out, j->s.skip_ == 1 ? "skip" : "fail", j->req, j->s.reason_);
        if (j->teardown) ((cb_fn)j->teardown->fn)(&j->s);
        cb_free_buffers(&j->s);
        return 0;
    }
    return 1;
}

/* Sizing: double n until a batch lasts half the target, then scale linearly to it. */
static void job_size(job *j, const cb_options *o) {
    uint64_t start = cb_now_ns();
    const double ladder_sum = o->ladder * (o->ladder + 1) / 2.0; /* batches per round, in n_base units */
    double target_ns = o->min_time * 1e9 / (ladder_sum * o->repeat);
    if (target_ns < (double)o->min_batch_ns) target_ns = (double)o->min_batch_ns;
    uint64_t n = 1;
    wall_batch(j->b, &j->s, 1); /* the first call also pays cold misses */
    uint64_t t = wall_batch(j->b, &j->s, 1);
    while (t < target_ns / 2 && n < (1ull << 40)) {
        n *= 2;
        t = wall_batch(j->b, &j->s, n);
    }
    j->per_op_ns = t > 0 ? (double)t / (double)n : 1.0;
    j->n_base = (uint64_t)(target_ns / j->per_op_ns + 0.5);
    if (j->n_base < 1) j->n_base = 1;
    j->sizing_ns = cb_now_ns() - start;
    /* Slow operations: fewer rounds rather than a run past max_time, counting the sizing
     * and the warm-up to come (at least 1 round: a cap that allowed 3 was no cap). */
    j->rounds = o->repeat;
    double round_ns = ladder_sum * (double)j->n_base * j->per_op_ns;
    double budget = o->max_time * 1e9 - (double)j->sizing_ns - o->warmup * 1e9;
    if (round_ns * j->rounds > budget) {
        j->rounds = budget > round_ns ? (int)(budget / round_ns) : 1;
    }
}

/* Before round r (r >= 1): would another round take a job past max_time? Its time so far
 * (sizing, warm-up, its own samples) plus its mean round so far. */
static int past_max_time(const job *jobs, int nreq, int r, const cb_options *o) {
    for (int i = 0; i < nreq; i++) {
        const job *j = &jobs[i];
        if (!j->active) continue;
        double used = (double)(j->sizing_ns + j->warmup_ns + j->measured_ns);
        if (used + (double)j->measured_ns / r > o->max_time * 1e9) return 1;
    }
    return 0;
}

/* Warm-up: caches, TLB, branch predictors and the allocator reach steady state. */
static void job_warmup(job *j, const cb_options *o) {
    uint64_t w0 = cb_now_ns();
    do timed_batch(j->b, &j->s, j->n_base);
    while (cb_now_ns() - w0 < (uint64_t)(o->warmup * 1e9));
    j->warmup_ns = cb_now_ns() - w0;
}

/* One timed sample of job j at batch size k·n_base, with its chain and disturbance readings. */
static int perf_words(const cb_perf_groups *g) {
    int w = 0;
    for (int i = 0; g && i < g->ngroups; i++) w += 3 + g->nevents[i];
    return w;
}

static void job_sample(job *j, int k, cb_disturb *d, const cb_pmu *pmu, const cb_irq *irq,
                       const cb_perf_groups *perf) {
    uint64_t nb = (uint64_t)k * j->n_base, m0 = cb_now_ns();
    cb_disturb_changed(d);
    uint64_t p0 = cb_pmu_read(pmu); /* outside the timed interval; the slope drops its fixed cost */
    if (perf) cb_perf_start(perf); /* the ioctls are a fixed cost per batch: the slope drops it too */
    uint64_t q0 = cb_irq_read(irq); /* next to the timed interval: an interrupt in the chain below is not the batch's */
    j->ticks[j->idx] = timed_batch(j->b, &j->s, nb);
    uint64_t irqs = cb_irq_read(irq) - q0;
    j->irqs += irqs;
    if (perf) {
        cb_perf_stop(perf);
        uint64_t *w = j->creads + j->idx * (size_t)perf_words(perf);
        memset(w, 0, (size_t)perf_words(perf) * sizeof *w);
        for (int i = 0; i < perf->ngroups; w += 3 + perf->nevents[i], i++) cb_perf_read(perf, i, w);
    }
    j->pmu[j->idx] = cb_pmu_read(pmu) - p0;
    j->cal[j->idx] = cb_chain_ticks(0, CB_CHAIN_ADDS / CB_CHAIN_BLOCK);
    j->cal_imul[j->idx] = cb_chain_ticks(1, 0);
    j->disturbed[j->idx] = (unsigned char)(cb_disturb_changed(d) | (irqs ? CB_DISTURB_INTERRUPTED : 0));
    j->n[j->idx++] = nb;
    j->measured_ns += cb_now_ns() - m0;
}

static void shuffle(int *order, int K) {
    for (int k = 0; k < K; k++) order[k] = k + 1;
    for (int k = K - 1; k > 0; k--) { /* Fisher–Yates: no drift lines up with batch size */
        int r = (int)(rng_next() % (uint64_t)(k + 1)), tmp = order[k];
        order[k] = order[r];
        order[r] = tmp;
    }
}

static void job_emit(FILE *out, job *j, const cb_options *o, const cb_disturb *d, const cb_pmu *pmu, const cb_irq *irq,
                     uint64_t omin, uint64_t omed, const uint64_t *imul, const uint64_t *add,
                     const uint64_t *shortr, const uint64_t *longr, const uint64_t *ishort, const uint64_t *ilong) {
    int verified = -1; /* -1: no verify hook */
    if (j->verify) {
        verified = ((cb_verify_fn)j->verify->fn)(&j->s) ? 1 : 0;
        if (!verified && !j->s.skip_) cb_fail(&j->s, "verify hook returned false");
    } else if (j->s.skip_ == 2) {
        verified = 0;
    }
    cb_emit_head(out, "result", j->req);
    emit_sched(out);
    if (cb_fault) fprintf(out, ",\"fault\":\"%s\"", cb_fault);
    fprintf(out,
            ",\"timer\":\"%s\",\"unit\":\"%s\",\"n_base\":%llu,\"rounds\":%d,\"ladder\":%d,"
            "\"seed\":%llu,\"sizing_ns\":%llu,\"warmup_ns\":%llu,\"measured_ns\":%llu,"
            "\"total_iters\":%llu,\"timer_overhead\":{\"min\":%llu,\"median\":%llu},"
            "\"disturb_source\":\"%s\",\"cpu\":%d,\"chain\":{\"kind\":\"%s\",\"adds\":%d,\"imuls\":%d,\"imul_latency\":%d,"
            "\"short_adds\":%d",
            CB_TIMER_NAME, CB_TIMER_UNIT, (unsigned long long)j->n_base, j->rounds, o->ladder,
            (unsigned long long)o->seed, (unsigned long long)j->sizing_ns, (unsigned long long)j->warmup_ns,
            (unsigned long long)j->measured_ns, (unsigned long long)j->s.total_iters, (unsigned long long)omin,
            (unsigned long long)omed, cb_disturb_source(d), sched_getcpu(), CB_HAVE_CHAIN ? "add" : "none", CB_CHAIN_ADDS,
            CB_CHAIN_IMULS, CB_IMUL_LATENCY, CB_CHAIN_BLOCK);
    fputs(",\"imul_ticks\":", out);
    cb_json_u64_array(out, imul, CB_HAVE_CHAIN ? 2 * CB_CHAIN_PAIR_READS : 0);
    fputs(",\"add_ticks\":", out);
    cb_json_u64_array(out, add, CB_HAVE_CHAIN ? 2 * CB_CHAIN_PAIR_READS : 0);
    fputs(",\"short_ticks\":", out);
    cb_json_u64_array(out, shortr, CB_HAVE_CHAIN ? CB_CHAIN_FIXED_READS : 0);
    fputs(",\"long_ticks\":", out);
    cb_json_u64_array(out, longr, CB_HAVE_CHAIN ? CB_CHAIN_FIXED_READS : 0);
    fprintf(out, ",\"imul_block\":%d,\"imul_short_ticks\":", CB_IMUL_BLOCK);
    cb_json_u64_array(out, ishort, CB_HAVE_CHAIN ? CB_CHAIN_FIXED_READS : 0);
    fputs(",\"imul_long_ticks\":", out);
    cb_json_u64_array(out, ilong, CB_HAVE_CHAIN ? CB_CHAIN_FIXED_READS : 0);
    fprintf(out, "},\"verified\":%s,\"reason\":", verified < 0 ? "null" : verified ? "true" : "false");
    cb_json_str(out, j->s.skip_ == 2 ? j->s.reason_ : NULL);
    fputs(",\"n\":", out);
    cb_json_u64_array(out, j->n, j->idx);
    fputs(",\"ticks\":", out);
    cb_json_u64_array(out, j->ticks, j->idx);
    fputs(",\"cal\":", out);
    if (CB_HAVE_CHAIN) cb_json_u64_array(out, j->cal, j->idx);
    else fputs("null", out);
    fputs(",\"cal_imul\":", out);
    if (CB_HAVE_CHAIN) cb_json_u64_array(out, j->cal_imul, j->idx);
    else fputs("null", out);
    if (o->perf) {
        int words = perf_words(o->perf);
        fputs(",\"counters\":{\"open_errors\":[", out);
        for (int i = 0; i < o->perf->ngroups; i++) {
            if (i) fputc(',', out);
            cb_json_str(out, o->perf->fd[i] >= 0 ? NULL : strerror(o->perf->error[i]));
        }
        fputs("],\"nevents\":[", out);
        for (int i = 0; i < o->perf->ngroups; i++) fprintf(out, i ? ",%d" : "%d", o->perf->nevents[i]);
        fputs("],\"reads\":[", out);
        for (size_t k = 0; k < j->idx; k++) {
            if (k) fputc(',', out);
            cb_json_u64_array(out, j->creads + k * (size_t)words, (size_t)words);
        }
        fputs("]}", out);
    }
    fputs(",\"pmu_cycles\":", out);
    if (pmu->fd >= 0) cb_json_u64_array(out, j->pmu, j->idx);
    else fputs("null", out);
    fputs(",\"pmu_error\":", out);
    cb_json_str(out, pmu->fd >= 0 ? NULL : strerror(pmu->error));
    if (irq->fd >= 0) fprintf(out, ",\"irqs\":%llu", (unsigned long long)j->irqs);
    else fputs(",\"irqs\":null", out);
    fputs(",\"irq_source\":", out);
    char src[160];
    if (irq->fd >= 0) snprintf(src, sizeof src, "tracepoints on CPU %d (%d events)", irq->cpu, irq->nevents);
    else snprintf(src, sizeof src, "none: %s", irq->why);
    cb_json_str(out, src);
    fputs(",\"disturbed\":[", out);
    for (size_t i = 0; i < j->idx; i++) fprintf(out, i ? ",%d" : "%d", j->disturbed[i]);
    fputs("]}\n", out);
    fflush(out);
}

/* The fixed part of a timed chain (chain.h): one block and eight, alternately; of the imul
 * chain, one block and four. Half the readings before the rounds, half after (fill from 0 or
 * from CB_CHAIN_FIXED_READS / 2). */
static void chain_fixed(uint64_t *shortr, uint64_t *longr, uint64_t *ishort, uint64_t *ilong, int from) {
    for (int i = from; i < from + CB_CHAIN_FIXED_READS / 2; i++) {
        shortr[i] = cb_chain_ticks(0, 1);
        longr[i] = cb_chain_ticks(0, CB_CHAIN_ADDS / CB_CHAIN_BLOCK);
        ishort[i] = cb_chain_ticks(1, 1);
        ilong[i] = cb_chain_ticks(1, CB_CHAIN_IMULS / CB_IMUL_BLOCK);
    }
}

/* The chains timed CB_CHAIN_PAIR_READS times each, alternately, every reading kept: on a TSC that
 * advances in steps (26 ticks on an AMD EPYC guest, 2.4% of the ~1,100-tick imul chain) the
 * fastest of five sat on one step, and the imul/add clock ratio moved in steps of 2.4% (0.979,
 * 1.003, 1.027 among the lab's results); the mean of readings at random phases of the step
 * does not (stats.clock.chain_agreement). */
static void chain_pair(uint64_t *add, uint64_t *imul) {
    for (int i = 0; i < CB_CHAIN_PAIR_READS; i++) {
        add[i] = cb_chain_ticks(0, CB_CHAIN_ADDS / CB_CHAIN_BLOCK);
        imul[i] = cb_chain_ticks(1, 0);
    }
}

/* The one CPU this thread may run on, or -1 when it may run on several. */
static int pinned_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) return c;
    return -1;
}

int cb_measure(FILE *out, const cb_request *req, int nreq, const cb_options *o) {
    static job jobs[CB_MAX_JOBS];
    int K = o->ladder, rounds = 0, nactive = 0;
    rng_state = o->seed | 1;
    cb_disturb d;
    cb_disturb_open(&d);
    cb_pmu pmu;
    cb_pmu_open(&pmu);
    cb_irq irq;
    cb_irq_open(&irq, pinned_cpu());
    if (o->perf) cb_perf_open(o->perf);
    for (int i = 0; i < nreq; i++) {
        job *j = &jobs[i];
        memset(j, 0, sizeof *j);
        j->req = &req[i];
        j->b = cb_find(req[i].name);
        if (!job_setup(out, j)) continue;
        j->active = 1;
        job_size(j, o);
        rounds = nactive++ ? (j->rounds < rounds ? j->rounds : rounds) : j->rounds;
    }
    int *order = malloc((size_t)K * sizeof *order);
    for (int i = 0; i < nreq; i++) {
        job *j = &jobs[i];
        if (!j->active) continue;
        size_t cap = (size_t)rounds * (size_t)K;
        j->rounds = rounds;
        j->n = malloc(cap * sizeof *j->n);
        j->ticks = malloc(cap * sizeof *j->ticks);
        j->cal = malloc(cap * sizeof *j->cal);
        j->cal_imul = malloc(cap * sizeof *j->cal_imul);
        j->pmu = malloc(cap * sizeof *j->pmu);
        j->creads = malloc(cap * (size_t)(perf_words(o->perf) + 1) * sizeof *j->creads);
        j->disturbed = malloc(cap);
        if (!order || !j->n || !j->ticks || !j->cal || !j->cal_imul || !j->pmu || !j->creads || !j->disturbed) {
            emit_outcome(out, "fail", j->req, "runner: out of memory for samples");
            j->active = 0;
            continue;
        }
        job_warmup(j, o);
    }
    uint64_t omin, omed, add[2 * CB_CHAIN_PAIR_READS] = {0}, imul[2 * CB_CHAIN_PAIR_READS] = {0};
    uint64_t shortr[CB_CHAIN_FIXED_READS], longr[CB_CHAIN_FIXED_READS];
    uint64_t ishort[CB_CHAIN_FIXED_READS], ilong[CB_CHAIN_FIXED_READS];
    cb_timer_overhead(&omin, &omed);
    chain_pair(add, imul);
    chain_fixed(shortr, longr, ishort, ilong, 0);
    /* A round is one shuffled pass over the ladder. With several jobs the round's order is
     * shared and they alternate batch by batch, in ABBA order (A B at one size, B A at the
     * next): the two batches of a pair are tens of microseconds apart, so drift of the core
     * clock or of the host hits both alike, and each job's round r pairs with the others'. */
    int step = 0, done = 0;
    for (int r = 0; r < rounds; r++, done++) {
        if (r > 0 && past_max_time(jobs, nreq, r, o)) break;
        shuffle(order, K);
        for (int k = 0; k < K; k++, step++)
            for (int i = 0; i < nreq; i++) {
                job *j = &jobs[step % 2 ? nreq - 1 - i : i];
                if (j->active) job_sample(j, order[k], &d, &pmu, &irq, o->perf);
            }
    }
    chain_pair(add + CB_CHAIN_PAIR_READS, imul + CB_CHAIN_PAIR_READS);
    chain_fixed(shortr, longr, ishort, ilong, CB_CHAIN_FIXED_READS / 2);
    for (int i = 0; i < nreq; i++) {
        job *j = &jobs[i];
        if (!j->active) continue;
        j->rounds = done; /* the rounds run: fewer than planned when max_time stopped them */
        job_emit(out, j, o, &d, &pmu, &irq, omin, omed, imul, add, shortr, longr, ishort, ilong);
        if (j->teardown) ((cb_fn)j->teardown->fn)(&j->s);
        cb_free_buffers(&j->s);
        free(j->n);
        free(j->ticks);
        free(j->cal);
        free(j->cal_imul);
        free(j->pmu);
        free(j->creads);
        free(j->disturbed);
    }
    free(order);
    cb_irq_close(&irq);
    return 0;
}

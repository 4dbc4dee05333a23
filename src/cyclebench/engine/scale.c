/* scale.c — scaling mode: will-it-scale done right (README "Scaling",
 * docs/method.md §8).
 *
 * Evans 2018 (docs/references.md#getpid-copy-freebsd-2018) describes will-it-scale: "a
 * dedicated process/thread which collects results once a second, … the processes/threads
 * running the test only do the test and bump the iteration counter". This is that model, with
 * the details its copies get wrong made right:
 *
 *   - N tasks (pthreads, or fork()ed processes) each run the body in a loop of small fixed
 *     batches (cb_iters = a batch sized once, uncontended, to last ~batch_ns) and after each
 *     batch publish their own operation count with a relaxed atomic store;
 *   - every counter lives in its own 256-byte block of one MAP_SHARED|MAP_ANONYMOUS region
 *     (shared by threads and by forked processes alike), so no two tasks — and no task and
 *     the control flags — share a cache line, or the pair of lines an adjacent-line
 *     prefetcher pulls in together;
 *   - each task is pinned: task i → cpus[i % ncpus] (the caller orders the list: distinct
 *     cores first, then SMT siblings); N > ncpus is allowed (oversubscription);
 *   - each task has its own cb_state and runs the setup hook itself (in its own thread or
 *     process, on its own CPU: first-touch memory lands on its node), verify and teardown at
 *     the end;
 *   - one sampler (this thread), kept off the tasks' CPUs when another CPU is allowed, sleeps
 *     with clock_nanosleep to absolute deadlines, reads every counter with relaxed loads and
 *     prints one JSON line per interval with each task's operations in it: the per-task view
 *     (fairness) that a single total hides. Its own CPU time is measured and reported;
 *   - with each interval, every task's run time and run-queue wait time from
 *     /proc/…/schedstat (read with pread on descriptors kept open): wait > 0 means something
 *     else held the task's CPU — another program, or another task when oversubscribed; and
 *     whether it was runnable at the sample (/proc/…/stat), as a wait is charged only once
 *     the task runs again: kept off its CPU all interval long, it reads 0 run and 0 wait.
 *
 * A task that crashes: in processes mode the sampler sees the signal (waitpid), reports it
 * and stops the others; in threads mode the signal kills the whole runner and the caller
 * sees it. Either way, every interval line already printed has been flushed.
 *
 * A will-it-scale test case (wis.c) runs in the same tasks, slots and sampler, with these
 * differences: no batches and no hooks — each task calls testcase() once with `iterations`
 * on its slot's counter, and testcase() never returns; testcase_prepare() runs in the runner
 * before the tasks start and testcase_cleanup() after they are killed (SIGKILL: there is no
 * other way to stop a test case), in a private working directory; in threads mode the
 * threads live in one forked process (the "host"), so a crashing test case costs its row,
 * not the runner, and is killed as a whole; the add chain is timed on task 0's CPU before
 * and after (core clock per timer tick, for `run`'s cycles~); every interval carries its
 * timer ticks.
 */
#define _GNU_SOURCE
#include "scale.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "json.h"
#include "registry.h"
#include "timer.h"
#include "wis.h"

/* One block per counter. 64 bytes (one x86 line) is not enough: Intel's spatial ("adjacent
 * line") prefetcher completes 128-byte-aligned pairs of lines, so counters 64 bytes apart
 * still drag each other's line between cores; and some arm64 (e.g. Apple M-series, Cavium
 * ThunderX) and POWER cores have 128-byte lines outright. 256 bytes covers both. */
#define CB_BLOCK 256
/* The warm-up lasts --warmup, and then on while a task has not yet counted an operation, up to this
 * much longer: a will-it-scale testcase() that sets up inside itself (pread1 makes and writes its own
 * file first) stayed in it through 0.1 s of warm-up and 0.3 s of intervals on a loaded 2-CPU VM, and
 * its row read 0 ops/s. Measuring starts once every task counts. */
#define WARMUP_EXTRA_NS 1000000000ull

enum { ST_NEW, ST_READY, ST_SKIP, ST_FAIL, ST_DONE };

typedef struct task_slot {
    uint64_t ops; /* written by its task only (relaxed store after each batch), read by the sampler */
    /* The rest is written only before the start and after the stop, never while sampling. */
    int state, verified, cpu, tid;
    uint64_t total_iters;
    char reason[200];
} __attribute__((aligned(CB_BLOCK))) task_slot;
_Static_assert(sizeof(task_slot) == CB_BLOCK, "one 256-byte block per task");

typedef struct control {
    int start; /* sampler → tasks: go (after every task is set up) */
    int stop;  /* sampler → tasks: finish the current batch and stop; read once per batch */
} __attribute__((aligned(CB_BLOCK))) control;

typedef struct ready_count {
    int n; /* tasks set up (or failed to); written only before the start */
} __attribute__((aligned(CB_BLOCK))) ready_count;

typedef struct shared {
    control ctl;
    ready_count ready;
    task_slot slot[]; /* one per task */
} shared;

static shared *sh;
static const cb_bench *bench;
static const cb_request *request;
static const cb_scale_options *opt;
static uint64_t batch;
static int wis;        /* the benchmark is a will-it-scale test case (wis.c) */
static pid_t wis_host; /* threads mode of a test case: the process whose threads are the tasks */

static void sleep_ns(long ns) {
    struct timespec ts = {0, ns};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_cpu_s(long *nivcsw) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    if (nivcsw) *nivcsw = ru.ru_nivcsw;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* /proc/<tid>/schedstat: "run_ns wait_ns timeslices" (Documentation/scheduler/sched-stats.rst),
 * re-read from offset 0 (a seq_file regenerates on pread at 0). 0 when unreadable. */
static int schedstat(int fd, uint64_t *run, uint64_t *wait) {
    char buf[96];
    unsigned long long r, w;
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return 0;
    buf[n] = 0;
    if (sscanf(buf, "%llu %llu", &r, &w) != 2) return 0;
    *run = r;
    *wait = w;
    return 1;
}

/* /proc/<tid>/stat's state (proc(5), field 3): 1 when 'R', running or runnable. schedstat charges
 * a task's wait only when it runs again (sched_info_arrive), so a task kept off its CPU for a whole
 * interval reads 0 run and 0 wait there, as a blocked one does; its state tells them apart. */
static int runnable(int fd) {
    char buf[512];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return paren && paren[1] == ' ' && paren[2] == 'R';
}

static void state_init(cb_state *s, int task) {
    memset(s, 0, sizeof *s);
    s->param = request->param;
    s->name = request->name;
    s->task = task;
}

/* ---- one task ---- */

/* Records the task's CPU and thread id and pins it there. Returns 0, or -1 when it cannot be
 * pinned (the slot then says why, and counts as set up). */
static int task_pin(int i, task_slot *slot) {
    slot->cpu = opt->ncpus ? opt->cpus[i % opt->ncpus] : -1;
    slot->verified = -1;
    slot->tid = (int)syscall(SYS_gettid);
    if (slot->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(slot->cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            snprintf(slot->reason, sizeof slot->reason, "cannot pin task %d to CPU %d: %s", i, slot->cpu,
                     strerror(errno));
            slot->state = ST_FAIL;
            __atomic_add_fetch(&sh->ready.n, 1, __ATOMIC_RELEASE);
            return -1;
        }
    }
    return 0;
}

static void wait_for_start(void) {
    while (!__atomic_load_n(&sh->ctl.start, __ATOMIC_ACQUIRE) && !__atomic_load_n(&sh->ctl.stop, __ATOMIC_ACQUIRE))
        sleep_ns(100 * 1000);
}

/* A will-it-scale task: testcase() on its own counter, from the start until it is killed. */
static void wis_task(int i) {
    task_slot *slot = &sh->slot[i];
    if (task_pin(i, slot) != 0) return;
    slot->state = ST_READY;
    __atomic_add_fetch(&sh->ready.n, 1, __ATOMIC_RELEASE);
    wait_for_start();
    if (!__atomic_load_n(&sh->ctl.start, __ATOMIC_ACQUIRE)) return; /* stopped before the start */
    cb_wis_run(&slot->ops, (unsigned long)i);
    __atomic_store_n(&slot->state, ST_DONE, __ATOMIC_RELEASE); /* testcase() returned: it should not */
}

static void task_main(int i) {
    if (wis) {
        wis_task(i);
        return;
    }
    task_slot *slot = &sh->slot[i];
    cb_state s;
    state_init(&s, i);
    if (task_pin(i, slot) != 0) return;
    const cb_hook *setup = cb_hook_for(bench, CB_HOOK_SETUP), *teardown = cb_hook_for(bench, CB_HOOK_TEARDOWN),
                  *verify = cb_hook_for(bench, CB_HOOK_VERIFY);
    if (setup) ((cb_fn)setup->fn)(&s);
    if (s.skip_) {
        snprintf(slot->reason, sizeof slot->reason, "%.199s", s.reason_);
        slot->state = s.skip_ == 1 ? ST_SKIP : ST_FAIL;
        if (teardown) ((cb_fn)teardown->fn)(&s);
        cb_free_buffers(&s);
        __atomic_add_fetch(&sh->ready.n, 1, __ATOMIC_RELEASE);
        return;
    }
    slot->state = ST_READY;
    __atomic_add_fetch(&sh->ready.n, 1, __ATOMIC_RELEASE);
    wait_for_start();
    uint64_t done = 0;
    while (!__atomic_load_n(&sh->ctl.stop, __ATOMIC_RELAXED)) {
        s.iters = batch;
        bench->run(&s);
        s.total_iters += batch;
        done += batch;
        __atomic_store_n(&slot->ops, done, __ATOMIC_RELAXED); /* sole writer: a plain store */
    }
    if (verify) {
        slot->verified = ((cb_verify_fn)verify->fn)(&s) ? 1 : 0;
        if (!slot->verified && !s.skip_) cb_fail(&s, "verify hook returned false");
    } else if (s.skip_ == 2) {
        slot->verified = 0;
    }
    if (s.skip_ == 2) snprintf(slot->reason, sizeof slot->reason, "%.199s", s.reason_);
    if (teardown) ((cb_fn)teardown->fn)(&s);
    cb_free_buffers(&s);
    slot->total_iters = s.total_iters;
    __atomic_store_n(&slot->state, ST_DONE, __ATOMIC_RELEASE);
}

static void *thread_main(void *arg) {
    task_main((int)(intptr_t)arg);
    return NULL;
}

/* ---- batch size ---- */

/* Sized once, uncontended, in the sampler before any task starts: doubling n until a batch
 * lasts at least half the target, then scaled to it. Small batches keep the counters fresh
 * (an interval of 0.1 s holds thousands of batches, so the count is exact to a fraction of a
 * percent); the batch still amortises the per-batch store and stop check. Returns 0 (and
 * the setup's reason) when the setup hook skips or fails. */
static uint64_t size_batch(double target_ns, double *per_op_ns, int *skip, char *why, size_t cap) {
    cb_state s;
    state_init(&s, 0);
    const cb_hook *setup = cb_hook_for(bench, CB_HOOK_SETUP), *teardown = cb_hook_for(bench, CB_HOOK_TEARDOWN);
    if (setup) ((cb_fn)setup->fn)(&s);
    uint64_t n = 0;
    *skip = s.skip_;
    if (s.skip_) {
        snprintf(why, cap, "%s", s.reason_);
    } else {
        s.iters = 1;
        bench->run(&s); /* cold misses, lazy binding */
        n = 1;
        uint64_t t;
        for (;;) {
            s.iters = n;
            uint64_t t0 = cb_now_ns();
            bench->run(&s);
            t = cb_now_ns() - t0;
            s.total_iters += n;
            if (t >= target_ns / 2 || n >= (1ull << 40)) break;
            n *= 2;
        }
        *per_op_ns = t ? (double)t / (double)n : 1.0;
        double b = target_ns / *per_op_ns;
        n = b < 1 ? 1 : (uint64_t)(b + 0.5);
    }
    if (teardown) ((cb_fn)teardown->fn)(&s);
    cb_free_buffers(&s);
    return n;
}

/* ---- the core clock of a task's CPU (will-it-scale test cases) ---- */

/* A test case cannot be timed in batches, so `run` takes its cost per operation from the
 * intervals' timer ticks; cycles~ then need the core clock per tick, from the add chain
 * (chain.h) timed on the task's CPU just before the tasks start and just after they are
 * killed — not during the run (the CPU is the task's then), which `run` says. The readings
 * have the shape of measure.c's "chain" object, so stats/clock.py reads them alike. */
#define CHAIN_PAIRS 32
/* Chains run untimed first, for this long: the CPU may have been idle (the "before" readings)
 * and its clock still ramping up. Seen without: before 1.252 and after 1.297 cycles/tick. */
#define CHAIN_WARMUP_NS 5000000ull

typedef struct chain_reads {
    int cpu, n; /* n: readings of each kind; 0 when not timed */
    uint64_t shortr[CHAIN_PAIRS], longr[CHAIN_PAIRS], add, imul;
} chain_reads;

/* Times the chains on `cpu`, this thread moved there for it and then back. */
static void time_chain(int cpu, chain_reads *c) {
    cpu_set_t old, set;
    memset(c, 0, sizeof *c);
    c->cpu = cpu;
    if (!CB_HAVE_CHAIN || cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof old, &old) != 0) return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return;
    c->add = c->imul = UINT64_MAX;
    for (uint64_t t0 = cb_now_ns(); cb_now_ns() - t0 < CHAIN_WARMUP_NS;) cb_chain_ticks(0, CB_CHAIN_ADDS / CB_CHAIN_BLOCK);
    for (int i = 0; i < CHAIN_PAIRS; i++) {
        c->shortr[i] = cb_chain_ticks(0, 1);
        c->longr[i] = cb_chain_ticks(0, CB_CHAIN_ADDS / CB_CHAIN_BLOCK);
        if (c->longr[i] < c->add) c->add = c->longr[i];
        uint64_t m = cb_chain_ticks(1, 0);
        if (m < c->imul) c->imul = m;
    }
    c->n = CHAIN_PAIRS;
    sched_setaffinity(0, sizeof old, &old);
}

/* ,"KEY":{"kind":"add","cpu":C,"adds":2048,...,"short_ticks":[...],"long_ticks":[...]} */
static void emit_chain(FILE *out, const char *key, const chain_reads *c) {
    fprintf(out,
            ",\"%s\":{\"kind\":\"%s\",\"cpu\":%d,\"adds\":%d,\"short_adds\":%d,\"imuls\":%d,\"imul_latency\":%d,"
            "\"add_ticks\":[%llu],\"imul_ticks\":[%llu],\"short_ticks\":",
            key, c->n ? "add" : "none", c->cpu, CB_CHAIN_ADDS, CB_CHAIN_BLOCK, CB_CHAIN_IMULS, CB_IMUL_LATENCY,
            (unsigned long long)(c->n ? c->add : 0), (unsigned long long)(c->n ? c->imul : 0));
    cb_json_u64_array(out, c->shortr, (size_t)c->n);
    fputs(",\"long_ticks\":", out);
    cb_json_u64_array(out, c->longr, (size_t)c->n);
    fputc('}', out);
}

/* ---- output ---- */

static void emit_final(FILE *out, const char *type, const char *reason) {
    cb_emit_head(out, type, request);
    fputs(",\"reason\":", out);
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

static void emit_int_array(FILE *out, const int *v, int n) {
    fputc('[', out);
    for (int i = 0; i < n; i++) fprintf(out, i ? ",%d" : "%d", v[i]);
    fputc(']', out);
}

/* ---- the sampler ---- */

/* Keeps the sampler off the tasks' CPUs when the allowed set has another CPU; else leaves it
 * unpinned (it sleeps nearly all the time). Returns the number of CPUs it was given, 0 when
 * it was left alone. */
static int place_sampler(int *cpus_out, int cap) {
    if (!opt->ncpus) return 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    for (int i = 0; i < opt->ncpus; i++)
        if (opt->cpus[i] < CPU_SETSIZE) CPU_CLR(opt->cpus[i], &set);
    if (CPU_COUNT(&set) == 0) return 0;
    if (sched_setaffinity(0, sizeof set, &set) != 0) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set)) cpus_out[n++] = c;
    return n;
}

typedef struct spawned {
    pthread_t *threads;
    pid_t *pids;
    int n;
} spawned;

/* Threads mode of a test case: one forked process starts the N task threads and waits to be
 * killed. A thread it cannot start fails its task (and counts the rest as set up, so the
 * sampler does not wait for them). */
static void wis_host_main(void) {
    for (int i = 0; i < opt->tasks; i++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, thread_main, (void *)(intptr_t)i);
        if (e) {
            snprintf(sh->slot[i].reason, sizeof sh->slot[i].reason, "cannot start task thread %d: %s", i, strerror(e));
            sh->slot[i].state = ST_FAIL;
            __atomic_add_fetch(&sh->ready.n, opt->tasks - i, __ATOMIC_RELEASE);
            break;
        }
    }
    for (;;) pause();
}

static int spawn(FILE *out, spawned *sp, char *why, size_t cap) {
    int N = opt->tasks;
    if (wis && !opt->processes) {
        fflush(out);
        fflush(stdout);
        fflush(stderr);
        pid_t parent = getpid(), pid = fork();
        if (pid < 0) {
            snprintf(why, cap, "cannot fork the tasks' process: %s", strerror(errno));
            return -1;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);
            wis_host_main();
        }
        wis_host = sp->pids[0] = pid;
        sp->n = 1;
        return 0;
    }
    for (int i = 0; i < N; i++) {
        if (!opt->processes) {
            int e = pthread_create(&sp->threads[i], NULL, thread_main, (void *)(intptr_t)i);
            if (e) {
                snprintf(why, cap, "cannot start task thread %d: %s", i, strerror(e));
                return -1;
            }
        } else {
            fflush(out);
            fflush(stdout);
            fflush(stderr);
            pid_t parent = getpid(), pid = fork();
            if (pid < 0) {
                snprintf(why, cap, "cannot fork task %d: %s", i, strerror(errno));
                return -1;
            }
            if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the sampler */
                if (getppid() != parent) _exit(0);
                task_main(i);
                fflush(stdout);
                fflush(stderr);
                _exit(0);
            }
            sp->pids[i] = pid;
        }
        sp->n = i + 1;
    }
    return 0;
}

/* processes mode: a task gone before the stop. Returns its index, -1 when none. */
static int reap_dead(spawned *sp, int *status) {
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) return -1;
        for (int i = 0; i < sp->n; i++)
            if (sp->pids[i] == pid) {
                sp->pids[i] = 0; /* reaped */
                *status = st;
                return i;
            }
    }
}

static void describe_death(char *buf, size_t cap, int task, int st) {
    if (wis_host && WIFSIGNALED(st))
        snprintf(buf, cap, "a task thread crashed: %s (signal %d)", strsignal(WTERMSIG(st)), WTERMSIG(st));
    else if (wis_host)
        snprintf(buf, cap, "the tasks' process exited with status %d before the end", WEXITSTATUS(st));
    else if (wis && WIFEXITED(st) && !WEXITSTATUS(st))
        snprintf(buf, cap, "task %d: testcase() returned (a will-it-scale test case loops until it is killed)", task);
    else if (WIFSIGNALED(st))
        snprintf(buf, cap, "task %d crashed: %s (signal %d)", task, strsignal(WTERMSIG(st)), WTERMSIG(st));
    else
        snprintf(buf, cap, "task %d exited with status %d before the end", task, WEXITSTATUS(st));
}

static void emit_crash(FILE *out, int task, int st, double t) {
    char msg[160];
    describe_death(msg, sizeof msg, task, st);
    fputs("{\"type\":\"task_crash\",\"task\":", out);
    if (wis_host) fputs("null", out); /* one of the host's threads: which one, the signal does not say */
    else fprintf(out, "%d", task);
    fprintf(out, ",\"signal\":%d,\"exit\":%d,\"t\":%.6f,\"reason\":", WIFSIGNALED(st) ? WTERMSIG(st) : 0,
            WIFEXITED(st) ? WEXITSTATUS(st) : -1, t);
    cb_json_str(out, msg);
    fputs("}\n", out);
    fflush(out);
}

/* {"type":"scale_start",...}: what is about to be sampled, on which CPUs. */
static void emit_start(FILE *out, double per_op_ns, int nwarm, int nmeas, const int *task_cpus,
                       const int *sampler_cpus, int nsampler, int have_stat, const chain_reads *chain) {
    cb_emit_head(out, "scale_start", request);
    fprintf(out,
            ",\"tasks\":%d,\"mode\":\"%s\",\"batch\":%llu,\"batch_per_op_ns\":%.3f,\"interval\":%.6f,"
            "\"warmup_intervals\":%d,\"intervals\":%d,\"block_bytes\":%d,\"unit\":\"%s\",\"cpus\":",
            opt->tasks, opt->processes ? "processes" : "threads", (unsigned long long)batch, per_op_ns, opt->interval,
            nwarm, nmeas, CB_BLOCK, CB_TIMER_UNIT);
    emit_int_array(out, task_cpus, opt->tasks);
    fputs(",\"sampler_cpus\":", out);
    if (nsampler) emit_int_array(out, sampler_cpus, nsampler);
    else fputs("null", out);
    fprintf(out, ",\"schedstat\":%s", have_stat ? "true" : "false");
    if (wis) {
        fputs(",\"wis\":{\"description\":", out);
        cb_json_str(out, cb_wis_description());
        fputc('}', out);
        emit_chain(out, "chain_before", chain);
    }
    fputs("}\n", out);
    fflush(out);
}

/* {"type":"interval",...}: each task's ops (and run/wait ns) during interval k. */
static void emit_interval(FILE *out, int k, double t, double dt, uint64_t ticks, int warmup, const uint64_t *d, int N,
                          int have_stat, const int *ready) {
    fprintf(out, "{\"type\":\"interval\",\"i\":%d,\"t\":%.6f,\"dt\":%.6f,\"ticks\":%llu,\"warmup\":%s,\"deltas\":", k,
            t, dt, (unsigned long long)ticks, warmup ? "true" : "false");
    cb_json_u64_array(out, d, (size_t)N);
    if (have_stat) {
        fputs(",\"run_ns\":", out);
        cb_json_u64_array(out, d + N, (size_t)N);
        fputs(",\"wait_ns\":", out);
        cb_json_u64_array(out, d + 2 * N, (size_t)N);
        fputs(",\"runnable\":", out);
        emit_int_array(out, ready, N);
    }
    fputs("}\n", out);
    fflush(out);
}

/* {"type":"scale_end",...}: totals, the sampler's own cost, and each task's verify result. */
static void emit_end(FILE *out, int done, double sampled, double sampler_cpu, long ivcsw, const char *crash,
                     const chain_reads *chain) {
    cb_emit_head(out, "scale_end", request);
    fprintf(out,
            ",\"tasks\":%d,\"mode\":\"%s\",\"intervals_done\":%d,\"sampled_s\":%.6f,\"sampler_cpu_s\":%.6f,"
            "\"sampler_involuntary_switches\":%ld,\"crashed\":%s,\"crash_reason\":",
            opt->tasks, opt->processes ? "processes" : "threads", done, sampled, sampler_cpu, ivcsw,
            crash ? "true" : "false");
    cb_json_str(out, crash);
    fputs(",\"total_ops\":[", out);
    for (int i = 0; i < opt->tasks; i++) fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)sh->slot[i].total_iters);
    fputs("],\"verified\":[", out);
    for (int i = 0; i < opt->tasks; i++) {
        int v = sh->slot[i].state == ST_DONE ? sh->slot[i].verified : -2;
        fputs(i ? "," : "", out);
        fputs(v == 1 ? "true" : v == 0 ? "false" : "null", out);
    }
    fputs("],\"reasons\":[", out);
    for (int i = 0; i < opt->tasks; i++) {
        fputs(i ? "," : "", out);
        cb_json_str(out, sh->slot[i].state == ST_DONE && sh->slot[i].reason[0] ? sh->slot[i].reason : NULL);
    }
    fputc(']', out);
    if (wis) emit_chain(out, "chain_after", chain);
    fputs("}\n", out);
    fflush(out);
}

/* The benchmark's CPU-feature gate, then its batch size: 0 (a skip or fail line printed) when
 * it cannot run here. */
static uint64_t gate_and_size(FILE *out, double *per_op_ns) {
    char why[320];
    const cb_hook *gate = cb_hook_for(bench, CB_HOOK_REQUIRE);
    if (gate && gate->arg) {
        char missing[128];
        int r = cb_missing_feature(gate->arg, missing, sizeof missing);
        if (r) {
            snprintf(why, sizeof why, r < 0 ? "%s" : "requires CPU feature '%s', absent here", missing);
            emit_final(out, r < 0 ? "fail" : "skip", why);
            return 0;
        }
    }
    int skip = 0;
    uint64_t b = size_batch(opt->batch_ns, per_op_ns, &skip, why, sizeof why);
    if (!b) emit_final(out, skip == 1 ? "skip" : "fail", why);
    return b;
}

/* Joins the threads or reaps the processes; the first process task that died badly (and no
 * earlier one) is reported as the crash. Returns 1 when it reported one. */
static int join_tasks(FILE *out, spawned *sp, int *crashed_task, char *crash, size_t cap) {
    int rc = 0;
    if (wis) /* a test case never returns: its processes (or its threads' host) are killed; helpers die with them */
        for (int i = 0; i < sp->n; i++)
            if (sp->pids[i]) kill(sp->pids[i], SIGKILL);
    for (int i = 0; i < sp->n; i++) {
        if (!opt->processes && !wis) {
            pthread_join(sp->threads[i], NULL);
            continue;
        }
        if (!sp->pids[i]) continue;
        int st;
        while (waitpid(sp->pids[i], &st, 0) < 0 && errno == EINTR) {
        }
        if (wis) continue; /* killed here: a death before was reported as it was seen */
        if ((WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st))) && *crashed_task < 0) {
            *crashed_task = i;
            describe_death(crash, cap, i, st);
            emit_crash(out, i, st, -1);
            rc = 1;
        }
    }
    free(sp->threads);
    free(sp->pids);
    return rc;
}

/* One scaling run (see the file's comment). Long because the sampling loop and its clean-up
 * share a dozen buffers and one exit path (join:); the steps around it are functions above. */
int cb_scale(FILE *out, const cb_request *req, const cb_scale_options *o) {
    request = req;
    opt = o;
    bench = cb_find(req->name);
    wis = bench && bench == cb_wis_bench();
    wis_host = 0;
    int N = o->tasks;
    char why[320];

    double per_op_ns = 0;
    batch = 0; /* a test case has no batches */
    if (!wis && !(batch = gate_and_size(out, &per_op_ns))) return 0;

    size_t size = sizeof(shared) + (size_t)N * sizeof(task_slot);
    sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    spawned sp = {calloc((size_t)N, sizeof(pthread_t)), calloc((size_t)N, sizeof(pid_t)), 0};
    if (sh == MAP_FAILED || !sp.threads || !sp.pids) {
        emit_final(out, "error", "runner: cannot allocate the shared counters");
        return 2;
    }
    memset(sh, 0, size);
    chain_reads before = {0}, after = {0};
    if (wis) {
        if (cb_wis_enter((unsigned long)N, o->processes, why, sizeof why) != 0) {
            emit_final(out, "error", why);
            munmap(sh, size);
            free(sp.threads);
            free(sp.pids);
            return 2;
        }
        time_chain(o->ncpus ? o->cpus[0] : -1, &before);
    }

    int rc = 0, crashed_task = -1, crash_status = 0, nwarm = 0, nmeas = 0, k = 0, nsampler = 0;
    char crash[200] = "";
    static int sampler_cpus[CB_SCALE_MAX_CPUS];
    int *task_cpus = NULL;
    uint64_t *prev = NULL, *cur = NULL; /* [ops | run_ns | wait_ns] × N */
    int *statfd = NULL, *statefd = NULL, *ready = NULL, have_stat = 0;
    long ivcsw0 = 0, ivcsw1 = 0;
    double sampler_cpu = 0, sampled = 0;
    if (spawn(out, &sp, why, sizeof why) != 0) {
        __atomic_store_n(&sh->ctl.stop, 1, __ATOMIC_RELEASE);
        emit_final(out, "error", why);
        rc = 2;
        goto join;
    }
    /* Wait until every task is set up; in processes mode a task may die during its setup. */
    while (__atomic_load_n(&sh->ready.n, __ATOMIC_ACQUIRE) < N) {
        if ((o->processes || wis_host) && (crashed_task = reap_dead(&sp, &crash_status)) >= 0) break;
        sleep_ns(1000 * 1000);
    }
    if (crashed_task >= 0) {
        describe_death(crash, sizeof crash, crashed_task, crash_status);
        emit_crash(out, crashed_task, crash_status, 0);
        __atomic_store_n(&sh->ctl.stop, 1, __ATOMIC_RELEASE);
        rc = 1;
        goto join;
    }
    for (int i = 0; i < N; i++) {
        task_slot *t = &sh->slot[i];
        if (t->state == ST_SKIP || t->state == ST_FAIL) {
            snprintf(why, sizeof why, "task %d: %s", i, t->reason);
            __atomic_store_n(&sh->ctl.stop, 1, __ATOMIC_RELEASE);
            emit_final(out, t->state == ST_SKIP ? "skip" : "fail", why);
            goto join;
        }
    }

    nsampler = place_sampler(sampler_cpus, CB_SCALE_MAX_CPUS);
    task_cpus = malloc((size_t)N * sizeof(int));
    prev = calloc(3 * (size_t)N, sizeof(uint64_t));
    cur = calloc(3 * (size_t)N, sizeof(uint64_t));
    statfd = malloc((size_t)N * sizeof(int));
    statefd = malloc((size_t)N * sizeof(int));
    ready = calloc((size_t)N, sizeof(int));
    if (!task_cpus || !prev || !cur || !statfd || !statefd || !ready) {
        __atomic_store_n(&sh->ctl.stop, 1, __ATOMIC_RELEASE);
        emit_final(out, "error", "runner: out of memory");
        rc = 2;
        goto join;
    }
    have_stat = 1;
    for (int i = 0; i < N; i++) {
        char dir[48], path[64];
        task_cpus[i] = sh->slot[i].cpu;
        if (wis_host) snprintf(dir, sizeof dir, "/proc/%d/task/%d", (int)wis_host, sh->slot[i].tid);
        else if (o->processes) snprintf(dir, sizeof dir, "/proc/%d", (int)sp.pids[i]);
        else snprintf(dir, sizeof dir, "/proc/self/task/%d", sh->slot[i].tid);
        snprintf(path, sizeof path, "%s/schedstat", dir);
        statfd[i] = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "%s/stat", dir);
        statefd[i] = open(path, O_RDONLY | O_CLOEXEC);
        have_stat &= schedstat(statfd[i], &prev[N + i], &prev[2 * N + i]) && statefd[i] >= 0;
    }
    nwarm = (int)(o->warmup / o->interval + 0.999999);
    nmeas = (int)(o->duration / o->interval + 0.5);
    if (nmeas < 1) nmeas = 1;
    emit_start(out, per_op_ns, nwarm, nmeas, task_cpus, sampler_cpus, nsampler, have_stat, &before);

    double cpu0 = thread_cpu_s(&ivcsw0);
    uint64_t t0 = mono_ns(), tprev = t0, interval_ns = (uint64_t)(o->interval * 1e9), tick_prev = cb_timer_start();
    for (int i = 0; have_stat && i < N; i++) schedstat(statfd[i], &prev[N + i], &prev[2 * N + i]);
    __atomic_store_n(&sh->ctl.start, 1, __ATOMIC_RELEASE);
    /* every task has counted by the start of interval k (the warm-up goes on until then) */
    int counting = N == 0, measured = 0;
    uint64_t extra = interval_ns ? WARMUP_EXTRA_NS / interval_ns : 0;
    for (k = 1; measured < nmeas; k++) {
        int warm = k <= nwarm || (!counting && (uint64_t)k <= (uint64_t)nwarm + extra);
        uint64_t deadline = t0 + (uint64_t)k * interval_ns;
        struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        uint64_t tnow = mono_ns(), tick = cb_timer_start();
        int all = 1;
        for (int i = 0; i < N; i++) {
            cur[i] = __atomic_load_n(&sh->slot[i].ops, __ATOMIC_RELAXED);
            all &= cur[i] > 0;
        }
        for (int i = 0; have_stat && i < N; i++) {
            schedstat(statfd[i], &cur[N + i], &cur[2 * N + i]);
            ready[i] = runnable(statefd[i]);
        }
        for (int i = 0; i < (have_stat ? 3 : 1) * N; i++) {
            uint64_t c = cur[i];
            cur[i] = c - prev[i];
            prev[i] = c;
        }
        emit_interval(out, k, (double)(tnow - t0) / 1e9, (double)(tnow - tprev) / 1e9, tick - tick_prev, warm, cur, N,
                      have_stat, ready);
        measured += !warm;
        counting = all;
        tprev = tnow;
        tick_prev = tick;
        if ((o->processes || wis_host) && (crashed_task = reap_dead(&sp, &crash_status)) >= 0) {
            describe_death(crash, sizeof crash, crashed_task, crash_status);
            emit_crash(out, crashed_task, crash_status, (double)(tnow - t0) / 1e9);
            rc = 1;
            k++;
            break;
        }
    }
    sampler_cpu = thread_cpu_s(&ivcsw1) - cpu0;
    sampled = (double)(mono_ns() - t0) / 1e9;
    __atomic_store_n(&sh->ctl.stop, 1, __ATOMIC_RELEASE);

join:
    if (join_tasks(out, &sp, &crashed_task, crash, sizeof crash)) rc = 1;
    int started = __atomic_load_n(&sh->ctl.start, __ATOMIC_ACQUIRE);
    if (wis) {
        if (started) time_chain(before.cpu, &after);
        for (int i = 0; i < N; i++) sh->slot[i].total_iters = __atomic_load_n(&sh->slot[i].ops, __ATOMIC_RELAXED);
    }
    if (!started) { /* never started: the lines above said why */
        cb_wis_leave();
        free(task_cpus);
        free(prev);
        free(cur);
        free(statfd);
        free(statefd);
        free(ready);
        munmap(sh, size);
        return rc;
    }
    emit_end(out, k - 1, sampled, sampler_cpu, ivcsw1 - ivcsw0, crashed_task >= 0 ? crash : NULL, &after);
    /* After the end line: a testcase_cleanup() that hangs costs the run its time limit, not its intervals. */
    cb_wis_leave(); /* testcase_cleanup(), then the private directory goes (nothing without a test case) */
    free(task_cpus);
    free(prev);
    free(cur);
    for (int i = 0; i < N; i++) {
        if (statfd[i] >= 0) close(statfd[i]);
        if (statefd[i] >= 0) close(statefd[i]);
    }
    free(statfd);
    free(statefd);
    free(ready);
    munmap(sh, size);
    return rc;
}

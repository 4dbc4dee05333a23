/* runner.c — the cyclebench runner: lists, calibrates and measures benchmarks.
 *
 * Protocol: argv in, JSON lines out (one object per line on the original stdout;
 * fd 1 is pointed at stderr so a benchmark that prints cannot corrupt the stream).
 *   runner --list                      {"type":"bench",...} per benchmark
 *   runner --calibrate                 {"type":"calibration",...}: timer, its cost, TSC rate
 *   runner --features                  {"type":"features",...}: what the CB_REQUIRE gates see, and
 *                                      "malloc": the file whose malloc this process calls
 *   runner --run NAME [--param P] [--run NAME2 [--param P2] ...] [options]
 *                                      {"type":"result"|"skip"|"fail"|"error",...} per --run;
 *                                      several --run are measured interleaved (measure.c)
 *   --fifo PRIO                        SCHED_FIFO at PRIO, with RLIMIT_RTTIME as a safety net
 *   --events SPEC                      counter groups read around every batch (perf.c)
 *   --sim N                            under callgrind: batches of N and 2N collected (simulate.c)
 *   runner --scale NAME [--param P] --tasks N --mode threads|processes --duration S --interval S
 *          --warmup S [--cpus 0,1,...] [--batch-ns NS]
 *                                      scaling mode (scale.c): {"type":"interval",...} per interval,
 *                                      then {"type":"scale_end",...}; exit 1 when a task crashed
 * Exit status: 0 when the lines describe the outcome (even skip/fail), 2 on bad usage.
 * How a number is made: measure.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "json.h"
#include "measure.h"
#include "simulate.h"
#include "registry.h"
#include "scale.h"
#include "timer.h"

static FILE *out;

static void emit_error(const char *bench, const char *reason) {
    fputs("{\"type\":\"error\",\"bench\":", out);
    cb_json_str(out, bench);
    fputs(",\"reason\":", out);
    cb_json_str(out, reason);
    fputs("}\n", out);
    fflush(out);
}

/* ---- calibration ---- */

static void calibrate(void) {
    uint64_t omin, omed;
    cb_timer_overhead(&omin, &omed);
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
    /* The timer's rate measured against CLOCK_MONOTONIC_RAW over ~20 ms: each end is two
     * adjacent reads (~50 ns apart), so 20 ms resolve the rate to ~5e-6, far inside the 1% it
     * checks cpuid's and the kernel's figures against; 100 ms cost every command 0.1 s. */
    uint64_t n0 = cb_now_ns(), t0 = cb_timer_start();
    struct timespec req = {0, 20 * 1000 * 1000};
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
            "\"timer_overhead\":{\"min\":%llu,\"median\":%llu}",
            CB_TIMER_NAME, CB_TIMER_UNIT, cb_have_rdtscp ? "true" : "false", invariant, cpuid_hz, base_mhz,
            arch_hz, measured, (unsigned long long)(n1 - n0), (unsigned long long)omin,
            (unsigned long long)omed);
    if (cb_fault) fprintf(out, ",\"fault\":\"%s\"", cb_fault);
    fputs("}\n", out);
    fflush(out);
}

/* ---- CPU features, as the gates see them ---- */

static void features(void) {
    static const char *names[] = {"x86_64", "aarch64", "sse2", "sse4.2", "avx", "avx2", "avx512f", "bmi2",
                                  "erms", "fsrm", "cx16", "rdtscp", "invariant_tsc", "lse"};
    fputs("{\"type\":\"features\"", out);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) fprintf(out, ",\"%s\":%d", names[i], cb_cpu_has(names[i]));
    /* the allocator in use, as the dynamic linker resolved it (--allocator checks it: a library
     * linked but not first in the lookup order would leave glibc's malloc measured) */
    Dl_info info;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    if (m && dladdr(m, &info) && info.dli_fname) {
        fputs(",\"malloc\":", out);
        cb_json_str(out, info.dli_fname);
    }
    fputs("}\n", out);
    fflush(out);
}

/* ---- listing ---- */

static void list(void) {
    for (int i = 0; i < cb_nbenches(); i++) {
        const cb_bench *b = cb_bench_at(i);
        const cb_hook *req = cb_hook_for(b, CB_HOOK_REQUIRE);
        fputs("{\"type\":\"bench\",\"name\":", out);
        char full[512]; /* escaped like every string (a '"' in a name once lost the benchmark) */
        snprintf(full, sizeof full, "%s/%s", b->group, b->name);
        cb_json_str(out, full);
        fputs(",\"group\":", out);
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

/* ---- real-time priority ---- */

static int usage_error(const char *msg);

/* SCHED_FIFO keeps ordinary tasks off the CPU while a batch runs. A runaway benchmark
 * would then own the CPU, so RLIMIT_RTTIME (sched(7)) bounds the CPU time it may use
 * without blocking: SIGXCPU at the soft limit, SIGKILL at the hard one. */
static int set_fifo(int prio, const cb_options *o) {
    rlim_t us = (rlim_t)((o->max_time * 3 + o->warmup + 10) * 1e6);
    struct rlimit rl = {us, us + 1000000};
    struct sched_param sp = {.sched_priority = prio};
    char msg[200];
    if (setrlimit(RLIMIT_RTTIME, &rl) != 0) {
        snprintf(msg, sizeof msg, "--fifo: cannot set RLIMIT_RTTIME: %s", strerror(errno));
        return usage_error(msg);
    }
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
        snprintf(msg, sizeof msg, "--fifo: %s: SCHED_FIFO needs root or CAP_SYS_NICE (or RLIMIT_RTPRIO >= %d)",
                 strerror(errno), prio);
        return usage_error(msg);
    }
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

/* --cpus 0,2,4: the CPUs of the scaling tasks, in order of use. Returns the count, -1 when bad. */
static int parse_cpus(const char *s, int *cpus, int cap) {
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 0 || v >= CPU_SETSIZE || n == cap || (*end && *end != ',')) return -1;
        cpus[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* ---- command line ---- */

typedef struct {
    cb_options o;
    cb_request req[CB_MAX_JOBS];
    int nreq, cpu, fifo, do_list, do_cal, do_features, do_probe, do_scale;
    int64_t sim; /* --sim N: callgrind mode with batches of N and 2N */
    int scale_cpus[CB_SCALE_MAX_CPUS];
    cb_scale_options so;
} args;

/* Parses argv into *a; returns 0, or the exit status of a usage error (already reported). */
static int parse_args(int argc, char **argv, args *a) {
    static const struct option longopts[] = {
        {"list", no_argument, 0, 'l'},          {"calibrate", no_argument, 0, 'c'},
        {"features", no_argument, 0, 'f'},
        {"run", required_argument, 0, 'r'},     {"param", required_argument, 0, 'p'},
        {"cpu", required_argument, 0, 'C'},     {"min-time", required_argument, 0, 't'},
        {"max-time", required_argument, 0, 'T'}, {"warmup", required_argument, 0, 'w'},
        {"min-batch-ns", required_argument, 0, 'b'}, {"repeat", required_argument, 0, 'R'},
        {"ladder", required_argument, 0, 'L'},  {"seed", required_argument, 0, 's'},
        {"fifo", required_argument, 0, 'F'},
        {"scale", required_argument, 0, 'S'},   {"tasks", required_argument, 0, 'N'},
        {"mode", required_argument, 0, 'M'},    {"duration", required_argument, 0, 'D'},
        {"interval", required_argument, 0, 'I'}, {"cpus", required_argument, 0, 'P'},
        {"batch-ns", required_argument, 0, 'B'}, {"sim", required_argument, 0, 'Z'},
        {"events", required_argument, 0, 'E'}, {"probe", no_argument, 0, 'Q'},
        {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int64_t v;
        double d;
        switch (c) {
        case 'l': a->do_list = 1; break;
        case 'c': a->do_cal = 1; break;
        case 'f': a->do_features = 1; break;
        case 'S': /* a request like --run (so --param follows it), measured by scale.c */
            a->do_scale = 1;
            /* fall through */
        case 'r':
            if (a->nreq == CB_MAX_JOBS) return usage_error("too many --run (at most 16)");
            a->req[a->nreq++] = (cb_request){optarg, 0, 0};
            break;
        case 'p':
            if (!a->nreq) return usage_error("--param must follow a --run");
            if (!parse_i64(optarg, &a->req[a->nreq - 1].param)) return usage_error("--param: not an integer");
            a->req[a->nreq - 1].has_param = 1;
            break;
        case 'C':
            if (!parse_i64(optarg, &v) || v < 0) return usage_error("--cpu: not a CPU number");
            a->cpu = (int)v;
            break;
        case 'E': {
            static cb_perf_groups groups;
            char msg[160];
            if (cb_perf_parse(&groups, optarg, msg, sizeof msg) != 0) return usage_error(msg);
            a->o.perf = &groups;
            break;
        }
        case 'Q': a->do_probe = 1; break;
        case 'Z':
            if (!parse_i64(optarg, &a->sim) || a->sim < 1) return usage_error("--sim: batch size >= 1");
            break;
        case 'F':
            if (!parse_i64(optarg, &v) || v < 1 || v > 99) return usage_error("--fifo: priority 1..99");
            a->fifo = (int)v;
            break;
        case 't': if (!parse_double(optarg, &a->o.min_time)) return usage_error("--min-time: bad number"); break;
        case 'T': if (!parse_double(optarg, &a->o.max_time)) return usage_error("--max-time: bad number"); break;
        case 'w': if (!parse_double(optarg, &a->o.warmup)) return usage_error("--warmup: bad number"); break;
        case 'b':
            if (!parse_double(optarg, &d)) return usage_error("--min-batch-ns: bad number");
            a->o.min_batch_ns = (uint64_t)d;
            break;
        case 'R':
            if (!parse_i64(optarg, &v) || v < 1 || v > 100000) return usage_error("--repeat: 1..100000");
            a->o.repeat = (int)v;
            break;
        case 'L':
            if (!parse_i64(optarg, &v) || v < 2 || v > 64) return usage_error("--ladder: 2..64");
            a->o.ladder = (int)v;
            break;
        case 's':
            if (!parse_i64(optarg, &v)) return usage_error("--seed: not an integer");
            a->o.seed = (uint64_t)v;
            break;
        case 'N':
            if (!parse_i64(optarg, &v) || v < 1 || v > CB_SCALE_MAX_TASKS) return usage_error("--tasks: 1..1024");
            a->so.tasks = (int)v;
            break;
        case 'M':
            if (strcmp(optarg, "threads") && strcmp(optarg, "processes"))
                return usage_error("--mode: threads or processes");
            a->so.processes = !strcmp(optarg, "processes");
            break;
        case 'D':
            if (!parse_double(optarg, &a->so.duration) || a->so.duration <= 0)
                return usage_error("--duration: seconds > 0");
            break;
        case 'I':
            if (!parse_double(optarg, &a->so.interval) || a->so.interval < 0.001)
                return usage_error("--interval: seconds >= 0.001");
            break;
        case 'P':
            if ((a->so.ncpus = parse_cpus(optarg, a->scale_cpus, CB_SCALE_MAX_CPUS)) < 1)
                return usage_error("--cpus: a comma-separated list of CPU numbers");
            break;
        case 'B':
            if (!parse_double(optarg, &a->so.batch_ns) || a->so.batch_ns < 1)
                return usage_error("--batch-ns: bad number");
            break;
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
    return 0;
}

/* Pins to --cpu and applies --fifo; returns 0 or the exit status of the error (reported). */
static int setup_process(args *a) {
    if (a->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(a->cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "cannot pin to CPU %d: %s", a->cpu, strerror(errno));
            return usage_error(msg);
        }
    }
    if (a->fifo && set_fifo(a->fifo, &a->o) != 0) return 2;
    return 0;
}

/* --probe: which counter groups open here: {"type":"probe","open_errors":[...]} */
static int probe(args *a) {
    if (!a->o.perf) return usage_error("--probe needs --events");
    cb_perf_open(a->o.perf);
    fputs("{\"type\":\"probe\",\"open_errors\":[", out);
    for (int i = 0; i < a->o.perf->ngroups; i++) {
        if (i) fputc(',', out);
        cb_json_str(out, a->o.perf->fd[i] >= 0 ? NULL : strerror(a->o.perf->error[i]));
    }
    fputs("]}\n", out);
    fflush(out);
    return 0;
}

/* Every --run names a benchmark and gives --param exactly when it takes one. */
static int check_requests(args *a) {
    if (!a->nreq) return usage_error("nothing to do: --list, --calibrate or --run NAME");
    for (int i = 0; i < a->nreq; i++) {
        const cb_bench *b = cb_find(a->req[i].name);
        char msg[300];
        if (!b) {
            snprintf(msg, sizeof msg, "unknown benchmark '%.200s'", a->req[i].name);
            emit_error(a->req[i].name, msg);
            return 2;
        }
        if (b->nparams && !a->req[i].has_param) {
            snprintf(msg, sizeof msg, "%.200s takes --param", a->req[i].name);
            return usage_error(msg);
        }
        if (!b->nparams && a->req[i].has_param) {
            snprintf(msg, sizeof msg, "%.200s takes no --param", a->req[i].name);
            return usage_error(msg);
        }
    }
    return 0;
}

/* SIGKILL every child of this process (every thread's list, /proc/PID/task/TID/children, proc(5));
 * returns how many it found. */
static int kill_children(void) {
    int found = 0;
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return 0;
    struct dirent *t;
    while ((t = readdir(tasks))) {
        if (t->d_name[0] == '.') continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", t->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) {
            kill((pid_t)pid, SIGKILL);
            found++;
        }
        fclose(f);
    }
    closedir(tasks);
    return found;
}

/* Kill everything below this subreaper: each child killed, reaped; what it left (its children)
 * is reparented here and killed next, until no child is left. */
static void kill_descendants(void) {
    for (;;) {
        kill_children();
        pid_t r;
        while ((r = waitpid(-1, NULL, WNOHANG)) > 0) {}
        if (r < 0 && errno == ECHILD) return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static volatile pid_t supervised;

static void supervisor_stop(int sig) {
    (void)sig;
    if (supervised > 0) kill(supervised, SIGKILL); /* waitpid below returns; the tree goes next */
}

/* A body that daemonizes (double fork and setsid, daemon(7)) or moves to its own process group
 * is out of reach of a kill of the runner's session or group, and outlived the run (one copy per
 * runner process). So under cyclebench (CYCLEBENCH_PARENT_PID set) this process becomes a child
 * subreaper (prctl(2) PR_SET_CHILD_SUBREAPER: every orphan below it is reparented to it, not to
 * init) and forks the real runner; once that has ended, however it ended, it kills every process
 * left below it and ends the same way (exit status or signal). cyclebench gone (PR_SET_PDEATHSIG
 * SIGTERM) or a SIGTERM: the runner is killed, then its tree. cyclebench's own kill at a timeout
 * stops the whole tree before killing it (runner/child.py), this process included. Returns in the
 * runner; without CYCLEBENCH_PARENT_PID (under perf, valgrind, by hand) it runs unsupervised. */
static void supervise(pid_t parent) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return; /* Linux < 3.4: unsupervised */
    struct sigaction sa = {.sa_handler = supervisor_stop}; /* no SA_RESTART: waitpid sees EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(2);
    pid_t self = getpid(), pid = fork();
    if (pid < 0) {
        signal(SIGTERM, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        return; /* cannot fork: unsupervised */
    }
    if (pid == 0) { /* the runner: dies with the supervisor, the supervisor's way */
        signal(SIGTERM, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != self) _exit(2);
        return;
    }
    supervised = pid;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, 0);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            st = 2 << 8; /* exit 2 */
            break;
        }
    }
    supervised = 0;
    kill_descendants();
    if (WIFSIGNALED(st)) { /* the same death, without a second core dump */
        int sig = WTERMSIG(st);
        prctl(PR_SET_DUMPABLE, 0);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
}

int main(int argc, char **argv) {
    /* Die with whoever started us (cyclebench, perf, valgrind): a hung body otherwise spins on
     * its pinned CPU forever once the CLI is killed. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* cyclebench died before prctl: nobody would read or stop us (the pid it gave, not "1": it
     * may itself be pid 1 in a container) */
    const char *parent = getenv("CYCLEBENCH_PARENT_PID");
    if (parent && getppid() != (pid_t)atol(parent)) return 2;
    if (parent) supervise((pid_t)atol(parent));
    /* The protocol stream is private: a body's stray write to a low fd or an exec'd helper
     * must not reach it. */
    int fd = fcntl(1, F_DUPFD_CLOEXEC, 100); /* not fd 3, where a stray write lands */
    out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        perror("cyclebench runner: stdout");
        return 2;
    }
    dup2(2, 1); /* anything a benchmark prints goes to stderr, never into the protocol */
#if defined(__x86_64__)
    cb_have_rdtscp = cb_cpu_has("rdtscp") == 1;
#endif
    cb_fault_init();

    static args a = {.o = {.min_time = 0.05, .max_time = 10, .warmup = 0.01, .min_batch_ns = 2000, .repeat = 40,
                           .ladder = 8, .seed = 0},
                     .cpu = -1,
                     .so = {.tasks = 1, .duration = 1, .interval = 0.1, .batch_ns = 20000}};
    a.so.cpus = a.scale_cpus;
    int rc = parse_args(argc, argv, &a);
    if (rc || (rc = setup_process(&a))) return rc;
    if (a.do_list) {
        list();
        return 0;
    }
    if (a.do_probe) return probe(&a);
    if (a.do_features) {
        features();
        return 0;
    }
    if (a.do_cal) {
        calibrate();
        return 0;
    }
    if ((rc = check_requests(&a))) return rc;
    if (a.sim) {
        for (int i = 0; i < a.nreq; i++) cb_simulate(out, &a.req[i], (uint64_t)a.sim);
        return 0;
    }
    if (!a.o.seed) a.o.seed = cb_now_ns() | 1;
    if (a.do_scale) {
        if (a.nreq != 1) return usage_error("--scale takes one benchmark and no --run");
        a.so.warmup = a.o.warmup;
        return cb_scale(out, &a.req[0], &a.so);
    }
    return cb_measure(out, a.req, a.nreq, &a.o);
}

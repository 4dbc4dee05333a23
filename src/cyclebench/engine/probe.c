/* probe.c — cyclebench's own profiling probe (`cyclebench profile`, docs/method.md §10).
 *
 * A shared library (build/probe.py: libcbprobe.so, with probe_cal.c) that a program built with
 * gcc's or clang's -finstrument-functions gets through LD_PRELOAD: it defines the entry and
 * exit hooks the compiler calls in every instrumented function (gcc manual, "Program
 * Instrumentation Options"), in place of glibc's empty ones.
 *
 * Each hook writes one event, {timestamp, function address}, into its thread's own trace: a
 * file of CB_PROBE_DIR mapped shared, so a program that crashes keeps what it recorded. The
 * timestamp is the engine's clock (timer.h: a fenced TSC read on x86-64), taken last on entry
 * and first on exit, so a call's span holds as little of the probe as the hooks allow. The
 * trace is pre-faulted a chunk at a time, and the time that takes is marked (a pause) so the
 * reader takes it out of the function it fell in: first-touch page faults in the calls
 * themselves cost 1.3–2.9 ms of self time in uftrace's buffers.
 *
 * The probe's cost is measured in the profiled process itself (Evans 2008,
 * docs/references.md#malloc-profiling-freebsd-2008: "profiling has subtracted its own
 * overheads"): before main (a constructor) and after it (a destructor), CBP_BLOCKS blocks of
 * calls of known cost (probe_cal.c) are made through the same hooks into the same trace, marked
 * as calibration, beside uninstrumented twins timed directly and an add chain that gives the
 * core clock per tick (cycles~); while the program runs, a tenth of a block is interleaved every
 * CBP_GAP ticks of a busy thread (cbp_room). uftrace's probe, measured in other processes, moved
 * between processes by more than the bodies it was subtracted from (docs/method.md §10).
 * CB_PROBE_CLOCK=1: the core clock alone, around a program that is not instrumented.
 *
 * fork: the child writes a trace of its own, opened with the frames it inherited (entered in
 * the parent: the reader counts them to the parent, not the child). An exec starts afresh
 * (LD_PRELOAD is inherited). Threads: one trace each, opened at the thread's first event.
 *
 * Files (read by runner/probe.py): t-PID-TID.cbp (16-byte events; all zero after the last),
 * proc-PID.txt (one line per fact: clock pairs, calibration blocks, the calibration functions'
 * addresses), maps-PID.txt (a copy of /proc/self/maps, for the symbols), s-PID-TID.bin (the
 * thread's context switches, perf's records). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "timer.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define CBP_EXIT (1ull << 63)
#define CBP_MARK (1ull << 62) /* fn holds a mark's code; with CBP_EXIT: a frame inherited at fork */
#define CBP_HELD (CBP_MARK | CBP_EXIT)
enum { CBP_PAUSE = 1, CBP_RESUME = 2, CBP_CAL_BEGIN = 3, CBP_CAL_END = 4, CBP_FULL = 5 };

#define CBP_CHUNK (1u << 16)    /* events pre-faulted at a time: 1 MiB */
#define CBP_SLACK 4096          /* events kept pre-faulted ahead: more than a calibration block writes */
#define CBP_EVERY 4096          /* events between looks at the clock for an interleaved block */
#define CBP_GAP (300u * 1000u)  /* ticks between interleaved blocks (~115 µs at 2.6 GHz) */
#define CBP_MINI 10             /* an interleaved block: a tenth of one before or after the program */
#define CBP_CAP_DEFAULT (1u << 25) /* events a thread may record (CB_PROBE_EVENTS): 512 MiB of file */
#define CBP_BLOCKS 8            /* calibration blocks before main, and as many after */
#define CBP_N 1000              /* calls of each leaf kind in a block */
#define CBP_NFAN 200
#define CBP_NTOP 40
#define CBP_REPS 15             /* timed repeats of each plain loop: their median */
#define CBP_PLAIN_N 200         /* calls in a timed plain loop: 55 µs of the 1000-add chain at 3.6 GHz */
#define CBP_DEPTH 4096          /* frames a fork can hand on */

struct cbp_ev {
    uint64_t tsc;
    uint64_t fn;
};

struct cbp_thread {
    struct cbp_ev *ev;
    uint64_t n;      /* events written */
    uint64_t ready;  /* the hooks take the slow path (cbp_room) at this many */
    uint64_t filled; /* events pre-faulted */
    uint64_t cap;    /* events the file holds */
    uint64_t last_cal; /* when this thread last calibrated (ticks) */
    int off;         /* nothing more is recorded */
    int in_cal;      /* inside a calibration block: no block within it */
};

/* Time off the CPU is no function's cost (docs/method.md §10): each thread's context switches,
 * as the kernel records them (perf_event_open(2): a software dummy event with context_switch,
 * PERF_RECORD_SWITCH with a CLOCK_MONOTONIC time), into a ring of CBP_RING_PAGES written out at
 * exit (s-PID-TID.bin). A ring that fills drops the records past it (the kernel counts them). */
#define CBP_RING_PAGES 256 /* 1 MiB: ~65k switches */
#define CBP_WATCHED 4096
static struct {
    long tid;
    void *ring;
} cbp_watched[CBP_WATCHED];
static int cbp_nwatched;

static __thread struct cbp_thread cbp_t __attribute__((tls_model("initial-exec")));
static char cbp_dir[3072];
static int cbp_on;
static uint64_t cbp_cap = CBP_CAP_DEFAULT;

#define HOOK __attribute__((no_instrument_function))

/* The stamps: on x86-64 an entry's `rdtsc; lfence` (the body starts after the read) and an
 * exit's `lfence; rdtsc` (the body has completed before it), so no body overlaps the probe: a
 * 300-add chain and an empty body then carry the same probe within ~2 cycles~ here (AMD EPYC
 * Zen 4 guest), where an unfenced rdtsc was hidden by a chain's adds (a probe of 36 cycles~ in
 * an empty body, -1…+6 in a chain). The fence before the entry's read and after the exit's (the
 * engine's timer, timer.h) would add ~70 cycles~ to every call's caller for nothing measured. */
static inline HOOK uint64_t cbp_stamp(void) { return cb_timer_start(); }
#if defined(__x86_64__)
static inline HOOK uint64_t cbp_in(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
static inline HOOK uint64_t cbp_out(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
#else
#define cbp_in cbp_stamp
#define cbp_out cbp_stamp
#endif

static HOOK void cbp_fill(struct cbp_ev *from, size_t events) {
    if (madvise(from, events * sizeof *from, MADV_POPULATE_WRITE) == 0) return;
    for (size_t i = 0; i < events; i += 4096 / sizeof *from) ((volatile struct cbp_ev *)from)[i].fn = 0;
}

static HOOK void cbp_watch(void) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.sample_type = PERF_SAMPLE_TIME;
    a.sample_id_all = 1;
    a.context_switch = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return;
    size_t len = (size_t)(1 + CBP_RING_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int k = ring == MAP_FAILED ? CBP_WATCHED : __atomic_fetch_add(&cbp_nwatched, 1, __ATOMIC_RELAXED);
    if (k >= CBP_WATCHED) {
        if (ring != MAP_FAILED) munmap(ring, len);
        close(fd);
        return;
    }
    cbp_watched[k].tid = (long)syscall(SYS_gettid);
    __atomic_store_n(&cbp_watched[k].ring, ring, __ATOMIC_RELEASE);
}

/* Each watched thread's switch records as the kernel wrote them (the data area from its start:
 * the tail is never moved, so the ring never wraps) */
static HOOK void cbp_dump_switches(void) {
    int n = __atomic_load_n(&cbp_nwatched, __ATOMIC_ACQUIRE);
    for (int k = 0; k < n && k < CBP_WATCHED; k++) {
        struct perf_event_mmap_page *m = __atomic_load_n(&cbp_watched[k].ring, __ATOMIC_ACQUIRE);
        if (m == NULL) continue;
        uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
        uint64_t size = m->data_size ? m->data_size : (uint64_t)CBP_RING_PAGES * (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t off = m->data_offset ? m->data_offset : (uint64_t)sysconf(_SC_PAGESIZE);
        char path[3200];
        snprintf(path, sizeof path, "%s/s-%ld-%ld.bin", cbp_dir, (long)getpid(), cbp_watched[k].tid);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) continue;
        const char *p = (const char *)m + off;
        uint64_t len = head < size ? head : size;
        while (len > 0) {
            ssize_t w = write(fd, p, len);
            if (w <= 0) break;
            p += w;
            len -= (uint64_t)w;
        }
        close(fd);
    }
}

static HOOK int cbp_open(struct cbp_thread *t) {
    char path[3200];
    t->off = 1;
    if (!cbp_on) return 0;
    snprintf(path, sizeof path, "%s/t-%ld-%ld.cbp", cbp_dir, (long)getpid(), (long)syscall(SYS_gettid));
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    if (ftruncate(fd, (off_t)(cbp_cap * sizeof(struct cbp_ev))) != 0) {
        close(fd);
        return 0;
    }
    void *p = mmap(NULL, cbp_cap * sizeof(struct cbp_ev), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return 0;
    t->ev = p;
    t->n = 0;
    t->cap = cbp_cap;
    cbp_fill(t->ev, CBP_CHUNK);
    t->filled = CBP_CHUNK;
    t->ready = CBP_EVERY;
    t->last_cal = cbp_stamp();
    t->off = 0;
    cbp_watch();
    return 1;
}

static HOOK void cbp_put(struct cbp_thread *t, uint64_t code) {
    t->ev[t->n].fn = code;
    t->ev[t->n].tsc = cbp_stamp() | CBP_MARK;
    t->n++;
}

static HOOK void cbp_block(int side, int k, int div);
static int cbp_during;

/* The slow path, every CBP_EVERY events: the thread's first event (open its trace); the next
 * chunk pre-faulted when the slack runs low, and a calibration block when CBP_GAP ticks have
 * passed since the last, both marked (a pause; a calibration) so the reader takes their time out
 * of the function they fell in. 0: nothing is recorded (no CB_PROBE_DIR, or the trace is full). */
static HOOK int cbp_room(struct cbp_thread *t) {
    if (t->off) return 0;
    if (t->ev == NULL) return cbp_open(t);
    if (t->filled - t->n < CBP_SLACK) {
        cbp_put(t, CBP_PAUSE);
        if (t->filled + CBP_CHUNK > t->cap) {
            cbp_put(t, CBP_FULL);
            t->off = 1;
            return 0;
        }
        cbp_fill(t->ev + t->filled, CBP_CHUNK);
        t->filled += CBP_CHUNK;
        cbp_put(t, CBP_RESUME);
    }
    t->ready = t->filled - 2; /* the block's own events go through the hooks: room for them, no recursion */
    if (!t->in_cal && cbp_stamp() - t->last_cal > CBP_GAP) {
        t->in_cal = 1;
        cbp_block(2, __atomic_fetch_add(&cbp_during, 1, __ATOMIC_RELAXED), CBP_MINI);
        t->in_cal = 0;
        t->last_cal = cbp_stamp();
    }
    t->ready = t->n + CBP_EVERY < t->filled - CBP_SLACK / 2 ? t->n + CBP_EVERY : t->filled - 2;
    return 1;
}

HOOK void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    struct cbp_thread *t = &cbp_t;
    if (__builtin_expect(t->n >= t->ready, 0) && !cbp_room(t)) return;
    struct cbp_ev *e = &t->ev[t->n++];
    e->fn = (uint64_t)(uintptr_t)fn;
    e->tsc = cbp_in();
}

HOOK void __cyg_profile_func_exit(void *fn, void *site) {
    (void)site;
    uint64_t now = cbp_out();
    struct cbp_thread *t = &cbp_t;
    if (__builtin_expect(t->n >= t->ready, 0)) {
        if (!cbp_room(t)) return;
        now = cbp_out(); /* after the pause it marked: the pause is taken out, not the call's end */
    }
    struct cbp_ev *e = &t->ev[t->n++];
    e->fn = (uint64_t)(uintptr_t)fn;
    e->tsc = now | CBP_EXIT;
}

static HOOK void cbp_mark(uint64_t code) {
    struct cbp_thread *t = &cbp_t;
    if (t->n >= t->ready && !cbp_room(t)) return;
    cbp_put(t, code);
}

/* ------------------------------------------------------------------ calibration */
HOOK __attribute__((noinline)) void cbp_plain(void) { __asm__ volatile(""); }

static HOOK __attribute__((noinline)) uint64_t cbp_chain_plain(uint64_t x, uint64_t y) {
    __asm__ volatile(CBP_CHAIN(300) : "+r"(x) : "r"(y));
    return x;
}

static HOOK __attribute__((noinline)) uint64_t cbp_chain1000_plain(uint64_t x, uint64_t y) {
    __asm__ volatile(CBP_CHAIN(1000) : "+r"(x) : "r"(y));
    return x;
}

static HOOK int cbp_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static HOOK double cbp_median(double *r, int n) {
    qsort(r, (size_t)n, sizeof r[0], cbp_cmp);
    return r[n / 2];
}

/* ticks per call of `what` (0: cbp_plain, 1: the 300-add chain, 2: the 1000-add chain) in a
 * timed loop of CBP_PLAIN_N calls */
static HOOK double cbp_loop(int what, int calls) {
    uint64_t x = 0, t0 = cb_timer_start();
    for (int i = 0; i < calls; i++) {
        if (what == 0) cbp_plain();
        else if (what == 1) x = cbp_chain_plain(x, 1);
        else x = cbp_chain1000_plain(x, 1);
    }
    uint64_t t1 = cb_timer_start();
    __asm__ volatile("" : : "r"(x));
    return (double)(t1 - t0) / calls;
}

/* The plain twins of a block, each the median of CBP_REPS loops (a loop the host slowed is one
 * of them): ticks per plain call and per plain 300-add chain, and core cycles per tick, the
 * median of CBP_REPS pairs of loops timed back to back (700 more adds, 700 more cycles: the
 * loop's and the call's own cost cancel; a pair shares the host's moment). */
static HOOK void cbp_plain_figures(double *call, double *chain, double *ratio, int div) {
    double c[CBP_REPS], h[CBP_REPS], r[CBP_REPS];
    int reps = div > 1 ? 5 : CBP_REPS, calls = CBP_PLAIN_N / div;
    for (int k = 0; k < reps; k++) {
        c[k] = cbp_loop(0, calls);
        h[k] = cbp_loop(1, calls);
        double l = cbp_loop(2, calls);
        r[k] = l > h[k] ? 700.0 / (l - h[k]) : 0.0;
    }
    *call = cbp_median(c, reps);
    *chain = cbp_median(h, reps);
    *ratio = cbp_median(r, reps);
}

static int cbp_proc_fd = -1;

static HOOK void cbp_clock_line(void) {
    struct timespec ts;
    uint64_t a = cb_timer_start();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t b = cb_timer_start();
    dprintf(cbp_proc_fd, "clock %llu %llu\n", (unsigned long long)((a + b) / 2),
            (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
}

/* One calibration block: the bodies of known cost through the hooks, marked, then their plain
 * twins timed (``div``: a tenth of it, CBP_MINI, interleaved with the program) */
static HOOK void cbp_block(int side, int k, int div) {
    static const char *sides[] = {"before", "after", "during"};
    uint64_t x = 0, tag = (uint64_t)side << 8 | (uint64_t)k << 16;
    double call, chain, ratio;
    cbp_mark(CBP_CAL_BEGIN | tag);
    for (int i = 0; i < CBP_N / div; i++) cbp_cal_empty();
    for (int i = 0; i < CBP_N / div; i++) x = cbp_cal_chain(x, 1);
    for (int i = 0; i < CBP_NFAN / div; i++) {
        cbp_cal_fan();
        cbp_cal_fan_plain();
    }
    for (int i = 0; i < CBP_NTOP / div; i++) cbp_cal_top();
    __asm__ volatile("" : : "r"(x));
    cbp_plain_figures(&call, &chain, &ratio, div);
    cbp_mark(CBP_CAL_END | tag);
    dprintf(cbp_proc_fd, "block %s %d %.4f %.4f %.6f\n", sides[side], k, call, chain, ratio);
}

static HOOK void cbp_calibrate(int side) {
    struct cbp_thread *t = &cbp_t;
    t->in_cal = 1;
    for (int k = 0; k < CBP_BLOCKS; k++) cbp_block(side, k, 1);
    t->in_cal = 0;
    t->last_cal = cbp_stamp();
}

static HOOK void cbp_copy_maps(void) {
    char path[3200], buf[65536];
    snprintf(path, sizeof path, "%s/maps-%ld.txt", cbp_dir, (long)getpid());
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ssize_t got;
    while (in >= 0 && out >= 0 && (got = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)got) != got) break;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
}

static HOOK void cbp_open_proc(long parent) {
    char path[3200];
    snprintf(path, sizeof path, "%s/proc-%ld.txt", cbp_dir, (long)getpid());
    cbp_proc_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (cbp_proc_fd < 0) {
        cbp_on = 0;
        return;
    }
    dprintf(cbp_proc_fd, "cyclebench-probe 1\ntimer %s %s\npid %ld\nparent %ld\n", CB_TIMER_NAME, CB_TIMER_UNIT,
            (long)getpid(), parent);
    dprintf(cbp_proc_fd, "fn empty %p\nfn chain %p\nfn fan %p\nfn fan_plain %p\nfn top %p\n", (void *)cbp_cal_empty,
            (void *)cbp_cal_chain, (void *)cbp_cal_fan, (void *)cbp_cal_fan_plain, (void *)cbp_cal_top);
    cbp_clock_line();
}

/* In a forked child: a trace of its own, opened with the frames open at the fork (entered in
 * the parent), read from the parent's trace it shares. */
static HOOK void cbp_child(void) {
    static uint64_t stack[CBP_DEPTH];
    struct cbp_thread *t = &cbp_t;
    long parent = (long)getppid();
    size_t depth = 0;
    if (!cbp_on) return;
    if (cbp_proc_fd >= 0) close(cbp_proc_fd);
    cbp_open_proc(parent);
    if (t->ev == NULL) return;
    for (uint64_t i = 0; i < t->n; i++) {
        uint64_t f = t->ev[i].tsc & CBP_HELD;
        if (f == CBP_MARK) continue;
        if (f == CBP_EXIT) {
            size_t d = depth;
            while (d > 0 && stack[d - 1] != t->ev[i].fn) d--;
            if (d > 0) depth = d - 1;
        } else if (depth < CBP_DEPTH) {
            stack[depth++] = t->ev[i].fn;
        }
    }
    munmap(t->ev, t->cap * sizeof(struct cbp_ev));
    cbp_nwatched = 0; /* the parent's threads: not this process's */
    t->ev = NULL;
    t->n = t->ready = t->filled = 0;
    t->off = t->in_cal = 0;
    cbp_during = 0;
    if (!cbp_open(t)) return;
    for (size_t d = 0; d < depth; d++) {
        t->ev[t->n].fn = stack[d];
        t->ev[t->n].tsc = cbp_stamp() | CBP_HELD;
        t->n++;
    }
}

/* CB_PROBE_CLOCK=1: the core clock alone, around a program that is not instrumented (a Google
 * Benchmark executable, runner/gbench.py): CBP_CLOCK_BLOCKS pairs of plain add-chain loops before
 * main and as many after it, ~1 ms each side; no trace, no hooks. */
#define CBP_CLOCK_BLOCKS 3
static int cbp_clock_only;

static HOOK void cbp_clock_blocks(int side) {
    for (int k = 0; k < CBP_CLOCK_BLOCKS; k++) {
        double call, chain, ratio;
        cbp_plain_figures(&call, &chain, &ratio, 1);
        dprintf(cbp_proc_fd, "block %s %d %.4f %.4f %.6f\n", side ? "after" : "before", k, call, chain, ratio);
    }
}

__attribute__((constructor)) static HOOK void cbp_init(void) {
    const char *dir = getenv("CB_PROBE_DIR"), *cap = getenv("CB_PROBE_EVENTS"), *clock = getenv("CB_PROBE_CLOCK");
    if (dir == NULL || !*dir || strlen(dir) >= sizeof cbp_dir) return;
    strcpy(cbp_dir, dir);
    if (clock != NULL && strcmp(clock, "1") == 0) {
        cbp_clock_only = 1;
        cbp_on = 1;
        cbp_open_proc(0);
        cbp_on = 0; /* the hooks record nothing */
        if (cbp_proc_fd < 0) return;
        cbp_clock_blocks(0);
        cbp_clock_line();
        return;
    }
    if (cap != NULL && strtoull(cap, NULL, 10) >= 4 * CBP_CHUNK) cbp_cap = strtoull(cap, NULL, 10);
    cbp_on = 1;
    cbp_open_proc(0);
    if (!cbp_on) return;
    pthread_atfork(NULL, NULL, cbp_child);
    cbp_copy_maps();
    cbp_calibrate(0);
    cbp_clock_line();
}

__attribute__((destructor)) static HOOK void cbp_fini(void) {
    if (cbp_clock_only && cbp_proc_fd >= 0) {
        cbp_clock_line();
        cbp_clock_blocks(1);
        cbp_clock_line();
        dprintf(cbp_proc_fd, "end\n");
        return;
    }
    if (!cbp_on || cbp_proc_fd < 0) return;
    cbp_clock_line();
    cbp_calibrate(1);
    cbp_copy_maps();
    cbp_dump_switches();
    dprintf(cbp_proc_fd, "end\n");
}

/* statexec.c — the launcher of `cyclebench stat`: runs one command with perf counters
 * enabled on its exec, like `perf stat`, and prints one JSON line.
 *
 * Usage: statexec [--events "T:C:C1:C2,...;..."] [--json-fd N] [--no-inherit] -- CMD ARGS
 *
 * fork; the child blocks on a pipe until the parent has opened the counter groups on its
 * pid (enable_on_exec on each group leader, so nothing of the harness is counted, and
 * inherit, so the command's children are counted too), then execvp's CMD. The parent
 * waits (wait4: user/sys time and max RSS of the command and the children it waited for),
 * times the command with CLOCK_MONOTONIC from the release to the reaping, reads every
 * group (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING: u64 nr, enabled,
 * running, value[nr]) and prints, on stdout or on fd N:
 *
 *   {"type":"stat","exit":0,"signal":null,"wall_ns":..,"user_us":..,"sys_us":..,
 *    "maxrss_kb":..,"groups":[[nr,enabled,running,v...],...],"open_errors":[null|"..."],
 *    "inherit":true,"user_only":[false,...]}
 *
 * A group that cannot be opened (ENOENT: no PMU; EACCES: perf_event_paranoid) is reported
 * in open_errors and the command still runs. A hardware-only group refused with EACCES is
 * retried with exclude_kernel (user_only: true), as perf does; software events never get
 * exclude_kernel (context switches happen in the kernel: they would all be excluded).
 * Kernels that refuse PERF_FORMAT_GROUP with inherit (EINVAL) get the group without
 * inherit (inherit: false: the command's children are not counted).
 * Without --json-fd the command's stdout goes to stderr so it cannot corrupt the JSON.
 * When CMD cannot be executed: {"type":"exec_error","errno":N,"error":"..."}.
 * Exit status: 0 when a JSON line was printed, 2 for bad arguments, 1 for other failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 64
#define MAX_EVENTS 16

static int ngroups;
static int nevents[MAX_GROUPS];
static unsigned long long ev_type[MAX_GROUPS][MAX_EVENTS], ev_config[MAX_GROUPS][MAX_EVENTS][3];
static int group_fd[MAX_GROUPS];
static int group_err[MAX_GROUPS];
static int user_only[MAX_GROUPS];
static int inherit_ok = 1;

static void usage(const char *msg) {
    fprintf(stderr, "statexec: %s\nusage: statexec [--events T:C:C1:C2,...;...] [--json-fd N] [--no-inherit] -- CMD [ARGS]\n",
            msg);
    exit(2);
}

static void parse_events(const char *spec) {
    const char *p = spec;
    while (*p) {
        if (ngroups == MAX_GROUPS) usage("--events: too many groups");
        int g = ngroups++;
        for (;;) {
            unsigned long long t, c0, c1 = 0, c2 = 0;
            int used = 0;
            if (sscanf(p, "%llu:%lli:%lli:%lli%n", &t, &c0, &c1, &c2, &used) < 4 || used == 0)
                usage("--events: bad encoding (want type:config:config1:config2)");
            if (nevents[g] == MAX_EVENTS) usage("--events: too many events in a group");
            int e = nevents[g]++;
            ev_type[g][e] = t;
            ev_config[g][e][0] = c0;
            ev_config[g][e][1] = c1;
            ev_config[g][e][2] = c2;
            p += used;
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (*p == ';')
            p++;
        else if (*p)
            usage("--events: unexpected character");
    }
}

static int open_group(int g, pid_t pid, int inherit, int excl_kernel) {
    int fds[MAX_EVENTS];
    for (int e = 0; e < nevents[g]; e++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = (uint32_t)ev_type[g][e];
        a.config = ev_config[g][e][0];
        a.config1 = ev_config[g][e][1];
        a.config2 = ev_config[g][e][2];
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        a.inherit = inherit ? 1 : 0;
        a.exclude_kernel = excl_kernel ? 1 : 0;
        if (e == 0) { /* the leader starts the group at exec; siblings follow it */
            a.disabled = 1;
            a.enable_on_exec = 1;
        }
        int fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, e ? fds[0] : -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            for (int k = 0; k < e; k++) close(fds[k]);
            return -err;
        }
        fds[e] = fd;
    }
    group_fd[g] = fds[0];
    return 0;
}

static void open_groups(pid_t pid) {
    for (int g = 0; g < ngroups; g++) {
        group_fd[g] = -1;
        int r = open_group(g, pid, inherit_ok, 0);
        if (r == -EINVAL && inherit_ok && open_group(g, pid, 0, 0) == 0) {
            /* PERF_FORMAT_GROUP with inherit refused (older kernels): count without children.
             * Every group is opened the same way so their figures stay comparable. */
            close(group_fd[g]);
            group_fd[g] = -1;
            inherit_ok = 0;
            for (int k = 0; k < g; k++)
                if (group_fd[k] >= 0) {
                    close(group_fd[k]);
                    group_fd[k] = -1;
                    user_only[k] = group_err[k] = 0;
                }
            g = -1;
            continue;
        }
        if (r == -EACCES) {
            int hw_only = 1;
            for (int e = 0; e < nevents[g]; e++)
                if (ev_type[g][e] == PERF_TYPE_SOFTWARE || ev_type[g][e] == PERF_TYPE_TRACEPOINT) hw_only = 0;
            if (hw_only && open_group(g, pid, inherit_ok, 1) == 0) {
                user_only[g] = 1;
                r = 0;
            }
        }
        group_err[g] = r < 0 ? -r : 0;
    }
}

static const char *signame(int sig) {
    static const struct {
        int n;
        const char *s;
    } t[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
             {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
             {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
             {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
             {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
    static char buf[16];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].n == sig) return t[i].s;
    snprintf(buf, sizeof buf, "SIG%d", sig);
    return buf;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static int64_t ns_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Parses the options; returns the index of the command in argv. Exits 2 on a usage error. */
static int parse_args(int argc, char **argv, int *json_fd) {
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else if (!strcmp(argv[i], "--events") && i + 1 < argc) {
            parse_events(argv[++i]);
        } else if (!strcmp(argv[i], "--json-fd") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || fcntl((int)v, F_GETFD) < 0) usage("--json-fd: not an open file descriptor");
            *json_fd = (int)v;
        } else if (!strcmp(argv[i], "--no-inherit")) {
            inherit_ok = 0;
        } else {
            usage("unknown option");
        }
    }
    if (i >= argc) usage("no command");
    return i;
}

/* In the forked child: wait for the go byte (counters are open by then), exec the command, or
 * report exec's errno on the ex pipe. Never returns. */
static void child(char **cmd, int go[2], int ex[2], int json_fd, pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* statexec died before prctl */
    close(go[1]);
    close(ex[0]);
    if (json_fd < 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) _exit(127);
    char c;
    ssize_t n;
    while ((n = read(go[0], &c, 1)) < 0 && errno == EINTR) {}
    if (n != 1) _exit(127); /* the parent gave up */
    execvp(cmd[0], cmd);
    int err = errno;
    if (write(ex[1], &err, sizeof err) < 0) {}
    _exit(127);
}

/* The counts of every group as JSON arrays ("groups", "open_errors", "inherit", "user_only"). */
static void print_groups(FILE *out) {
    fprintf(out, ",\"groups\":[");
    for (int g = 0; g < ngroups; g++) {
        fprintf(out, "%s[", g ? "," : "");
        if (group_fd[g] >= 0) {
            uint64_t words[3 + MAX_EVENTS];
            size_t want = (size_t)(3 + nevents[g]) * sizeof(uint64_t);
            ssize_t got = read(group_fd[g], words, want);
            if (got == (ssize_t)want) {
                for (int w = 0; w < 3 + nevents[g]; w++) fprintf(out, "%s%llu", w ? "," : "", (unsigned long long)words[w]);
            } else {
                group_err[g] = got < 0 ? errno : EIO;
            }
            close(group_fd[g]);
        }
        fprintf(out, "]");
    }
    fprintf(out, "],\"open_errors\":[");
    for (int g = 0; g < ngroups; g++) {
        fprintf(out, "%s", g ? "," : "");
        if (group_err[g])
            json_str(out, strerror(group_err[g]));
        else
            fprintf(out, "null");
    }
    fprintf(out, "],\"inherit\":%s,\"user_only\":[", inherit_ok ? "true" : "false");
    for (int g = 0; g < ngroups; g++) fprintf(out, "%s%s", g ? "," : "", user_only[g] ? "true" : "false");
    fprintf(out, "]");
}

int main(int argc, char **argv) {
    int json_fd = -1;
    char **cmd = argv + parse_args(argc, argv, &json_fd);
    if (json_fd >= 0) fcntl(json_fd, F_SETFD, FD_CLOEXEC);

    int go[2], ex[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
        perror("statexec: pipe");
        return 1;
    }
    /* The command dies with statexec and statexec with cyclebench (a CLI killed by
     * SIGKILL once left both running). PDEATHSIG survives execve of non-setuid programs. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pid_t self = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("statexec: fork");
        return 1;
    }
    if (pid == 0) child(cmd, go, ex, json_fd, self);
    close(go[0]);
    close(ex[1]);
    open_groups(pid);

    int64_t t0 = ns_now();
    if (write(go[1], "g", 1) != 1) {
        perror("statexec: releasing the command");
        kill(pid, SIGKILL);
    }
    close(go[1]);
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(ex[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
    close(ex[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("statexec: wait4");
            return 1;
        }
    }
    int64_t wall = ns_now() - t0;

    FILE *out = json_fd >= 0 ? fdopen(json_fd, "w") : stdout;
    if (!out) {
        perror("statexec: --json-fd");
        return 1;
    }
    if (n == (ssize_t)sizeof exec_errno) {
        fprintf(out, "{\"type\":\"exec_error\",\"errno\":%d,\"error\":", exec_errno);
        json_str(out, strerror(exec_errno));
        fprintf(out, "}\n");
        return fclose(out) ? 1 : 0;
    }
    fprintf(out, "{\"type\":\"stat\",\"exit\":");
    if (WIFEXITED(status))
        fprintf(out, "%d,\"signal\":null", WEXITSTATUS(status));
    else
        fprintf(out, "null,\"signal\":\"%s\"", signame(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
    fprintf(out, ",\"wall_ns\":%lld,\"user_us\":%lld,\"sys_us\":%lld,\"maxrss_kb\":%ld", (long long)wall,
            (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    print_groups(out);
    fprintf(out, "}\n");
    return fclose(out) ? 1 : 0;
}

/* perf.c — see perf.h. */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int cb_perf_parse(cb_perf_groups *g, const char *spec, char *err, size_t errcap) {
    memset(g, 0, sizeof *g);
    const char *p = spec;
    while (*p) {
        if (g->ngroups == CB_PERF_MAX_GROUPS) {
            snprintf(err, errcap, "--events: at most %d groups", CB_PERF_MAX_GROUPS);
            return -1;
        }
        int gi = g->ngroups++;
        for (;;) {
            unsigned long long t, c0, c1 = 0, c2 = 0;
            int used = 0;
            int n = sscanf(p, "%llu:%lli:%lli:%lli%n", &t, &c0, &c1, &c2, &used);
            if (n < 4 || g->nevents[gi] == CB_PERF_MAX_EVENTS) {
                snprintf(err, errcap, "--events: bad encoding near '%.40s' (want type:config:config1:config2)", p);
                return -1;
            }
            int e = g->nevents[gi]++;
            g->type[gi][e] = t;
            g->config[gi][e][0] = c0;
            g->config[gi][e][1] = c1;
            g->config[gi][e][2] = c2;
            p += used;
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (*p == ';') p++;
        else if (*p) {
            snprintf(err, errcap, "--events: unexpected '%c'", *p);
            return -1;
        }
    }
    return 0;
}

void cb_perf_open(cb_perf_groups *g) {
    for (int i = 0; i < g->ngroups; i++) {
        g->fd[i] = -1;
        int fds[CB_PERF_MAX_EVENTS];
        int ok = 1;
        for (int e = 0; e < g->nevents[i] && ok; e++) {
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.size = sizeof a;
            a.type = (uint32_t)g->type[i][e];
            a.config = g->config[i][e][0];
            a.config1 = g->config[i][e][1];
            a.config2 = g->config[i][e][2];
            a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            a.disabled = e == 0;
            a.exclude_hv = 1;
            fds[e] = (int)syscall(SYS_perf_event_open, &a, 0, -1, e ? fds[0] : -1, 0);
            if (fds[e] < 0) {
                g->error[i] = errno;
                for (int k = 0; k < e; k++) close(fds[k]);
                ok = 0;
            }
        }
        if (ok) g->fd[i] = fds[0];
    }
}

void cb_perf_start(const cb_perf_groups *g) {
    for (int i = 0; i < g->ngroups; i++)
        if (g->fd[i] >= 0) {
            ioctl(g->fd[i], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
            ioctl(g->fd[i], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
        }
}

void cb_perf_stop(const cb_perf_groups *g) {
    for (int i = 0; i < g->ngroups; i++)
        if (g->fd[i] >= 0) ioctl(g->fd[i], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

int cb_perf_read(const cb_perf_groups *g, int i, uint64_t *words) {
    if (g->fd[i] < 0) return 0;
    ssize_t want = (ssize_t)((3 + g->nevents[i]) * sizeof(uint64_t));
    return read(g->fd[i], words, (size_t)want) == want ? 3 + g->nevents[i] : 0;
}

/* the body writes a forged `result` line to fd 3, where the runner keeps its
 * protocol stream (dup(1) in runner.c main). 1 tick/op exactly, and a marker field
 * "forged":"FORGED_BY_THE_BODY" that tests/audit looks for in the stored result. */
#include <stdio.h>
#include <unistd.h>
#include <cyclebench.h>

static void forge(void) {
    static char line[16384];
    size_t n = 0;
    n += (size_t)snprintf(line + n, sizeof line - n,
                          "{\"type\":\"result\",\"bench\":\"fd3/forged\",\"param\":null,\"timer\":\"rdtsc-lfence/rdtscp\","
                          "\"unit\":\"ref-cycles\",\"n_base\":1000,\"rounds\":5,\"ladder\":8,\"seed\":1,\"sizing_ns\":1,"
                          "\"warmup_ns\":1,\"measured_ns\":1,\"total_iters\":180000,\"timer_overhead\":{\"min\":50,"
                          "\"median\":60},\"disturb_source\":\"perf\",\"chain\":{\"kind\":\"add\",\"adds\":2048,"
                          "\"imuls\":512,\"imul_latency\":3,\"imul_ticks\":[1238,1234],\"add_ticks\":[1650,1638]},"
                          "\"verified\":null,\"reason\":null,\"forged\":\"FORGED_BY_THE_BODY\"");
    const char *keys[] = {"n", "ticks", "cal", "disturbed"};
    for (int f = 0; f < 4; f++) {
        n += (size_t)snprintf(line + n, sizeof line - n, ",\"%s\":[", keys[f]);
        for (int i = 0; i < 40; i++) {
            long k = (i % 8) + 1, v = f == 0 ? k * 1000 : f == 1 ? k * 1000 + 100 : f == 2 ? 1650 : 0;
            n += (size_t)snprintf(line + n, sizeof line - n, i ? ",%ld" : "%ld", v);
        }
        n += (size_t)snprintf(line + n, sizeof line - n, "]");
    }
    n += (size_t)snprintf(line + n, sizeof line - n, ",\"pmu_cycles\":null,\"pmu_error\":null}\n");
    if (write(3, line, n) < 0) { /* EBADF/EPIPE: the protocol is not there, which is the point */
    }
}

CB_BENCH(fd3, forged) {
    static int once;
    if (!once) {
        once = 1;
        forge();
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

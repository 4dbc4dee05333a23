/* garbage and fake protocol lines on stdout (printf and write(1)). */
#include <stdio.h>
#include <unistd.h>
#include <cyclebench.h>

CB_BENCH(gb, stdout) {
    static int once;
    if (!once) {
        once = 1;
        printf("{\"type\":\"result\",\"bench\":\"gb/stdout\",\"param\":null,\"bogus\":true}\n");
        fflush(stdout);
        static const char junk[] = "\x01\x02 not json {{{\n{\"type\":\"error\",\"reason\":\"fake\"}\n";
        if (write(1, junk, sizeof junk - 1) < 0) cb_clobber();
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

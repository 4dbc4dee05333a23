/* a body that floods stderr forever (a debug print left in a hung loop). */
#include <string.h>
#include <unistd.h>
#include <cyclebench.h>

CB_BENCH(spew, stderr) {
    static char buf[65536];
    memset(buf, 'x', sizeof buf - 1);
    buf[sizeof buf - 1] = '\n';
    for (;;)
        if (write(2, buf, sizeof buf) < 0) cb_clobber();
}

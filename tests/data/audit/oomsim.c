/* the process is SIGKILLed (what the OOM killer does). */
#include <signal.h>
#include <unistd.h>
#include <cyclebench.h>

CB_BENCH(oom, sigkill) {
    if (cb_iters(s)) kill(getpid(), SIGKILL);
}

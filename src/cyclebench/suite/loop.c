/* loop/empty — the benchmark loop's own cost per iteration: counter increment, compare,
 * branch, and an empty asm statement that keeps the compiler from deleting or unrolling
 * the loop away. Results can be reported net of it (every suite body has this shape). */
#include <cyclebench.h>

CB_BENCH(loop, empty) {
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("");
}

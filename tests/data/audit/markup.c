/* failure reasons that are Rich markup or terminal escape sequences (they once raised MarkupError). */
#include <cyclebench.h>

CB_SETUP(mk, reason) { cb_fail(s, "bad value [/x] in [i]config[/i]"); }
CB_BENCH(mk, reason) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_SETUP(mk, esc) { cb_fail(s, "\x1b[31mred\x1b[0m \x1b]8;;http://example.invalid/\x1b\\link\x1b]8;;\x1b\\ \x07" "bell"); }
CB_BENCH(mk, esc) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

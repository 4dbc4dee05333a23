/* a benchmark whose name is Rich markup: "mk/[/x]". */
#include <cyclebench.h>

static void body(cb_state *s) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

static const cb_bench tagged = {"mk", "[/x]", body, NULL, 0, __FILE__, __LINE__};

__attribute__((constructor)) static void reg(void) { cb_register_(&tagged); }

#include <cyclebench.h>

CB_BENCH(broken, syntax) {
    for (uint64_t i = 0; i < cb_iters(s); i++) this_is_not_c
}

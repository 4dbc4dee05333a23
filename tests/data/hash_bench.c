/* hash_bench.c — more real code for block-weighted prediction (docs/method.md §12): xxHash's
 * XXH32 and XXH64 (lz4/xxhash.c, vendored: lz4/README.md) and zlib's crc32 (Debian's libz: link
 * with --ldflags -lz) over the same 16 KiB of text as lz4_bench.c (the first 16 KiB of
 * lz4/lz4.h). One op is one whole call. */
#include <cyclebench.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define XXH_PRIVATE_API /* xxhash.h pulls xxhash.c in, its functions static */
#include "lz4/xxhash.h"

#define TEXT 16384
static unsigned char text[TEXT];

CB_GROUP_SETUP(hash) {
    char path[4096];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(path, sizeof path, "%.*slz4/lz4.h", slash ? (int)(slash - here + 1) : 0, here);
    FILE *f = fopen(path, "rb");
    if (!f || fread(text, 1, TEXT, f) != TEXT) cb_skip(s, "tests/data/lz4/lz4.h not found beside hash_bench.c");
    if (f) fclose(f);
}

CB_BENCH(hash, xxh32) {
    for (uint64_t i = 0; i < cb_iters(s); i++) { cb_do_not_optimize(XXH32(text, TEXT, 0)); cb_clobber(); }
}

CB_BENCH(hash, xxh64) {
    for (uint64_t i = 0; i < cb_iters(s); i++) { cb_do_not_optimize(XXH64(text, TEXT, 0)); cb_clobber(); }
}

CB_BENCH(hash, crc32) {
    for (uint64_t i = 0; i < cb_iters(s); i++) { cb_do_not_optimize(crc32(0L, text, TEXT)); cb_clobber(); }
}

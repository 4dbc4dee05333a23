/* lz4_bench.c — real code for block-weighted prediction (docs/method.md §12): LZ4's block
 * compression and decompression (lz4/, vendored: lz4/README.md) of 16 KiB of text, the first
 * 16 KiB of lz4/lz4.h, read at set-up from beside this file. One op is one whole call. */
#include <cyclebench.h>
#include <stdio.h>
#include <string.h>

#include "lz4/lz4.c"

#define TEXT 16384

struct lz4_bufs {
    char src[TEXT];
    char packed[LZ4_COMPRESSBOUND(TEXT)];
    char out[TEXT];
    int packed_size;
};

static void lz4_load(cb_state *s) {
    static struct lz4_bufs b;
    char path[4096];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(path, sizeof path, "%.*slz4/lz4.h", slash ? (int)(slash - here + 1) : 0, here);
    FILE *f = fopen(path, "rb");
    if (!f || fread(b.src, 1, TEXT, f) != TEXT) {
        if (f) fclose(f);
        cb_skip(s, "tests/data/lz4/lz4.h not found beside lz4_bench.c");
        return;
    }
    fclose(f);
    b.packed_size = LZ4_compress_default(b.src, b.packed, TEXT, (int)sizeof b.packed);
    cb_set_user(s, &b);
}
CB_GROUP_SETUP(lz4) { lz4_load(s); }

CB_BENCH(lz4, compress) {
    struct lz4_bufs *b = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        cb_do_not_optimize(LZ4_compress_default(b->src, b->packed, TEXT, (int)sizeof b->packed));
        cb_clobber();
    }
}

CB_BENCH(lz4, decompress) {
    struct lz4_bufs *b = cb_user(s);
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        cb_do_not_optimize(LZ4_decompress_safe(b->packed, b->out, b->packed_size, TEXT));
        cb_clobber();
    }
}

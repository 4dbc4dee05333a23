/* registry.h — engine-internal view of registered benchmarks and hooks. */
#ifndef CB_REGISTRY_H
#define CB_REGISTRY_H

#include "cyclebench.h"

typedef struct cb_hook {
    const char *group;
    const char *name; /* NULL: every benchmark of the group */
    int kind;         /* enum cb_hook_kind */
    void (*fn)(void);
    const char *arg;  /* CB_REQUIRE's feature list */
} cb_hook;

int cb_nbenches(void);
const cb_bench *cb_bench_at(int i);
const cb_bench *cb_find(const char *full_name);
const cb_hook *cb_hook_for(const cb_bench *b, int kind);
const cb_hook *cb_orphan_hook(void);
void cb_free_buffers(cb_state *s);
int cb_missing_feature(const char *list, char *missing, size_t cap);

#endif

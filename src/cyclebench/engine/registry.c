/* registry.c — benchmarks and hooks registered by the constructors of cyclebench.h,
 * the engine-owned buffers, and CPU-feature tests. No timing here. */
#define _GNU_SOURCE
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const cb_bench **benches;
static int nbenches, capbenches;
static cb_hook *hooks;
static int nhooks, caphooks;

static void *grow(void *p, int *cap, size_t elem) {
    *cap = *cap ? *cap * 2 : 64;
    void *q = realloc(p, (size_t)*cap * elem);
    if (!q) {
        fputs("cyclebench: out of memory while registering benchmarks\n", stderr);
        abort();
    }
    return q;
}

void cb_register_(const cb_bench *b) {
    if (nbenches == capbenches) benches = grow(benches, &capbenches, sizeof *benches);
    benches[nbenches++] = b;
}

void cb_register_hook_(const char *group, const char *name, int kind, void (*fn)(void), const char *arg) {
    if (nhooks == caphooks) hooks = grow(hooks, &caphooks, sizeof *hooks);
    hooks[nhooks++] = (cb_hook){group, name, kind, fn, arg};
}

int cb_nbenches(void) { return nbenches; }
const cb_bench *cb_bench_at(int i) { return benches[i]; }

const cb_bench *cb_find(const char *full) {
    for (int i = 0; i < nbenches; i++) {
        const cb_bench *b = benches[i];
        size_t g = strlen(b->group);
        if (strncmp(full, b->group, g) == 0 && full[g] == '/' && strcmp(full + g + 1, b->name) == 0) return b;
    }
    return NULL;
}

/* A benchmark's own hook wins over its group's (name == NULL). */
const cb_hook *cb_hook_for(const cb_bench *b, int kind) {
    const cb_hook *group_hook = NULL;
    for (int i = 0; i < nhooks; i++) {
        const cb_hook *h = &hooks[i];
        if (h->kind != kind || strcmp(h->group, b->group) != 0) continue;
        if (h->name && strcmp(h->name, b->name) == 0) return h;
        if (!h->name) group_hook = h;
    }
    return group_hook;
}

/* Hooks naming a benchmark that does not exist are a typo in the user's file. */
const cb_hook *cb_orphan_hook(void) {
    for (int i = 0; i < nhooks; i++) {
        const cb_hook *h = &hooks[i];
        int found = 0;
        for (int j = 0; j < nbenches && !found; j++)
            found = strcmp(h->group, benches[j]->group) == 0 && (!h->name || strcmp(h->name, benches[j]->name) == 0);
        if (!found) return h;
    }
    return NULL;
}

/* ---- buffers ---- */

void *cb_buffer(cb_state *s, size_t size, size_t align, size_t offset) {
    if (align == 0) align = 64;
    if ((align & (align - 1)) != 0 || align < sizeof(void *)) {
        cb_fail(s, "cb_buffer: alignment must be a power of two >= sizeof(void *)");
        return NULL;
    }
    if (s->nbuffers_ >= CB_MAX_BUFFERS) {
        cb_fail(s, "cb_buffer: too many buffers (CB_MAX_BUFFERS)");
        return NULL;
    }
    void *p = NULL;
    if (posix_memalign(&p, align, size + offset + 1) != 0) {
        cb_fail(s, "cb_buffer: out of memory");
        return NULL;
    }
    /* Touch every page now so first-touch page faults never land in a timed batch. */
    memset(p, 0, size + offset + 1);
    s->buffers_[s->nbuffers_++] = p;
    return (char *)p + offset;
}

void cb_free_buffers(cb_state *s) {
    for (int i = 0; i < s->nbuffers_; i++) free(s->buffers_[i]);
    s->nbuffers_ = 0;
}

void cb_skip(cb_state *s, const char *reason) {
    s->skip_ = 1;
    snprintf(s->reason_, sizeof s->reason_, "%s", reason ? reason : "skipped by setup");
}

void cb_fail(cb_state *s, const char *reason) {
    if (s->skip_ == 2) return; /* keep the first failure: it is the cause */
    s->skip_ = 2;
    snprintf(s->reason_, sizeof s->reason_, "%s", reason ? reason : "failed");
}

/* ---- CPU features ---- */

#if defined(__x86_64__)
static int cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
    unsigned r[4];
    if (__get_cpuid_max(leaf & 0x80000000u, NULL) < leaf) return 0;
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    return (r[reg] >> bit) & 1;
}
enum { EAX, EBX, ECX, EDX };
#endif

int cb_cpu_has(const char *f) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!strcmp(f, "x86_64")) return 1;
    if (!strcmp(f, "aarch64")) return 0;
    if (!strcmp(f, "sse2")) return !!__builtin_cpu_supports("sse2");
    if (!strcmp(f, "sse4.2")) return !!__builtin_cpu_supports("sse4.2");
    if (!strcmp(f, "avx")) return !!__builtin_cpu_supports("avx");
    if (!strcmp(f, "avx2")) return !!__builtin_cpu_supports("avx2");
    if (!strcmp(f, "avx512f")) return !!__builtin_cpu_supports("avx512f");
    if (!strcmp(f, "bmi2")) return !!__builtin_cpu_supports("bmi2");
    if (!strcmp(f, "erms")) return cpuid_bit(7, 0, EBX, 9);
    if (!strcmp(f, "fsrm")) return cpuid_bit(7, 0, EDX, 4);
    if (!strcmp(f, "cx16")) return cpuid_bit(1, 0, ECX, 13);
    if (!strcmp(f, "rdtscp")) return cpuid_bit(0x80000001u, 0, EDX, 27);
    if (!strcmp(f, "invariant_tsc")) return cpuid_bit(0x80000007u, 0, EDX, 8);
    if (!strcmp(f, "lse")) return 0;
#elif defined(__aarch64__)
    if (!strcmp(f, "aarch64")) return 1;
    if (!strcmp(f, "x86_64")) return 0;
    if (!strcmp(f, "lse")) return (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
    if (!strcmp(f, "sse2") || !strcmp(f, "sse4.2") || !strcmp(f, "avx") || !strcmp(f, "avx2") ||
        !strcmp(f, "avx512f") || !strcmp(f, "bmi2") || !strcmp(f, "erms") || !strcmp(f, "fsrm") ||
        !strcmp(f, "cx16") || !strcmp(f, "rdtscp") || !strcmp(f, "invariant_tsc"))
        return 0;
#endif
    return -1;
}

/* First feature of a comma list that is missing (copied into `missing`), else 0. */
int cb_missing_feature(const char *list, char *missing, size_t cap) {
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[64];
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, p, n);
        name[n] = 0;
        int has = cb_cpu_has(name);
        if (has != 1) {
            snprintf(missing, cap, "%s%s", has < 0 ? "unknown CPU feature: " : "", name);
            return has < 0 ? -1 : 1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

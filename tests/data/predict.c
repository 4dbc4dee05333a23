/* predict.c — known truths for `--predict` and `cyclebench explain` (docs/method.md §12):
 * loops whose cost a static model must get right (dependent chains: latency-bound), loops it
 * must price lower (independent chains), and loops it must not price at all (a lock prefix,
 * a system call). Latencies: Agner Fog, "Instruction tables" (add 1, imul r64 3 on every
 * x86-64 core since K8 / Nehalem); uops.info lists the same. */
#include <cyclebench.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 300 dependent register-register adds: 300 cycles an op */
CB_BENCH(truth, add300) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile(".rept 300\n\tadd %0, %0\n\t.endr" : "+r"(x));
    cb_do_not_optimize(x);
}

/* 100 dependent imuls, latency 3: 300 cycles an op */
CB_BENCH(truth, imul100) {
    uint64_t x = 3;
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile(".rept 100\n\timul %0, %0\n\t.endr" : "+r"(x));
    cb_do_not_optimize(x);
}

/* the same 300 adds as four independent chains of 75: throughput-bound, 75 cycles or less */
CB_BENCH(truth, add4x75) {
    uint64_t a = 1, b = 2, c = 3, d = 4;
    for (uint64_t i = 0; i < cb_iters(s); i++)
        __asm__ volatile(".rept 75\n\tadd %0, %0\n\tadd %1, %1\n\tadd %2, %2\n\tadd %3, %3\n\t.endr"
                         : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    cb_do_not_optimize(a + b + c + d);
}

/* a store-forwarding chain: each load reads the store before it (a load's latency plus the
 * forwarding, ~4–7 cycles a link on current cores: Agner Fog, "The microarchitecture of Intel,
 * AMD and VIA CPUs", store forwarding stalls) */
static uint64_t slot;
CB_BENCH(truth, storefwd) {
    uint64_t *p = &slot;
    for (uint64_t i = 0; i < cb_iters(s); i++)
        __asm__ volatile("mov (%0), %%rax\n\tadd $1, %%rax\n\tmov %%rax, (%0)" : : "r"(p) : "rax", "memory");
}

/* lock add: ~18–20 cycles measured on the CPUs of docs/method.md; the models price it at a few */
static uint64_t counter;
CB_BENCH(truth, lock_add) {
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("lock addq $1, %0" : "+m"(counter));
}

/* a raw system call in the loop: the models see one instruction */
CB_BENCH(truth, getpid) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        long r;
        __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_getpid) : "rcx", "r11", "memory");
        cb_do_not_optimize(r);
    }
}

/* a cold set-up branch with a loop of its own, taken once per batch: the hot block is the chain */
static volatile uint64_t table[512];
CB_BENCH(truth, cold_setup) {
    if (cb_param(s) == 0) /* always: set-up redone every batch */
        for (int j = 0; j < 512; j++) table[j] = (uint64_t)j * 7 + 1;
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile(".rept 50\n\tadd %0, %0\n\t.endr" : "+r"(x));
    cb_do_not_optimize(x);
}

/* no loop at all: the body does one add per batch, whatever its size (cb_iters is ignored) */
CB_BENCH(truth, noloop) {
    uint64_t x = cb_iters(s);
    __asm__ volatile("add %0, %0" : "+r"(x));
    cb_do_not_optimize(x);
}

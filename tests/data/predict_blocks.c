/* predict_blocks.c — known truths for block-weighted prediction (docs/method.md §12): code
 * whose cost is spread over blocks a single hot loop does not hold. Dependent register adds
 * cost 1 cycle each on every x86-64 core (Agner Fog, "Instruction tables"), so each truth
 * below is a count of adds. */
#include <cyclebench.h>

/* a nested loop: 16 trips of an inner block of 64 dependent adds an op: 1,024 cycles */
CB_BENCH(blocks, nested) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++)
        for (int j = 0; j < 16; j++) {
            __asm__ volatile(".rept 64\n\tadd %0, %0\n\t.endr" : "+r"(x));
            __asm__ volatile("" : "+r"(j)); /* the compiler keeps the inner loop */
        }
    cb_do_not_optimize(x);
}

/* a loop whose body calls a 50-add chain: 50 cycles an op, priced through the callee */
__attribute__((noinline)) uint64_t cb_chain50(uint64_t x) {
    __asm__ volatile(".rept 50\n\tadd %0, %0\n\t.endr" : "+r"(x));
    return x;
}
CB_BENCH(blocks, callee) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = cb_chain50(x);
    cb_do_not_optimize(x);
}

/* 100 adds an op, and an arm of 200 more taken 1 op in 64: 100 + 200/64 = 103.1 cycles */
CB_BENCH(blocks, branchy) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        __asm__ volatile(".rept 100\n\tadd %0, %0\n\t.endr" : "+r"(x));
        if ((i & 63) == 0) __asm__ volatile(".rept 200\n\tadd %0, %0\n\t.endr" : "+r"(x));
    }
    cb_do_not_optimize(x);
}

/* the branchy truth with an endbr64 in its arm: llvm-mca prices it (a nop), OSACA 0.7 has data for it
 * in no arch, so OSACA leaves the arm out and says its share (200/64 + 1/64 of ~108 instructions an
 * op: ~2.9%), its figure the 100 adds of the loop alone */
CB_BENCH(blocks, nodata) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        __asm__ volatile(".rept 100\n\tadd %0, %0\n\t.endr" : "+r"(x));
        if ((i & 63) == 0) __asm__ volatile("endbr64\n\t.rept 200\n\tadd %0, %0\n\t.endr" : "+r"(x));
    }
    cb_do_not_optimize(x);
}

/* a 4 KiB memset an op (rep stosq: 512 iterations of one instruction, which no model prices)
 * beside 100 adds */
static uint64_t page[512];
CB_BENCH(blocks, memset4k) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        void *d = page;
        uint64_t n = 512;
        __asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(x) : "memory");
        __asm__ volatile(".rept 100\n\tadd %0, %0\n\t.endr" : "+r"(x));
    }
    cb_do_not_optimize(x);
}

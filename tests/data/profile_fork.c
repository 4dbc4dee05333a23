/* `cyclebench profile`'s in-process probe across a thread and a fork (engine/probe.c;
 * tests/commands/test_profile.py): work() is called 100 times by main, 50 times by a thread and
 * 30 times by a forked child that leaves by exit() from inside main — 180 calls in all; main
 * itself is one call (the child's main was entered in the parent). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) uint64_t work(uint64_t x, uint64_t y) {
    __asm__ volatile(".rept 100\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    return x;
}

static void *thread_main(void *arg) {
    uint64_t x = 0;
    for (int i = 0; i < 50; i++) x = work(x, 1);
    *(uint64_t *)arg = x;
    return NULL;
}

int main(void) {
    uint64_t x = 0, t = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, thread_main, &t) != 0) return 3;
    pthread_join(th, NULL);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 30; i++) x = work(x, 1);
        exit(x == 3000 ? 0 : 4);
    }
    for (int i = 0; i < 100; i++) x = work(x, 1);
    int status = 0;
    waitpid(child, &status, 0);
    return x == 10000 && t == 5000 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* vfs/ — Ingo Molnar, 2015 (docs/references.md#icache-alignment-linux-2015): the VFS-heavy
 * mixes his -falign-functions study ran (`perf stat --repeat 10 -e L1-icache-load-misses`):
 * short system calls whose kernel paths are long, so the kernel's I-cache footprint shows. All
 * inside a private temporary directory made by setup.
 * - vfs/mix: the mkdir/rmdir/open/close/stat workload his message describes first: mkdir, stat,
 *   rmdir of a directory, then open (create), fstat, close and unlink of a file;
 * - vfs/creat_mix: the test program his message lists, call for call (creat, lstat, lseek 4095,
 *   close, open O_RDWR|O_CREAT|O_TRUNC, write 1 byte, mmap 4096 shared, store, munmap, close,
 *   unlink): "around 1,500 unique kernel functions, 118,000 instructions per iteration" on ext4,
 *   with the page-fault and mmap paths vfs/mix lacks. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cyclebench.h>

struct vfs {
    char dir[256], sub[300], file[300];
    uint64_t failures;
};

CB_GROUP_SETUP(vfs) {
    struct vfs *v = calloc(1, sizeof *v);
    if (!v) {
        cb_fail(s, "out of memory");
        return;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(v->dir, sizeof v->dir, "%s/cyclebench-vfs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(v->dir)) {
        free(v);
        cb_skip(s, "cannot create a private temporary directory");
        return;
    }
    snprintf(v->sub, sizeof v->sub, "%s/d", v->dir);
    snprintf(v->file, sizeof v->file, "%s/f", v->dir);
    cb_set_user(s, v);
}

CB_GROUP_TEARDOWN(vfs) {
    struct vfs *v = cb_user(s);
    if (!v) return;
    unlink(v->file);
    rmdir(v->sub);
    rmdir(v->dir);
    free(v);
}

CB_GROUP_VERIFY(vfs) {
    struct vfs *v = cb_user(s);
    if (v->failures) cb_fail(s, "a file-system call failed");
    return v->failures == 0;
}

CB_BENCH(vfs, mix) {
    struct vfs *v = cb_user(s);
    struct stat st;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        v->failures += mkdir(v->sub, 0700) != 0;
        v->failures += stat(v->sub, &st) != 0;
        v->failures += rmdir(v->sub) != 0;
        int fd = open(v->file, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        v->failures += fd < 0;
        if (fd >= 0) {
            v->failures += fstat(fd, &st) != 0;
            close(fd);
        }
        v->failures += unlink(v->file) != 0;
    }
}

CB_BENCH(vfs, creat_mix) {
    struct vfs *v = cb_user(s);
    struct stat st;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        int fd = creat(v->file, 0700);
        v->failures += fd < 0;
        v->failures += lstat(v->file, &st) != 0;
        v->failures += lseek(fd, 4095, SEEK_SET) != 4095;
        close(fd);
        fd = open(v->file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
        if (fd < 0) {
            v->failures++;
            continue;
        }
        char c = 1;
        v->failures += write(fd, &c, 1) != 1;
        char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (buf == MAP_FAILED) {
            v->failures++;
        } else {
            buf[0] = 1; /* the page fault of Molnar's program */
            v->failures += munmap(buf, 4096) != 0;
        }
        close(fd);
        v->failures += unlink(v->file) != 0;
    }
}

/* vfs/ — seed 001 (Ingo Molnar, 2015): the VFS-heavy mix his -falign-functions study ran
 * (`perf stat --repeat 10 -e L1-icache-load-misses` over mkdir/rmdir/open/close/stat):
 * short system calls whose kernel paths are long, so the kernel's I-cache footprint shows.
 * One operation = mkdir, stat, rmdir of a directory, then open (create), fstat, close and
 * unlink of a file, all inside a private temporary directory made by setup. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

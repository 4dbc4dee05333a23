/* A will-it-scale test case (docs/will-it-scale.md): each task takes and drops an fcntl() write
 * lock on a file of its own. testcase_prepare() creates the files (relative names: in the
 * working directory cyclebench gives the test case) and testcase_cleanup() removes them; both
 * say so on stderr, which the tests read. prepare also leaves a scratch file in $TMPDIR on
 * purpose, as test cases do: cyclebench must remove it with the private directory. */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *testcase_description = "Per-task fcntl(F_SETLK) write lock and unlock of its own file";

static unsigned long nfiles;
static char (*names)[64];

void testcase_prepare(unsigned long nr_tasks)
{
	nfiles = nr_tasks;
	names = calloc(nr_tasks, sizeof *names);
	assert(names);
	for (unsigned long i = 0; i < nr_tasks; i++) {
		snprintf(names[i], sizeof names[i], "wis-lock.%lu", i);
		int fd = open(names[i], O_RDWR | O_CREAT | O_EXCL, 0600);
		assert(fd >= 0);
		close(fd);
	}
	char scratch[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/wis-scratch.XXXXXX", tmp ? tmp : "/tmp");
	int fd = mkstemp(scratch);
	assert(fd >= 0);
	close(fd);
	char cwd[4096];
	fprintf(stderr, "file_lock: prepared %lu files in %s, left %s\n", nr_tasks,
		getcwd(cwd, sizeof cwd) ? cwd : "?", scratch);
}

void testcase(unsigned long long *iterations, unsigned long nr)
{
	struct flock lock = {.l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	int fd = open(names[nr], O_RDWR), r;
	assert(fd >= 0);
	for (;;) {
		lock.l_type = F_WRLCK;
		r = fcntl(fd, F_SETLK, &lock);
		assert(r == 0);
		lock.l_type = F_UNLCK;
		r = fcntl(fd, F_SETLK, &lock);
		assert(r == 0);
		(*iterations)++;
	}
	(void)r;
}

void testcase_cleanup(void)
{
	unsigned long removed = 0;
	for (unsigned long i = 0; i < nfiles; i++)
		removed += unlink(names[i]) == 0;
	fprintf(stderr, "file_lock: cleanup removed %lu files\n", removed);
}

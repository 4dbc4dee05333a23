/* A will-it-scale test case (tests of issue 17): one byte sent back and forth over two pipes
 * between the task and a helper started with new_task() (a thread in threads mode, a process
 * in processes mode, on the task's CPU): two context switches per operation. */
#include <assert.h>
#include <unistd.h>

char *testcase_description = "Context switches: one byte ping-ponged over two pipes with a helper task";

extern void new_task(void *(*func)(void *), void *arg);

static void *partner(void *arg)
{
	int *fd = arg; /* fd[0]: read the ping, fd[1]: write the pong */
	char c;
	while (read(fd[0], &c, 1) == 1 && write(fd[1], &c, 1) == 1)
		;
	return NULL;
}

void testcase(unsigned long long *iterations, unsigned long nr)
{
	int ping[2], pong[2], partner_fd[2];
	char c = (char)nr;
	int r = pipe(ping);
	assert(r == 0);
	r = pipe(pong);
	assert(r == 0);
	partner_fd[0] = ping[0];
	partner_fd[1] = pong[1];
	new_task(partner, partner_fd); /* testcase() never returns: partner_fd outlives the helper */
	for (;;) {
		r = (int)write(ping[1], &c, 1);
		assert(r == 1);
		r = (int)read(pong[0], &c, 1);
		assert(r == 1);
		(*iterations)++;
	}
}

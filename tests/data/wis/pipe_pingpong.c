/* A will-it-scale test case (docs/will-it-scale.md): one byte sent back and forth over two pipes
 * between the task and a helper started with new_task() (a thread in threads mode, a process
 * in processes mode): two context switches per operation. The helper says on stderr which
 * CPUs it may run on: its task's only, as in will-it-scale (the tests read it). */
#define _GNU_SOURCE
#include <assert.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

char *testcase_description = "Context switches: one byte ping-ponged over two pipes with a helper task";

extern void new_task(void *(*func)(void *), void *arg);

struct partner_arg {
	int in, out; /* read the ping, write the pong */
	unsigned long nr;
};

static void *partner(void *arg)
{
	struct partner_arg *a = arg;
	cpu_set_t set;
	char c;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		int first = -1;
		for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
			if (CPU_ISSET(i, &set))
				first = i;
		fprintf(stderr, "pipe_pingpong: helper of task %lu may run on %d CPU(s), the first %d\n", a->nr,
			CPU_COUNT(&set), first);
	}
	while (read(a->in, &c, 1) == 1 && write(a->out, &c, 1) == 1)
		;
	return NULL;
}

void testcase(unsigned long long *iterations, unsigned long nr)
{
	int ping[2], pong[2];
	char c = (char)nr;
	int r = pipe(ping);
	assert(r == 0);
	r = pipe(pong);
	assert(r == 0);
	struct partner_arg arg = {ping[0], pong[1], nr}; /* testcase() never returns: arg outlives the helper */
	new_task(partner, &arg);
	for (;;) {
		r = (int)write(ping[1], &c, 1);
		assert(r == 1);
		r = (int)read(pong[0], &c, 1);
		assert(r == 1);
		(*iterations)++;
	}
}

/* A will-it-scale test case (docs/will-it-scale.md) that sets up inside testcase(), as pread1
 * makes and writes its own file first: 0.4 s before its first operation. Its run is measured
 * once every task counts (the warm-up goes on while one has not), not failed as idle. */
#include <time.h>
#include <unistd.h>

char *testcase_description = "Sets up for 0.4 s inside testcase(), then counts getppid calls";

void testcase(unsigned long long *iterations, unsigned long nr)
{
	struct timespec setup = {0, 400000000};
	(void)nr;
	nanosleep(&setup, NULL);
	for (;;) {
		getppid();
		(*iterations)++;
	}
}

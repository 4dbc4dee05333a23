/* A will-it-scale test case (docs/will-it-scale.md) that never bumps its counter: it sleeps
 * forever. Its run must fail with that reason, not report a throughput of 0. */
#include <unistd.h>

char *testcase_description = "Never bumps its counter: sleeps until it is killed";

void testcase(unsigned long long *iterations, unsigned long nr)
{
	(void)iterations;
	(void)nr;
	for (;;)
		pause();
}

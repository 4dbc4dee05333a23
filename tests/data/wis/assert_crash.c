/* A will-it-scale test case (docs/will-it-scale.md) that fails an assert after 1000 operations:
 * its run must cost one row, crashed, with the assert's message. */
#include <assert.h>
#include <sys/syscall.h>
#include <unistd.h>

char *testcase_description = "Fails an assert after 1000 getppid calls";

void testcase(unsigned long long *iterations, unsigned long nr)
{
	(void)nr;
	for (;;) {
		syscall(SYS_getppid);
		(*iterations)++;
		assert(*iterations < 1000 && "the counter passed 1000");
	}
}

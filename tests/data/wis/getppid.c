/* A will-it-scale test case (docs/will-it-scale.md): the getppid loop, through syscall(2) so libc
 * cannot cache it — the same work as contend/getppid. Shares nothing: should scale linearly. */
#include <sys/syscall.h>
#include <unistd.h>

char *testcase_description = "getppid(2) loop through syscall(2)";

void testcase(unsigned long long *iterations, unsigned long nr)
{
	(void)nr;
	for (;;) {
		syscall(SYS_getppid);
		(*iterations)++;
	}
}

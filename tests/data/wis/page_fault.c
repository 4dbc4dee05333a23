/* A will-it-scale test case (docs/will-it-scale.md): anonymous page faults. Each pass maps 16 MiB,
 * writes one byte per page (one fault each, bumping the counter) and unmaps it; transparent
 * huge pages are refused so that every page is a fault. Declared void *, as some are. */
#include <assert.h>
#include <sys/mman.h>
#include <unistd.h>

#define MEMSIZE (16UL << 20)

char *testcase_description = "Anonymous page faults: mmap 16 MiB, write each page, munmap";

void *testcase(unsigned long long *iterations, unsigned long nr)
{
	unsigned long pagesize = (unsigned long)sysconf(_SC_PAGESIZE);
	(void)nr;
	for (;;) {
		char *p = mmap(NULL, MEMSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert(p != MAP_FAILED);
		madvise(p, MEMSIZE, MADV_NOHUGEPAGE);
		for (unsigned long off = 0; off < MEMSIZE; off += pagesize) {
			p[off] = 1;
			(*iterations)++;
		}
		munmap(p, MEMSIZE);
	}
	return NULL;
}

/* simulate.h — one benchmark under callgrind (simulate.c). */
#ifndef CB_SIMULATE_H
#define CB_SIMULATE_H

#include <stdint.h>
#include <stdio.h>

#include "measure.h"

/* Set-up, a warm-up batch, then batches of n1 and 2·n1 operations each collected and
 * dumped under labels "cb:n1" / "cb:n2"; verify; one {"type":"sim",...} line. */
int cb_simulate(FILE *out, const cb_request *r, uint64_t n1);

#endif

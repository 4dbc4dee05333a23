/* probe.h — what engine/probe.c (the hooks, the trace, the calibration's loops) and
 * engine/probe_cal.c (the calibration's instrumented bodies) share. docs/method.md §10. */
#ifndef CB_PROBE_H
#define CB_PROBE_H

#include <stdint.h>

#define CBP_FAN 10 /* child calls of cbp_cal_fan and cbp_cal_fan_plain, fans of cbp_cal_top */

/* reg-reg adds: a dependent chain the core cannot fold (an immediate add may be folded at
 * rename on recent Intel cores); one add's latency is 1 cycle on every x86 core */
#define CBP_CHAIN(n) ".rept " #n "\n\taddq %1, %0\n.endr"

/* built with -finstrument-functions (probe_cal.c): the probe around bodies of known cost */
void cbp_cal_empty(void);
uint64_t cbp_cal_chain(uint64_t x, uint64_t y); /* 300 adds */
void cbp_cal_fan(void);                         /* CBP_FAN × cbp_cal_empty */
void cbp_cal_fan_plain(void);                   /* CBP_FAN × cbp_plain */
void cbp_cal_top(void);                         /* CBP_FAN × cbp_cal_fan */

/* uninstrumented (probe.c) */
void cbp_plain(void);

#endif

/* clock.h — the one monotonic clock of kopt: seconds since an arbitrary fixed point
 * (CLOCK_MONOTONIC), for deadlines, timeouts and elapsed times; never wall-clock dates.
 * Contract: clock_now never fails and never goes backwards. No ownership involved. */
#ifndef KOPT_CLOCK_H
#define KOPT_CLOCK_H

double clock_now(void);

#endif

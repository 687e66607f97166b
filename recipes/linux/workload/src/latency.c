/*
 * Per-operation latency of the request/response workloads (tcp_rr, pipe, unix), as
 * neper's tcp_rr reports it: p1, p50, p99 and the mean of the round trips.
 *
 * Each round trip is timed with the CPU's own counter (rdtsc on x86-64, cntvct_el0 on
 * arm64), read in user mode: timing adds no system call to the measured window, whose
 * kernel work is what kfdo profiles and counts. The counter's rate comes from the
 * whole window, timed against CLOCK_MONOTONIC by the caller.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>

#include "workload.h"

/* At most this many round trips are kept (the first ones): 32 MiB. */
#define MAX_KEPT (4u << 20)

/* What the last latency_end() found, for print_result(); cleared when taken. */
static struct latency_summary last;
static bool have_last;

int latency_begin(struct latency *l, uint64_t n)
{
	l->cap = n < MAX_KEPT ? n : MAX_KEPT;
	l->n = 0;
	l->ticks = l->cap ? malloc(l->cap * sizeof *l->ticks) : NULL;
	if (l->cap && !l->ticks)
		return fail_errno("allocating %" PRIu64 " latency slots", l->cap);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The value at quantile q of n sorted values (nearest rank). */
static uint64_t quantile(const uint64_t *sorted, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n + 0.5);

	return sorted[rank == 0 ? 0 : (rank > n ? n : rank) - 1];
}

void latency_end(struct latency *l, uint64_t window_ticks, double window_seconds)
{
	double us_per_tick, sum = 0;

	have_last = false;
	if (l->n && window_ticks && window_seconds > 0) {
		us_per_tick = window_seconds * 1e6 / (double)window_ticks;
		qsort(l->ticks, l->n, sizeof *l->ticks, by_value);
		for (uint64_t i = 0; i < l->n; i++)
			sum += (double)l->ticks[i];
		last.p1_us = (double)quantile(l->ticks, l->n, 0.01) * us_per_tick;
		last.p50_us = (double)quantile(l->ticks, l->n, 0.50) * us_per_tick;
		last.p99_us = (double)quantile(l->ticks, l->n, 0.99) * us_per_tick;
		last.mean_us = sum / (double)l->n * us_per_tick;
		have_last = true;
	}
	free(l->ticks);
	l->ticks = NULL;
}

bool latency_take(struct latency_summary *out)
{
	bool had = have_last;

	if (had)
		*out = last;
	have_last = false;
	return had;
}

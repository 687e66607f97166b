/*
 * Error messages, timing and the result lines on stdout (the serial console,
 * which kfdo reads back: crates/optimize/src/kernel/boot.rs parses them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "workload.h"

/* The last failure, printed by main() in the FAILED line. */
static char error_text[512];

static void __attribute__((format(printf, 2, 0))) vrecord(int err, const char *fmt, va_list ap)
{
	int n = vsnprintf(error_text, sizeof error_text, fmt, ap);

	if (n < 0 || (size_t)n >= sizeof error_text)
		return;
	if (err)
		snprintf(error_text + n, sizeof error_text - (size_t)n, " (%s)", strerror(err));
	else
		snprintf(error_text + n, sizeof error_text - (size_t)n, " (no error code)");
}

/* Records "what (strerror(errno))"; keeps errno for the caller. */
int fail_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vrecord(err, fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

/* Records a message of its own, for failures that are not a syscall's. */
int fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(error_text, sizeof error_text, fmt, ap);
	va_end(ap);
	return -1;
}

const char *last_error(void)
{
	return error_text[0] ? error_text : "unknown error";
}

/* CLOCK_MONOTONIC: steady across the run, unaffected by the guest's wall clock. */
struct timespec clock_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

double seconds_since(struct timespec t0)
{
	struct timespec t1 = clock_now();

	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

/* Flushed at once: the guest may power off right after, losing buffered text. */
void print_result(const char *name, uint64_t ops, double seconds)
{
	/* A clock that did not move still gives a finite, positive rate. */
	double rate = (double)ops / (seconds > 1e-9 ? seconds : 1e-9);

	struct latency_summary l;

	printf("kfdo-workload: %s ops=%" PRIu64 " seconds=%.6f ops_per_s=%.1f",
	       name, ops, seconds, rate);
	if (latency_take(&l))
		printf(" p1_us=%.2f p50_us=%.2f p99_us=%.2f mean_us=%.2f",
		       l.p1_us, l.p50_us, l.p99_us, l.mean_us);
	printf("\n");
	fflush(stdout);
}

void print_failed(const char *name, const char *what)
{
	printf("kfdo-workload: FAILED %s: %s\n", name, what);
	fflush(stdout);
}

/*
 * syscall: the bare cost of entering and leaving the kernel (entry code,
 * mitigations, the syscall table), with getppid() as an almost empty body.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

int wl_syscall(uint64_t n, double *seconds)
{
	struct timespec t0 = clock_now();

	KFDO_WINDOW_START();
	/* Through syscall(2): a libc could answer getppid() without the kernel. */
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);
	return 0;
}

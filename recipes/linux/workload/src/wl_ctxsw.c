/*
 * ctxsw: two processes on one CPU handing it to each other with sched_yield(),
 * n times each: the scheduler's pick-next and context-switch paths, with no
 * wake-up or I/O around them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

struct yielder {
	uint64_t n;
	int ready_r, ready_w; /* the child writes one byte on ready_w before it starts */
};

static int yielder_main(void *arg)
{
	const struct yielder *y = arg;
	char c = 'r';

	close(y->ready_r);
	if (write(y->ready_w, &c, 1) != 1)
		return fail_errno("ctxsw child: write");
	close(y->ready_w);
	for (uint64_t i = 0; i < y->n; i++)
		sched_yield();
	return 0;
}

/*
 * The CPU both processes are pinned to: CPU 0 in the guest; natively, the first
 * one this process may use (a container's cpuset may exclude CPU 0).
 */
static int first_cpu(const cpu_set_t *set)
{
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set))
			return cpu;
	return 0;
}

static int ctxsw_run(uint64_t n, double *seconds)
{
	struct yielder y = { .n = n };
	int ready[2];
	pid_t pid, r;
	int status = 0, err = 0;
	struct timespec t0;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return fail_errno("pipe");
	y.ready_r = ready[0];
	y.ready_w = ready[1];
	pid = child_start(yielder_main, &y);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -1;
	}
	/* Both must be yielding, not one still forking, when the clock starts. */
	if (wait_ready(ready[0], "ctxsw child") < 0) {
		close(ready[0]);
		child_kill(pid);
		return -1;
	}
	close(ready[0]);

	t0 = clock_now();
	KFDO_WINDOW_START();
	for (uint64_t i = 0; i < n; i++)
		sched_yield();
	/* The measured work is both processes' n yields: wait for the child's last. */
	r = waitpid(pid, &status, 0);
	if (r < 0)
		err = errno;
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);

	if (r < 0) {
		errno = err;
		fail_errno("waitpid");
		child_kill(pid);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return fail_msg("the ctxsw child failed (wait status %#x)", (unsigned)status);
	return 0;
}

int wl_ctxsw(uint64_t n, double *seconds)
{
	cpu_set_t old, one;
	int rc;

	if (sched_getaffinity(0, sizeof old, &old) < 0)
		return fail_errno("sched_getaffinity");
	CPU_ZERO(&one);
	CPU_SET(first_cpu(&old), &one);
	/* Pinned before the fork: the child inherits the same single CPU. */
	if (sched_setaffinity(0, sizeof one, &one) < 0)
		return fail_errno("sched_setaffinity");
	rc = ctxsw_run(n, seconds);
	/* The workloads after this one run unpinned again. */
	if (sched_setaffinity(0, sizeof old, &old) < 0 && rc == 0)
		return fail_errno("sched_setaffinity (restore)");
	return rc;
}

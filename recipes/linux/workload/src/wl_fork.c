/*
 * fork_exit and fork_exec: process creation and teardown (page tables copied
 * and freed, the exit and wait paths), and for fork_exec the ELF loader on top.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

/* Why a child did not exit 0: into the error message. */
static int bad_status(uint64_t i, int status, const char *what)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return fail_msg("child %" PRIu64 ": %s failed (exit status 127)", i, what);
	if (WIFSIGNALED(status))
		return fail_msg("child %" PRIu64 ": killed by signal %d", i, WTERMSIG(status));
	return fail_msg("child %" PRIu64 ": exit status %d", i, WEXITSTATUS(status));
}

int wl_fork_exit(uint64_t n, double *seconds)
{
	uint64_t i;
	int status = 0, err = 0;
	pid_t pid = 0;
	struct timespec t0;

	fflush(stdout); /* no buffered text copied n times (the children _exit anyway) */
	t0 = clock_now();
	KFDO_WINDOW_START();
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			err = errno;
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			break;
	}
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);

	if (i == n)
		return 0;
	errno = err;
	if (pid < 0)
		return fail_errno("fork %" PRIu64, i);
	if (err)
		return fail_errno("waitpid %" PRIu64, i);
	return bad_status(i, status, "_exit");
}

/*
 * The program fork_exec runs: this binary itself (static, so exec maps only it),
 * found once. /proc/self/exe is right natively; as /init it is /init.
 */
static const char *self_path(void)
{
	static char path[PATH_MAX];

	if (!path[0]) {
		ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);

		if (len > 0)
			path[len] = '\0';
		else
			snprintf(path, sizeof path, "/init");
	}
	return path;
}

/* fork + execve(self, {"kfdo-true"}) + waitpid; the child's status into *status. */
static pid_t fork_exec_once(const char *path, int *status)
{
	static char arg0[] = KFDO_TRUE_NAME;
	char *argv[] = { arg0, NULL };
	char *envp[] = { NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execve(path, argv, envp);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	return waitpid(pid, status, 0);
}

int wl_fork_exec(uint64_t n, double *seconds)
{
	const char *path = self_path();
	uint64_t i;
	int status = 0, err = 0;
	pid_t r;
	struct timespec t0;

	fflush(stdout);
	/* Set-up's check, outside the measurement: the exec works at all. */
	if (fork_exec_once(path, &status) < 0)
		return fail_errno("fork/waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return fail_msg("execve %s failed in the child (exit status 127)", path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return bad_status(0, status, "execve");

	t0 = clock_now();
	KFDO_WINDOW_START();
	for (i = 0; i < n; i++) {
		r = fork_exec_once(path, &status);
		if (r < 0) {
			err = errno;
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			break;
	}
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);

	if (i == n)
		return 0;
	errno = err;
	if (err)
		return fail_errno("fork/waitpid %" PRIu64, i);
	return bad_status(i, status, "execve");
}

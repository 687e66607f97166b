/*
 * The peer processes of the workloads (servers, echoers, yielders): started with
 * fork() so that both sides run on the measured kernel, killed and reaped by the
 * parent when the workload fails, so that nothing is left blocked behind it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

/* Runs fn(arg) in a child, which exits 0 when fn returns 0. Returns the pid, or -1. */
pid_t child_start(int (*fn)(void *), void *arg)
{
	pid_t pid;

	/* Nothing buffered may be written twice (the child leaves with _exit anyway). */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		int rc = fn(arg);

		/* Not a kfdo-workload: line: the parent reports the failure. */
		if (rc != 0)
			dprintf(2, "kfdo-child: %s\n", last_error());
		/* _exit: no atexit handlers or stdio flushing of the parent's state. */
		_exit(rc ? 1 : 0);
	}
	return pid;
}

/* On a failure path: stops the child and reaps it, keeping errno. */
void child_kill(pid_t pid)
{
	int err = errno;

	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	errno = err;
}

/* Reaps a child that should have finished by itself; fails unless it exited 0. */
int child_wait(pid_t pid)
{
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return fail_errno("waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		return fail_msg("the peer process was killed by signal %d", WTERMSIG(status));
	return fail_msg("the peer process exited with status %d", WEXITSTATUS(status));
}

/*
 * pipe and unix: the 1-byte ping-pong between two processes over a pair of
 * pipes, or over one AF_UNIX stream socketpair (in both cases every round trip
 * is two wake-ups of a sleeping process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload.h"

/* The echoing child: closes the parent's ends first, so that it sees their end of file. */
struct echoer {
	int rfd, wfd;
	int parent_fds[2]; /* -1: none */
};

static int echoer_main(void *arg)
{
	const struct echoer *e = arg;

	for (int i = 0; i < 2; i++)
		if (e->parent_fds[i] >= 0)
			close(e->parent_fds[i]);
	return echo_loop(e->rfd, e->wfd);
}

/* Ping-pong with an echoer that reads e->rfd and writes e->wfd; the parent uses rfd, wfd. */
static int run_pingpong(struct echoer *e, int rfd, int wfd, uint64_t n, double *seconds)
{
	pid_t pid = child_start(echoer_main, e);
	int rc;

	/* The child's ends are the child's alone: its exit must be seen as end of file. */
	close(e->rfd);
	if (e->wfd != e->rfd)
		close(e->wfd);
	rc = pid < 0 ? -1 : pingpong_check(rfd, wfd);
	if (rc == 0)
		rc = pingpong_timed(rfd, wfd, n, seconds);
	close(rfd);
	if (wfd != rfd)
		close(wfd); /* the echoer reads end of file and exits */
	if (pid < 0)
		return -1;
	if (rc < 0) {
		child_kill(pid);
		return -1;
	}
	return child_wait(pid);
}

int wl_pipe(uint64_t n, double *seconds)
{
	int down[2], up[2]; /* down: parent to child; up: child to parent */
	struct echoer e;

	if (pipe2(down, O_CLOEXEC) < 0)
		return fail_errno("pipe");
	if (pipe2(up, O_CLOEXEC) < 0) {
		fail_errno("pipe");
		close(down[0]);
		close(down[1]);
		return -1;
	}
	e.rfd = down[0];
	e.wfd = up[1];
	e.parent_fds[0] = up[0];
	e.parent_fds[1] = down[1];
	return run_pingpong(&e, up[0], down[1], n, seconds);
}

int wl_unix(uint64_t n, double *seconds)
{
	int sv[2];
	struct echoer e;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		if (errno == EAFNOSUPPORT)
			return fail_errno("socketpair: AF_UNIX missing: is unix.ko in kfdo.insmod? "
					  "(or CONFIG_UNIX=y)");
		return fail_errno("socketpair(AF_UNIX, SOCK_STREAM)");
	}
	if (set_socket_timeouts(sv[0]) < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	e.rfd = e.wfd = sv[1];
	e.parent_fds[0] = sv[0];
	e.parent_fds[1] = -1;
	return run_pingpong(&e, sv[0], sv[0], n, seconds);
}

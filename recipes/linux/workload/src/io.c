/*
 * The 1-byte request/response exchange that tcp_rr, pipe and unix share: the
 * peer echoes each byte back; the parent sends one and waits for it, n times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

/* A peer that stops answering turns a blocked read or write into EAGAIN. */
int set_socket_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = SOCKET_TIMEOUT_S };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
		return fail_errno("setsockopt SO_RCVTIMEO/SO_SNDTIMEO");
	return 0;
}

/* Set-up's sanity check: fd becomes readable (data or end of file) in time. */
int wait_readable(int fd, const char *peer)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, PEER_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return fail_errno("poll");
	if (r == 0)
		return fail_msg("%s: no answer within %d s", peer, PEER_TIMEOUT_MS / 1000);
	return 0;
}

/* Waits, with a timeout, for the one byte a peer sends when it is ready. */
int wait_ready(int fd, const char *peer)
{
	char c;
	ssize_t r;

	if (wait_readable(fd, peer) < 0)
		return -1;
	r = read(fd, &c, 1);
	if (r == 0)
		return fail_msg("%s: gone before it was ready", peer);
	if (r != 1)
		return fail_errno("%s: read", peer);
	return 0;
}

/* Reads len bytes unless end of file comes first. Returns the bytes read, or -1. */
ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The peer's side: echoes every byte until the parent closes its end. */
int echo_loop(int rfd, int wfd)
{
	char c;
	ssize_t r;

	while ((r = read(rfd, &c, 1)) == 1)
		if (write(wfd, &c, 1) != 1)
			return fail_errno("echo: write");
	return r == 0 ? 0 : fail_errno("echo: read");
}

/*
 * One round trip outside the measurement, waited for with a timeout: proves the
 * peer is up and answering before the loop, which then trusts it.
 */
int pingpong_check(int rfd, int wfd)
{
	char c = 'k';
	ssize_t r;

	if (write(wfd, &c, 1) != 1)
		return fail_errno("first request: write");
	if (wait_readable(rfd, "first request") < 0)
		return -1;
	r = read(rfd, &c, 1);
	if (r == 0)
		return fail_msg("first request: the peer closed its end");
	if (r != 1)
		return fail_errno("first request: read");
	return 0;
}

/* The measured loop: n round trips of one byte. */
int pingpong_timed(int rfd, int wfd, uint64_t n, double *seconds)
{
	char c = 'k';
	uint64_t i, c0, start;
	ssize_t r = 1;
	int err = 0;
	struct latency lat;
	struct timespec t0;

	if (latency_begin(&lat, n) < 0)
		return -1;
	t0 = clock_now();
	c0 = cpu_ticks();
	KFDO_WINDOW_START();
	for (i = 0; i < n; i++) {
		start = cpu_ticks();
		if (write(wfd, &c, 1) != 1 || (r = read(rfd, &c, 1)) != 1) {
			err = errno;
			break;
		}
		latency_add(&lat, cpu_ticks() - start);
	}
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);
	latency_end(&lat, cpu_ticks() - c0, *seconds);

	if (i == n)
		return 0;
	if (r == 0)
		return fail_msg("round trip %" PRIu64 ": the peer closed its end", i);
	errno = err;
	if (err == EAGAIN || err == EWOULDBLOCK)
		return fail_msg("round trip %" PRIu64 ": no answer within %d s", i, SOCKET_TIMEOUT_S);
	return fail_errno("round trip %" PRIu64, i);
}

/*
 * tcp_rr and tcp_stream: TCP over 127.0.0.1, between this process and a forked
 * server, so that both ends of the connection run through the kernel's TCP/IP
 * stack and loopback device.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

/* tcp_stream's write size. */
#define CHUNK (16 * 1024)

/* Small requests must go out at once, not wait for Nagle's coalescing. */
static int set_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
		return fail_errno("setsockopt TCP_NODELAY");
	return 0;
}

/*
 * A listening socket on 127.0.0.1 and a port the kernel picks (no clash with
 * anything else on the host when run natively). Listening before the fork
 * means the client's connect cannot race the server's start.
 */
static int tcp_listen(struct sockaddr_in *addr)
{
	socklen_t len = sizeof *addr;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail_errno("socket(AF_INET, SOCK_STREAM)");
	memset(addr, 0, sizeof *addr);
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr->sin_port = 0;
	if (bind(fd, (struct sockaddr *)addr, sizeof *addr) < 0) {
		fail_errno("bind 127.0.0.1 (is lo up?)");
		goto fail;
	}
	if (listen(fd, 1) < 0) {
		fail_errno("listen");
		goto fail;
	}
	if (getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
		fail_errno("getsockname");
		goto fail;
	}
	/* accept() honours SO_RCVTIMEO: a server whose client never comes gives up. */
	if (set_socket_timeouts(fd) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static int tcp_connect(const struct sockaddr_in *addr, bool nodelay)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail_errno("socket(AF_INET, SOCK_STREAM)");
	if ((nodelay && set_nodelay(fd) < 0) || set_socket_timeouts(fd) < 0)
		goto fail;
	if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) < 0) {
		fail_errno("connect 127.0.0.1:%u%s", ntohs(addr->sin_port),
			   errno == ENETUNREACH ? ", is lo up?" : "");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* The server process: accepts one connection and hands it to serve(). */
struct server {
	int listener;
	bool nodelay;
	int (*serve)(int fd);
};

static int server_main(void *arg)
{
	const struct server *s = arg;
	int fd = accept4(s->listener, NULL, NULL, SOCK_CLOEXEC);
	int rc;

	close(s->listener);
	if (fd < 0)
		return fail_errno("accept");
	rc = (s->nodelay && set_nodelay(fd) < 0) ? -1 : s->serve(fd);
	close(fd);
	return rc;
}

static int serve_echo(int fd)
{
	return echo_loop(fd, fd);
}

/*
 * tcp_stream's receiver: says it is ready, reads until the sender shuts its
 * side down, then answers with the byte count, which tells the sender that
 * every byte arrived (and lets it check the count).
 */
static int serve_sink(int fd)
{
	static char buf[CHUNK];
	uint64_t total = 0;
	char ready = 'r';
	ssize_t r;

	if (write(fd, &ready, 1) != 1)
		return fail_errno("sink: write");
	while ((r = read(fd, buf, sizeof buf)) > 0)
		total += (uint64_t)r;
	if (r < 0)
		return fail_errno("sink: read");
	if (write(fd, &total, sizeof total) != (ssize_t)sizeof total)
		return fail_errno("sink: write the byte count");
	return 0;
}

/* Starts the server; returns its pid, or -1. */
static pid_t start_server(struct sockaddr_in *addr, bool nodelay, int (*serve)(int))
{
	struct server s;
	pid_t pid;

	s.listener = tcp_listen(addr);
	if (s.listener < 0)
		return -1;
	s.nodelay = nodelay;
	s.serve = serve;
	pid = child_start(server_main, &s);
	/* The child holds the listener now: connect works while it lives. */
	close(s.listener);
	return pid;
}

int wl_tcp_rr(uint64_t n, double *seconds)
{
	struct sockaddr_in addr;
	pid_t pid = start_server(&addr, true, serve_echo);
	int fd, rc;

	if (pid < 0)
		return -1;
	fd = tcp_connect(&addr, true);
	rc = fd < 0 ? -1 : pingpong_check(fd, fd);
	if (rc == 0)
		rc = pingpong_timed(fd, fd, n, seconds);
	if (fd >= 0)
		close(fd); /* the server reads end of file and exits */
	if (rc < 0) {
		child_kill(pid);
		return -1;
	}
	return child_wait(pid);
}

/* tcp_stream's measured part: n bytes out, then the receiver's acknowledgement. */
static int stream_timed(int fd, uint64_t n, double *seconds)
{
	static char buf[CHUNK];
	uint64_t sent = 0, count = 0;
	const char *step = NULL;
	bool closed = false;
	int err = 0;
	struct timespec t0;

	memset(buf, 'k', sizeof buf);
	t0 = clock_now();
	KFDO_WINDOW_START();
	while (sent < n) {
		size_t len = n - sent < CHUNK ? (size_t)(n - sent) : CHUNK;
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			step = "write";
			err = errno;
			break;
		}
		sent += (uint64_t)w;
	}
	/*
	 * Until the receiver has read the last byte: without this the time would
	 * stop while up to a socket buffer's worth was still in flight.
	 */
	if (!step && shutdown(fd, SHUT_WR) < 0) {
		step = "shutdown";
		err = errno;
	}
	if (!step) {
		ssize_t r = read_full(fd, &count, sizeof count);

		if (r < 0) {
			step = "read the receiver's byte count";
			err = errno;
		} else if ((size_t)r < sizeof count) {
			closed = true;
		}
	}
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);

	if (closed)
		return fail_msg("the receiver closed the connection without its byte count");
	if (step) {
		errno = err;
		if (err == EAGAIN || err == EWOULDBLOCK)
			return fail_msg("%s after %" PRIu64 " bytes: the receiver stalled for %d s",
					step, sent, SOCKET_TIMEOUT_S);
		return fail_errno("%s after %" PRIu64 " bytes", step, sent);
	}
	if (count != n)
		return fail_msg("the receiver got %" PRIu64 " bytes of %" PRIu64, count, n);
	return 0;
}

int wl_tcp_stream(uint64_t n, double *seconds)
{
	struct sockaddr_in addr;
	/* Bulk transfer as applications do it: Nagle on, segments coalesced. */
	pid_t pid = start_server(&addr, false, serve_sink);
	int fd, rc = -1;

	if (pid < 0)
		return -1;
	fd = tcp_connect(&addr, false);
	if (fd >= 0 && wait_ready(fd, "receiver") == 0)
		rc = stream_timed(fd, n, seconds);
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		child_kill(pid);
		return -1;
	}
	return child_wait(pid);
}

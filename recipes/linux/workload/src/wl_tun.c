/*
 * tun: UDP request/response through a TUN device, the path of a user-space VPN or
 * VM network back end. One operation: a 1-byte UDP datagram goes out through the
 * device (the tun driver's transmit path), this process reads the IP packet from
 * the device, turns it round and writes it back (the driver's receive path), and
 * the socket receives the answer. The driver is the kernel recipe's loadable
 * module (CONFIG_TUN=m), so this is the workload that puts module code in the
 * profile.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

#define TUN_NAME "kfdo0"
/* A private /24 for the device: this end, and the peer that only exists as the reply. */
#define LOCAL_ADDR "10.77.0.1"
#define PEER_ADDR "10.77.0.2"
#define NETMASK "255.255.255.0"
#define PEER_PORT 7

/* Room for any packet the device may hand over (its MTU is 1500). */
#define PACKET_MAX 2048

/* An interface request for the device, all else zero. */
static struct ifreq tun_ifreq(void)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof ifr);
	strncpy(ifr.ifr_name, TUN_NAME, IFNAMSIZ - 1);
	return ifr;
}

static int set_in_addr(int sock, unsigned long req, const char *what, const char *addr)
{
	struct ifreq ifr = tun_ifreq();
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	sin->sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin->sin_addr);
	if (ioctl(sock, req, &ifr) < 0)
		return fail_errno("%s %s %s", what, TUN_NAME, addr);
	return 0;
}

/* Creates the device, gives it LOCAL_ADDR/24 and brings it up; returns its fd. */
static int tun_open(void)
{
	struct ifreq ifr = tun_ifreq();
	int fd, sock;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail_errno("open /dev/net/tun (is the tun module loaded: kfdo.insmod=, "
				  "or CONFIG_TUN=y?)");
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fail_errno("ioctl TUNSETIFF %s", TUN_NAME);
		goto fail;
	}
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		fail_errno("socket(AF_INET, SOCK_DGRAM)");
		goto fail;
	}
	if (set_in_addr(sock, SIOCSIFADDR, "SIOCSIFADDR", LOCAL_ADDR) < 0 ||
	    set_in_addr(sock, SIOCSIFNETMASK, "SIOCSIFNETMASK", NETMASK) < 0)
		goto fail_sock;
	ifr = tun_ifreq();
	ifr.ifr_flags = IFF_UP | IFF_RUNNING;
	if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0) {
		fail_errno("SIOCSIFFLAGS %s up", TUN_NAME);
		goto fail_sock;
	}
	close(sock);
	return fd;
fail_sock:
	close(sock);
fail:
	close(fd);
	return -1;
}

/* A UDP socket on LOCAL_ADDR, connected to PEER_ADDR:PEER_PORT (routed via the device). */
static int udp_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail_errno("socket(AF_INET, SOCK_DGRAM)");
	if (set_socket_timeouts(fd) < 0)
		goto fail;
	inet_pton(AF_INET, LOCAL_ADDR, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		fail_errno("bind %s", LOCAL_ADDR);
		goto fail;
	}
	inet_pton(AF_INET, PEER_ADDR, &a.sin_addr);
	a.sin_port = htons(PEER_PORT);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		fail_errno("connect %s:%d", PEER_ADDR, PEER_PORT);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * Reads packets from the device until our datagram comes (the kernel may send
 * others through it, e.g. IPv6 router solicitations) and writes it back with the
 * addresses and ports swapped. Swapping leaves the IP and UDP checksums valid:
 * both are one's-complement sums over the same 16-bit words in another order.
 */
static int reflect(int tun)
{
	uint8_t p[PACKET_MAX];

	for (;;) {
		ssize_t len = read(tun, p, sizeof p);
		size_t ihl;
		uint8_t tmp[4];

		if (len < 0)
			return fail_errno("read %s", TUN_NAME);
		if (len < 20 || (p[0] >> 4) != 4 || p[9] != IPPROTO_UDP)
			continue;
		ihl = (size_t)(p[0] & 0xf) * 4;
		if ((size_t)len < ihl + 8)
			continue;
		memcpy(tmp, p + 12, 4);
		memcpy(p + 12, p + 16, 4);
		memcpy(p + 16, tmp, 4);
		memcpy(tmp, p + ihl, 2);
		memcpy(p + ihl, p + ihl + 2, 2);
		memcpy(p + ihl + 2, tmp, 2);
		if (write(tun, p, (size_t)len) != len)
			return fail_errno("write %s", TUN_NAME);
		return 0;
	}
}

static int round_trip(int udp, int tun)
{
	char c = 'k';

	if (send(udp, &c, 1, 0) != 1)
		return fail_errno("send to %s", PEER_ADDR);
	if (reflect(tun) < 0)
		return -1;
	if (recv(udp, &c, 1, 0) != 1)
		return fail_errno("recv from %s", PEER_ADDR);
	return 0;
}

int wl_tun(uint64_t n, double *seconds)
{
	struct timespec t0;
	int tun, udp, rc = -1;
	char c = 'k';

	tun = tun_open();
	if (tun < 0)
		return -1;
	udp = udp_open();
	if (udp < 0)
		goto out_tun;
	/* One checked round trip, with a timeout, before the blocking loop. */
	if (send(udp, &c, 1, 0) != 1) {
		fail_errno("send to %s", PEER_ADDR);
		goto out;
	}
	if (wait_readable(tun, TUN_NAME) < 0 || reflect(tun) < 0)
		goto out;
	if (recv(udp, &c, 1, 0) != 1) {
		fail_errno("recv the reflected datagram (reverse-path filter on %s?)", TUN_NAME);
		goto out;
	}

	KFDO_WINDOW_START();
	t0 = clock_now();
	for (uint64_t i = 0; i < n; i++)
		if (round_trip(udp, tun) < 0)
			goto out_window;
	*seconds = seconds_since(t0);
	rc = 0;
out_window:
	KFDO_WINDOW_STOP();
out:
	close(udp);
out_tun:
	/* Closing the (non-persistent) device's fd removes the interface. */
	close(tun);
	return rc;
}

/*
 * What /init does before the workloads, since nothing else runs in the
 * initramfs: the kernel's pseudo file systems, a console, and the loopback
 * interface that the TCP workloads talk over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

static int mount_fs(const char *type, const char *dir, unsigned long flags, const char *opts,
		    bool busy_ok)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return fail_errno("mkdir %s", dir);
	if (mount(type, dir, type, flags, opts) == 0)
		return 0;
	/* devtmpfs may be there already (CONFIG_DEVTMPFS_MOUNT, or a second /init). */
	if (busy_ok && errno == EBUSY)
		return 0;
	return fail_errno("mount %s on %s", type, dir);
}

/*
 * The kernel gives /init the console as fds 0-2 only if the initramfs has a
 * /dev/console node, which build-initramfs.sh can make only as root. Otherwise
 * devtmpfs provides the node now: open it for whichever of 0-2 are missing.
 */
static void open_console(void)
{
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);

	if (fd < 0)
		return; /* nowhere to say so */
	for (int i = 0; i <= 2; i++)
		if (fcntl(i, F_GETFD) < 0)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/* lo comes up down; once up, the kernel itself gives it 127.0.0.1/8. */
static int loopback_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	/* A kernel without networking runs the other workloads; the TCP ones fail at
	 * their own socket() and say so. Without CONFIG_INET socket(AF_INET) is
	 * EAFNOSUPPORT, without CONFIG_NET there is no socket() at all (ENOSYS). */
	if (fd < 0 && (errno == EAFNOSUPPORT || errno == ENOSYS))
		return 0;
	if (fd < 0)
		return fail_errno("socket(AF_INET) to configure lo");
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		fail_errno("SIOCGIFFLAGS lo");
		close(fd);
		return -1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		fail_errno("SIOCSIFFLAGS lo up");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int system_init(void)
{
	/* /dev first: the console, if the kernel could not open one, comes from it. */
	int rc = mount_fs("devtmpfs", "/dev", MS_NOSUID, "mode=0755", true);

	open_console();
	if (rc < 0)
		return -1;
	if (mount_fs("proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, false) < 0 ||
	    mount_fs("sysfs", "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, false) < 0 ||
	    mount_fs("tmpfs", "/tmp", MS_NOSUID | MS_NODEV, "mode=1777", false) < 0)
		return -1;
	return loopback_up();
}

/*
 * file: the life of a small file on tmpfs: create, write 4 KiB, close, open,
 * read, close, unlink (path lookup, inode and dentry creation and teardown,
 * page cache, fd table).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "kfdo_markers.h"
#include "workload.h"

#define FILE_SIZE 4096

/* One round; on failure records which step failed and returns -1. */
static int file_round(const char *path, char *buf, uint64_t i)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	ssize_t r;

	if (fd < 0)
		return fail_errno("round %" PRIu64 ": create %s", i, path);
	r = write(fd, buf, FILE_SIZE);
	if (r != FILE_SIZE) {
		if (r >= 0)
			fail_msg("round %" PRIu64 ": short write to %s (%zd bytes)", i, path, r);
		else
			fail_errno("round %" PRIu64 ": write %s", i, path);
		close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return fail_errno("round %" PRIu64 ": close %s", i, path);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno("round %" PRIu64 ": open %s", i, path);
	r = read(fd, buf, FILE_SIZE);
	if (r != FILE_SIZE) {
		if (r >= 0)
			fail_msg("round %" PRIu64 ": short read of %s (%zd bytes)", i, path, r);
		else
			fail_errno("round %" PRIu64 ": read %s", i, path);
		close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return fail_errno("round %" PRIu64 ": close %s", i, path);
	if (unlink(path) < 0)
		return fail_errno("round %" PRIu64 ": unlink %s", i, path);
	return 0;
}

int wl_file(uint64_t n, double *seconds)
{
	static char buf[FILE_SIZE];
	char path[64];
	uint64_t i;
	struct timespec t0;

	/* Per process: natively, several runs may share /tmp. */
	snprintf(path, sizeof path, "/tmp/kfdo-file.%ld", (long)getpid());
	/* Left over from a run that was killed: O_EXCL would refuse it. */
	if (unlink(path) < 0 && errno != ENOENT)
		return fail_errno("unlink %s", path);
	for (size_t k = 0; k < sizeof buf; k++)
		buf[k] = (char)('a' + k % 26);

	t0 = clock_now();
	KFDO_WINDOW_START();
	for (i = 0; i < n; i++)
		if (file_round(path, buf, i) < 0)
			break;
	KFDO_WINDOW_STOP();
	*seconds = seconds_since(t0);

	if (i == n)
		return 0;
	unlink(path); /* whichever step failed, leave nothing behind */
	return -1;
}

/*
 * Kernel gcov counts for gcov kernel PGO (kfdo.gcov=1): the counters are zeroed
 * just before the workloads, so that they count the workloads and not the boot,
 * and afterwards every .gcda under /sys/kernel/debug/gcov goes out on the
 * console, the one channel the guest has, as text kfdo reads back:
 *
 *   kfdo-gcov: begin
 *   kfdo-gcov: file SIZE CRC32 PATH      PATH as under /sys/kernel/debug/gcov
 *   kfdo-gcov: data BASE64               as many lines as the file needs
 *   kfdo-gcov: end FILES
 *
 * The size and CRC-32 (IEEE) catch a line the kernel's own messages broke.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

#define DEBUGFS "/sys/kernel/debug"
#define GCOV_DIR DEBUGFS "/gcov"
/* Bytes of a file per data line: 57 bytes make 76 base64 characters. */
#define LINE_BYTES 57

static int mount_debugfs(void)
{
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) == 0 || errno == EBUSY)
		return 0;
	return fail_errno("mount debugfs on %s (the kernel needs CONFIG_DEBUG_FS)", DEBUGFS);
}

int gcov_reset(void)
{
	int fd;

	if (mount_debugfs() < 0)
		return -1;
	fd = open(GCOV_DIR "/reset", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno("open %s/reset (the kernel needs CONFIG_GCOV_KERNEL)", GCOV_DIR);
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return fail_errno("write %s/reset", GCOV_DIR);
	}
	close(fd);
	return 0;
}

static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static void put_base64(const unsigned char *p, size_t n)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char out[(LINE_BYTES / 3 + 1) * 4 + 1];
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = digits[(v >> 18) & 63];
		out[o++] = digits[(v >> 12) & 63];
		out[o++] = i + 1 < n ? digits[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? digits[v & 63] : '=';
	}
	out[o] = '\0';
	printf("kfdo-gcov: data %s\n", out);
}

/* The whole of a debugfs file, whose size stat() does not tell. */
static unsigned char *read_all(const char *path, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		fail_errno("open %s", path);
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *bigger = realloc(buf, cap *= 2);

			if (!bigger) {
				fail_errno("reading %s", path);
				break;
			}
			buf = bigger;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail_errno("read %s", path);
			break;
		}
		if (r == 0) {
			close(fd);
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	close(fd);
	free(buf);
	return NULL;
}

static int dump_file(const char *path, unsigned *files)
{
	size_t len = 0;
	unsigned char *data = read_all(path, &len);

	if (!data)
		return -1;
	printf("kfdo-gcov: file %zu %08x %s\n", len, crc32_ieee(data, len),
	       path + strlen(GCOV_DIR));
	for (size_t i = 0; i < len; i += LINE_BYTES)
		put_base64(data + i, len - i < LINE_BYTES ? len - i : LINE_BYTES);
	free(data);
	(*files)++;
	return 0;
}

/* Every .gcda under dir; the .gcno entries beside them are links, left alone. */
static int dump_dir(const char *dir, unsigned *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return fail_errno("opendir %s", dir);
	while (rc == 0 && (e = readdir(d))) {
		char path[4096];
		struct stat st;
		size_t n = strlen(e->d_name);

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
			rc = fail_msg("path too long under %s", dir);
			break;
		}
		if (lstat(path, &st) < 0) {
			rc = fail_errno("lstat %s", path);
			break;
		}
		if (S_ISDIR(st.st_mode))
			rc = dump_dir(path, files);
		else if (S_ISREG(st.st_mode) && n > 5 && strcmp(e->d_name + n - 5, ".gcda") == 0)
			rc = dump_file(path, files);
	}
	closedir(d);
	return rc;
}

int gcov_dump(void)
{
	static char buf[1 << 16];
	unsigned files = 0;
	int rc;

	/* Many lines at a time: fewer, larger writes to the console. */
	fflush(stdout);
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	printf("kfdo-gcov: begin\n");
	rc = dump_dir(GCOV_DIR, &files);
	if (rc == 0)
		printf("kfdo-gcov: end %u\n", files);
	fflush(stdout);
	setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
	return rc;
}

/*
 * kfdo.insmod=: kernel modules the workloads need (built with the kernel under
 * test, so they are profiled and optimized with it). Each one loaded is
 * reported with where its code landed, since KASLR moves modules too:
 *   kfdo-module: NAME 0xTEXT_ADDRESS SIZE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

#define NAME_MAX_LEN 64

/* The kernel's name for a module file: no directory, no .ko, '-' as '_'. */
static void module_name(const char *path, char *name, size_t size)
{
	const char *base = base_name(path);
	size_t len = strlen(base), i;

	if (len > 3 && strcmp(base + len - 3, ".ko") == 0)
		len -= 3;
	for (i = 0; i < len && i + 1 < size; i++)
		name[i] = base[i] == '-' ? '_' : base[i];
	name[i] = '\0';
}

/* 0 when unknown (no CONFIG_KALLSYMS: no sections directory). */
static unsigned long long text_address(const char *name)
{
	char path[128];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(path, sizeof path, "/sys/module/%s/sections/.text", name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llx", &addr) != 1)
		addr = 0;
	fclose(f);
	return addr;
}

/* The second column of the module's /proc/modules line; 0 when absent. */
static unsigned long module_size(const char *name)
{
	char line[512], mod[NAME_MAX_LEN];
	unsigned long size, found = 0;
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%63s %lu", mod, &size) == 2 && strcmp(mod, name) == 0) {
			found = size;
			break;
		}
	fclose(f);
	return found;
}

static int load_module(const char *path)
{
	char name[NAME_MAX_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long r;
	int err;

	if (fd < 0)
		return fail_errno("open %s", path);
	/* finit_module: the kernel reads the file itself; no module parameters. */
	r = syscall(SYS_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	/* Already loaded (a second kfdo.insmod entry, or a repeated /init): fine. */
	if (r < 0 && err != EEXIST) {
		errno = err;
		return fail_errno("finit_module %s", path);
	}
	module_name(path, name, sizeof name);
	printf("kfdo-module: %s 0x%llx %lu\n", name, text_address(name), module_size(name));
	fflush(stdout);
	return 0;
}

/* list: comma-separated paths. */
int load_modules(const char *list)
{
	char buf[2048];
	char *save = NULL;

	if (strlen(list) >= sizeof buf)
		return fail_msg("the list is longer than %zu characters", sizeof buf - 1);
	strcpy(buf, list);
	for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (load_module(p) < 0)
			return -1;
	return 0;
}

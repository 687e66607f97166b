/*
 * What to run. As /init: from the kernel command line (kfdo.run=, kfdo.repeat=,
 * kfdo.exit=, kfdo.insmod=, kfdo.gcov=); natively (not PID 1): from the environment
 * (KFDO_RUN, KFDO_REPEAT), for testing on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

/* Parses a positive decimal integer filling [s, end) exactly. */
static int parse_count(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v == 0)
		return -1;
	*out = v;
	return 0;
}

/* NAME:ARG[,NAME:ARG...]; every entry is checked before anything runs. */
static int parse_run(struct config *c, const char *list)
{
	const char *p = list;

	if (!list || !*list)
		return fail_msg("missing: give NAME:ARG[,NAME:ARG...] with NAME one of %s",
				workload_names());
	while (*p) {
		const char *end = strchr(p, ',');
		const char *colon;
		const struct workload *w;
		uint64_t size;
		int len;

		if (!end)
			end = p + strlen(p);
		len = (int)(end - p);
		colon = memchr(p, ':', (size_t)(end - p));
		if (!colon)
			return fail_msg("'%.*s' is not NAME:ARG (valid names: %s)",
					len, p, workload_names());
		w = workload_find(p, (size_t)(colon - p));
		if (!w)
			return fail_msg("unknown workload '%.*s' (valid names: %s)",
					(int)(colon - p), p, workload_names());
		if (parse_count(colon + 1, end, &size) < 0)
			return fail_msg("'%.*s': ARG must be a positive integer (valid names: %s)",
					len, p, workload_names());
		if (c->n_runs == MAX_RUNS)
			return fail_msg("more than %d workloads", MAX_RUNS);
		c->runs[c->n_runs].w = w;
		c->runs[c->n_runs].size = size;
		c->n_runs++;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_repeat(struct config *c, const char *s)
{
	if (parse_count(s, s + strlen(s), &c->repeat) < 0)
		return fail_msg("'%s' is not a positive integer", s);
	return 0;
}

static int parse_exit(struct config *c, const char *s)
{
	if (strcmp(s, "reboot") == 0)
		c->exit = EXIT_REBOOT;
	else if (strcmp(s, "poweroff") == 0)
		c->exit = EXIT_POWEROFF;
	else if (strcmp(s, "shell") == 0)
		c->exit = EXIT_SHELL;
	else
		return fail_msg("'%s' is none of reboot, poweroff, shell", s);
	return 0;
}

/* The command line, kept: config.insmod points into it. */
static char cmdline[4096];

static int read_cmdline(void)
{
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return fail_errno("open /proc/cmdline");
	len = read_full(fd, cmdline, sizeof cmdline - 1);
	close(fd);
	if (len < 0)
		return fail_errno("read /proc/cmdline");
	cmdline[len] = '\0';
	return 0;
}

/* The value of a kfdo.NAME= word, or NULL. */
static const char *param(const char *word, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(word, name, len) == 0 && word[len] == '=')
		return word + len + 1;
	return NULL;
}

static int from_cmdline(struct config *c, const char **subject)
{
	const char *run = NULL, *repeat = NULL, *exit_mode = NULL, *v;
	char *save = NULL;

	*subject = "init";
	if (read_cmdline() < 0)
		return -1;
	/* Words are space-separated; as with the kernel's own, the last one wins. */
	for (char *w = strtok_r(cmdline, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if ((v = param(w, "kfdo.run")))
			run = v;
		else if ((v = param(w, "kfdo.repeat")))
			repeat = v;
		else if ((v = param(w, "kfdo.exit")))
			exit_mode = v;
		else if ((v = param(w, "kfdo.insmod")))
			c->insmod = *v ? v : NULL;
		else if ((v = param(w, "kfdo.gcov")))
			c->gcov = strcmp(v, "1") == 0;
	}
	/* kfdo.exit first: it says what to do should the rest be wrong. */
	*subject = "kfdo.exit";
	if (exit_mode && parse_exit(c, exit_mode) < 0)
		return -1;
	*subject = "kfdo.repeat";
	if (repeat && parse_repeat(c, repeat) < 0)
		return -1;
	*subject = "kfdo.run";
	return parse_run(c, run);
}

static int from_env(struct config *c, const char **subject)
{
	const char *repeat = getenv("KFDO_REPEAT");

	*subject = "KFDO_REPEAT";
	if (repeat && parse_repeat(c, repeat) < 0)
		return -1;
	*subject = "KFDO_RUN";
	return parse_run(c, getenv("KFDO_RUN"));
}

/*
 * Fills c; on failure returns -1 with *subject naming the parameter at fault.
 * Whatever fails, c->exit is valid (the default, reboot, unless
 * kfdo.exit= said otherwise).
 */
int config_load(struct config *c, bool as_init, const char **subject)
{
	memset(c, 0, sizeof *c);
	c->repeat = 1;
	return as_init ? from_cmdline(c, subject) : from_env(c, subject);
}

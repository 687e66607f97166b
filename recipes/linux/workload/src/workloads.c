/* The table of workloads, in the order the README lists them. */
#define _GNU_SOURCE
#include <string.h>

#include "workload.h"

static const struct workload workloads[] = {
	{ "tcp_rr", wl_tcp_rr },
	{ "tcp_stream", wl_tcp_stream },
	{ "pipe", wl_pipe },
	{ "unix", wl_unix },
	{ "ctxsw", wl_ctxsw },
	{ "fork_exit", wl_fork_exit },
	{ "fork_exec", wl_fork_exec },
	{ "file", wl_file },
	{ "syscall", wl_syscall },
	{ "tun", wl_tun },
};

#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])

/* name need not be NUL-terminated: it points into a kfdo.run list. */
const struct workload *workload_find(const char *name, size_t len)
{
	for (size_t i = 0; i < N_WORKLOADS; i++)
		if (strlen(workloads[i].name) == len && memcmp(workloads[i].name, name, len) == 0)
			return &workloads[i];
	return NULL;
}

/* "tcp_rr, tcp_stream, ...": for error messages. */
const char *workload_names(void)
{
	static char names[256];

	if (!names[0]) {
		for (size_t i = 0; i < N_WORKLOADS; i++) {
			if (i)
				strcat(names, ", ");
			strcat(names, workloads[i].name);
		}
	}
	return names;
}

/*
 * kfdo-workload: the /init of kfdo's kernel-training initramfs. It runs the
 * workloads that kfdo.run= names, each timing and marking (for kfdo's emulated
 * recording) only its steady-state loop, prints one result line per workload on
 * the console, then reboots the machine, which ends QEMU (run with -no-reboot).
 *
 * Not PID 1 (a test on the host), it takes KFDO_RUN from the environment,
 * leaves the system alone and exits 0 or 1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <unistd.h>

#include "workload.h"

static bool run_all(struct config *c, bool as_init)
{
	const char *subject;

	if (as_init && system_init() < 0) {
		print_failed("init", last_error());
		return false;
	}
	if (config_load(c, as_init, &subject) < 0) {
		print_failed(subject, last_error());
		return false;
	}
	if (as_init && c->insmod && load_modules(c->insmod) < 0) {
		print_failed("insmod", last_error());
		return false;
	}
	if (as_init && c->gcov && gcov_reset() < 0) {
		print_failed("gcov", last_error());
		return false;
	}
	for (uint64_t rep = 0; rep < c->repeat; rep++) {
		for (size_t i = 0; i < c->n_runs; i++) {
			const struct run *r = &c->runs[i];
			double seconds = 0;

			if (r->w->run(r->size, &seconds) < 0) {
				print_failed(r->w->name, last_error());
				return false;
			}
			print_result(r->w->name, r->size, seconds);
		}
	}
	if (as_init && c->gcov && gcov_dump() < 0) {
		print_failed("gcov", last_error());
		return false;
	}
	printf("kfdo-workload: done\n");
	fflush(stdout);
	return true;
}

/* PID 1 must never return: the kernel panics when init exits. */
static void __attribute__((noreturn)) finish_as_init(const struct config *c)
{
	sync();
	if (c->exit == EXIT_SHELL && access("/bin/sh", X_OK) == 0) {
		execl("/bin/sh", "sh", (char *)NULL);
		perror("kfdo-workload: exec /bin/sh");
	}
	if (c->exit == EXIT_POWEROFF)
		reboot(RB_POWER_OFF); /* without a power-off driver the kernel halts here */
	reboot(RB_AUTOBOOT);
	/* Still here: halt, and failing that wait forever. */
	reboot(RB_HALT_SYSTEM);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct config c = { .repeat = 1 }; /* valid even if init fails before reading it */
	bool as_init, ok;

	(void)argc;
	/* fork_exec's child: exit before anything else, so the exec is what it costs. */
	if (argv[0] && strcmp(base_name(argv[0]), KFDO_TRUE_NAME) == 0)
		return 0;

	as_init = getpid() == 1;
	/* A peer gone mid-write must be an EPIPE to report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	ok = run_all(&c, as_init);
	if (as_init)
		finish_as_init(&c);
	return ok ? 0 : 1;
}

/*
 * What the files of kfdo's initramfs workload share: the workload table, error
 * reporting, timing, child processes and the request/response loop.
 *
 * Every function that can fail returns -1 after recording a message with
 * fail_errno() or fail_msg(); main() prints it as
 * `kfdo-workload: FAILED NAME: message` and stops.
 */
#ifndef KFDO_WORKLOAD_H
#define KFDO_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* argv[0] under which the binary exits at once: fork_exec's child. */
#define KFDO_TRUE_NAME "kfdo-true"

/*
 * How long set-up waits for a peer process (first answer, readiness) before
 * calling it hung. Generous: the guest runs under TCG, on a loaded host.
 */
#define PEER_TIMEOUT_MS 30000

/*
 * Longest one socket read or write of a measured loop may block
 * (SO_RCVTIMEO / SO_SNDTIMEO): a silent peer becomes a FAILED line, not a hang.
 */
#define SOCKET_TIMEOUT_S 120

/* The last component of a path (no copy, unlike basename(3)). */
static inline const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* report.c */
int fail_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fail_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *last_error(void);
struct timespec clock_now(void);
double seconds_since(struct timespec t0);
void print_result(const char *name, uint64_t ops, double seconds);
void print_failed(const char *name, const char *what);

/* latency.c: round-trip latencies, timed with the CPU's counter (no system call) */
struct latency {
	uint64_t *ticks;
	uint64_t n, cap;
};

struct latency_summary {
	double p1_us, p50_us, p99_us, mean_us;
};

static inline uint64_t cpu_ticks(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t t;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t));
	return t;
#else
#error "cpu_ticks: x86_64 and aarch64 only"
#endif
}

static inline void latency_add(struct latency *l, uint64_t ticks)
{
	if (l->n < l->cap)
		l->ticks[l->n++] = ticks;
}

int latency_begin(struct latency *l, uint64_t n);
void latency_end(struct latency *l, uint64_t window_ticks, double window_seconds);
bool latency_take(struct latency_summary *out);

/* child.c */
pid_t child_start(int (*fn)(void *), void *arg);
void child_kill(pid_t pid);
int child_wait(pid_t pid);

/* io.c */
int set_socket_timeouts(int fd);
int wait_readable(int fd, const char *peer);
int wait_ready(int fd, const char *peer);
ssize_t read_full(int fd, void *buf, size_t len);
int echo_loop(int rfd, int wfd);
int pingpong_check(int rfd, int wfd);
int pingpong_timed(int rfd, int wfd, uint64_t n, double *seconds);

/*
 * A workload runs its set-up, then exactly n operations between the window
 * markers, and stores the seconds those took.
 */
typedef int workload_fn(uint64_t n, double *seconds);

struct workload {
	const char *name;
	workload_fn *run;
};

/* workloads.c */
const struct workload *workload_find(const char *name, size_t len);
const char *workload_names(void);

workload_fn wl_tcp_rr, wl_tcp_stream;   /* wl_tcp.c */
workload_fn wl_pipe, wl_unix;           /* wl_ipc.c */
workload_fn wl_ctxsw;                   /* wl_ctxsw.c */
workload_fn wl_fork_exit, wl_fork_exec; /* wl_fork.c */
workload_fn wl_file;                    /* wl_file.c */
workload_fn wl_syscall;                 /* wl_syscall.c */
workload_fn wl_tun;                     /* wl_tun.c */

/* config.c */
#define MAX_RUNS 64

struct run {
	const struct workload *w;
	uint64_t size;
};

/*
 * What PID 1 does at the end. Rebooting is the default: it ends QEMU (run with
 * -no-reboot) on any kernel, while powering off needs ACPI, which the recipe's
 * small kernel leaves out (without it the kernel only halts, and QEMU waits).
 */
enum exit_mode { EXIT_REBOOT, EXIT_POWEROFF, EXIT_SHELL };

struct config {
	struct run runs[MAX_RUNS];
	size_t n_runs;
	uint64_t repeat;
	enum exit_mode exit;
	const char *insmod; /* comma-separated module paths, or NULL */
	bool gcov;          /* kfdo.gcov=1: zero the kernel's gcov counts, dump them after */
};

int config_load(struct config *c, bool as_init, const char **subject);

/* sysinit.c */
int system_init(void);

/* modules.c */
int load_modules(const char *list);

/* gcov.c */
int gcov_reset(void);
int gcov_dump(void);

#endif

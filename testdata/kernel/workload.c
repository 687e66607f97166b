// /init of kfdo's kernel test initramfs: a kernel-heavy workload (syscalls, pipes, fork/exec,
// file I/O) run in a loop, then power off so that QEMU exits. Built static by
// scripts/kernel-build.sh. Arguments: `workload [ROUNDS]`; as /init it reads
// kfdo.rounds=N from /proc/cmdline (default 200). Run as a child (`workload child`) it
// does a little work and exits, for the exec path.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void say(const char *s) { (void)!write(1, s, strlen(s)); }

static int rounds_from_cmdline(void) {
    char buf[1024];
    int fd = open("/proc/cmdline", O_RDONLY);
    if (fd < 0) return 200;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 200;
    buf[n] = 0;
    char *p = strstr(buf, "kfdo.rounds=");
    return p ? atoi(p + 12) : 200;
}

static unsigned long file_io(int round) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/tmp/f%d", round % 8);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) return 0;
    memset(buf, 'a' + round % 26, sizeof buf);
    for (int i = 0; i < 16; i++) (void)!write(fd, buf, sizeof buf);
    lseek(fd, 0, SEEK_SET);
    unsigned long sum = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) sum += (unsigned char)buf[n - 1];
    struct stat st;
    fstat(fd, &st);
    close(fd);
    unlink(path);
    return sum + (unsigned long)st.st_size;
}

static unsigned long pipes(void) {
    int p[2];
    if (pipe(p)) return 0;
    char buf[512];
    unsigned long sum = 0;
    memset(buf, 7, sizeof buf);
    for (int i = 0; i < 32; i++) {
        (void)!write(p[1], buf, sizeof buf);
        sum += (unsigned long)read(p[0], buf, sizeof buf);
    }
    close(p[0]);
    close(p[1]);
    return sum;
}

static void fork_exec(const char *self) {
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {(char *)self, "child", NULL};
        char *envp[] = {NULL};
        execve(self, argv, envp);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        for (int i = 0; i < 64; i++) (void)getppid();
        return 0;
    }
    int as_init = getpid() == 1;
    if (as_init) {
        mount("proc", "/proc", "proc", 0, NULL);
        mount("sysfs", "/sys", "sysfs", 0, NULL);
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
    }
    int rounds = argc > 1 ? atoi(argv[1]) : as_init ? rounds_from_cmdline() : 200;
    const char *self = as_init ? "/init" : "/proc/self/exe";
    say("kfdo-workload: start\n");
    unsigned long acc = 0;
    for (int r = 0; r < rounds; r++) {
        acc += file_io(r);
        acc += pipes();
        for (int i = 0; i < 32; i++) acc += (unsigned long)getpid();
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += (unsigned long)ts.tv_nsec & 1;
        if (r % 4 == 0) fork_exec(self);
    }
    char msg[96];
    snprintf(msg, sizeof msg, "kfdo-workload: done %d rounds (%lu)\n", rounds, acc);
    say(msg);
    if (as_init) {
        sync();
        reboot(RB_POWER_OFF);
        // No ACPI power-off: a reboot ends QEMU too when it runs with -no-reboot.
        reboot(RB_AUTOBOOT);
        for (;;) pause();
    }
    return 0;
}

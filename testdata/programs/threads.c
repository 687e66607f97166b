/* threads: N worker threads (argv[1], 0..64; 0 runs the work on the main thread alone)
 * that each do argv[2] rounds of arithmetic and add to a shared total under a mutex.
 * With threads, who waits on the lock, and so which code runs how often, changes from
 * run to run: the program whose counts are not deterministic. Prints the total, which
 * does not depend on the order. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;
static long rounds;

static void *work(void *arg) {
    unsigned long x = (unsigned long)arg + 1;
    for (long i = 0; i < rounds; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        pthread_mutex_lock(&lock);
        total += x >> 60;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    rounds = argc > 2 ? atol(argv[2]) : 100000;
    if (n < 0 || n > MAX_THREADS || rounds < 0) {
        fprintf(stderr, "usage: threads [0..%d] [rounds]\n", MAX_THREADS);
        return 2;
    }
    if (n == 0) {
        work(NULL);
    } else {
        pthread_t t[MAX_THREADS];
        for (int i = 0; i < n; i++) {
            if (pthread_create(&t[i], NULL, work, (void *)(unsigned long)i) != 0) {
                perror("pthread_create");
                return 1;
            }
        }
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
    }
    printf("%lu\n", total);
    return 0;
}

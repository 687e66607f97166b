/* Every A64 branch form clang emits from plain C: calls (bl), calls through a
 * pointer (blr), a jump table (br), bit tests (tbz/tbnz), null tests
 * (cbz/cbnz), compares (b.cond), loops and tail calls (b), returns (ret). */
#include <stdio.h>
#include <stdlib.h>

typedef long (*op_fn)(long, long);

__attribute__((noinline)) static long add(long a, long b) { return a + b; }
__attribute__((noinline)) static long sub(long a, long b) { return a - b; }
__attribute__((noinline)) static long mul(long a, long b) { return a * b; }

static op_fn ops[] = {add, sub, mul};

/* A switch dense enough for a jump table. */
__attribute__((noinline)) static long step(int k, long x) {
    switch (k) {
    case 0: return x + 3;
    case 1: return x ^ 0x55;
    case 2: return x * 7;
    case 3: return x >> 1;
    case 4: return x - 11;
    case 5: return x | 0x100;
    case 6: return ~x;
    default: return x;
    }
}

/* Bit 5 of flags picks a path: tbz/tbnz. */
__attribute__((noinline)) static long bits(unsigned long flags, long x) {
    if (flags & (1ul << 5))
        x = add(x, 17);
    if (!(flags & (1ul << 40)))
        x = sub(x, 9);
    return x;
}

/* A null test: cbz/cbnz. */
__attribute__((noinline)) static long deref(const long *p) { return p ? *p : -1; }

/* Ends in a tail call: b. */
__attribute__((noinline)) long tail(long x) { return step((int)(x & 7), x); }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    long acc = 1;
    for (long i = 0; i < n; i++) {
        acc = ops[i % 3](acc, i) & 0xffffff;
        acc = tail(acc);
        acc = bits((unsigned long)i * 0x9e3779b97f4a7c15ul, acc);
        acc += deref((i & 1) ? &acc : NULL);
    }
    printf("%ld\n", acc);
    return 0;
}

/* A tiny stack-machine interpreter plus an LZ-style compressor, written for
 * kfdo-elf's tests: lots of small static inline helpers so that -O2 inlines
 * several levels deep, loops with discriminators, a switch dispatch, and
 * static functions that get .__uniq. names with -funique-internal-linkage-names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { PUSH, ADD, SUB, MUL, DUP, SWAP, JNZ, DEC, PRINT, HALT, HASH };

struct vm {
    int64_t stack[256];
    int sp;
    uint64_t hash;
    long steps;
};

static inline void push(struct vm *m, int64_t v) { m->stack[m->sp++ & 255] = v; }
static inline int64_t pop(struct vm *m) { return m->stack[--m->sp & 255]; }
static inline int64_t peek(struct vm *m) { return m->stack[(m->sp - 1) & 255]; }

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static inline void binop(struct vm *m, int op) {
    int64_t b = pop(m), a = pop(m);
    switch (op) {
    case ADD: push(m, a + b); break;
    case SUB: push(m, a - b); break;
    default: push(m, a * b); break;
    }
}

static int run(struct vm *m, const int *code, int n) {
    int pc = 0;
    while (pc < n) {
        m->steps++;
        int op = code[pc++];
        switch (op) {
        case PUSH: push(m, code[pc++]); break;
        case ADD: case SUB: case MUL: binop(m, op); break;
        case DUP: push(m, peek(m)); break;
        case SWAP: { int64_t b = pop(m), a = pop(m); push(m, b); push(m, a); break; }
        case JNZ: { int t = code[pc++]; if (peek(m)) pc = t; break; }
        case DEC: push(m, pop(m) - 1); break;
        case PRINT: printf("%lld\n", (long long)peek(m)); break;
        case HASH: m->hash = mix(m->hash, (uint64_t)peek(m)); break;
        case HALT: return 0;
        default: return -1;
        }
    }
    return 0;
}

/* --- compressor --- */
static inline uint32_t hash4(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2654435761u) >> 20;
}

static inline size_t match_len(const uint8_t *a, const uint8_t *b, const uint8_t *end) {
    size_t n = 0;
    while (b + n < end && a[n] == b[n] && n < 255) n++;
    return n;
}

static inline uint8_t *emit_literal(uint8_t *out, uint8_t c) {
    *out++ = 0;
    *out++ = c;
    return out;
}

static inline uint8_t *emit_match(uint8_t *out, size_t dist, size_t len) {
    *out++ = (uint8_t)len;
    *out++ = (uint8_t)(dist & 0xff);
    *out++ = (uint8_t)(dist >> 8);
    return out;
}

static size_t compress(const uint8_t *in, size_t n, uint8_t *out) {
    static uint32_t table[4096];
    memset(table, 0, sizeof table);
    uint8_t *o = out;
    size_t i = 0;
    while (i + 4 <= n) {
        uint32_t h = hash4(in + i);
        size_t cand = table[h];
        table[h] = (uint32_t)i;
        size_t len = cand < i && i - cand < 65536 ? match_len(in + cand, in + i, in + n) : 0;
        if (len >= 4) {
            o = emit_match(o, i - cand, len);
            i += len;
        } else {
            o = emit_literal(o, in[i++]);
        }
    }
    while (i < n) o = emit_literal(o, in[i++]);
    return (size_t)(o - out);
}

static size_t decompress(const uint8_t *in, size_t n, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint8_t len = in[i];
        if (len == 0) {
            out[o++] = in[i + 1];
            i += 2;
        } else {
            size_t dist = in[i + 1] | (size_t)in[i + 2] << 8;
            for (size_t k = 0; k < len; k++, o++) out[o] = out[o - dist];
            i += 3;
        }
    }
    return o;
}

static long counter;

/* lock-prefixed instructions: LLVM decodes the lock prefix as its own instruction. */
static void __attribute__((noinline)) count(long n) {
    __atomic_fetch_add(&counter, n, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&counter, 1, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    int prog[] = {PUSH, iters, DUP, HASH, DEC, JNZ, 2, PRINT, HALT};
    struct vm m = {0};
    if (run(&m, prog, (int)(sizeof prog / sizeof prog[0])) != 0) return 1;
    count(m.steps);
    size_t n = 1 << 16;
    uint8_t *buf = malloc(n), *c = malloc(n * 2), *d = malloc(n);
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)((m.hash >> (i % 57)) ^ (i / 7));
    size_t cn = compress(buf, n, c);
    size_t dn = decompress(c, cn, d);
    printf("%llx %zu %zu %d\n", (unsigned long long)m.hash, cn, dn, memcmp(buf, d, n));
    free(buf); free(c); free(d);
    return 0;
}

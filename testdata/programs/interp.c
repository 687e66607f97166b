// A small stack-machine interpreter running recursive fib and a loop, with
// builtins called through function pointers.
#include <stdio.h>
#include <stdlib.h>

enum op { PUSH, ADD, SUB, LT, JZ, JMP, CALL, RET, SWAP, DUP, BUILTIN, HALT };

typedef long (*builtin_fn)(long);
static long b_square(long x) { return x * x; }
static long b_half(long x) { return x / 2; }
static long b_inc(long x) { return x + 1; }
static builtin_fn builtins[] = {b_square, b_half, b_inc};

struct vm {
  long stack[4096];
  int sp;
  long steps;
};

static inline void push(struct vm *m, long v) { m->stack[m->sp++] = v; }
static inline long pop(struct vm *m) { return m->stack[--m->sp]; }

long run(struct vm *m, const long *code, int pc) {
  for (;;) {
    m->steps++;
    switch (code[pc]) {
    case PUSH: push(m, code[pc + 1]); pc += 2; break;
    case ADD: { long b = pop(m), a = pop(m); push(m, a + b); pc++; break; }
    case SUB: { long b = pop(m), a = pop(m); push(m, a - b); pc++; break; }
    case LT: { long b = pop(m), a = pop(m); push(m, a < b); pc++; break; }
    case JZ: pc = pop(m) ? pc + 2 : (int)code[pc + 1]; break;
    case JMP: pc = (int)code[pc + 1]; break;
    case CALL: { long r = run(m, code, (int)code[pc + 1]); push(m, r); pc += 2; break; }
    case RET: return pop(m);
    case SWAP: { long b = pop(m), a = pop(m); push(m, b); push(m, a); pc++; break; }
    case DUP: push(m, m->stack[m->sp - 1]); pc++; break;
    case BUILTIN: push(m, builtins[code[pc + 1]](pop(m))); pc += 2; break;
    case HALT: return pop(m);
    default: abort();
    }
  }
}

// fib(n), the argument on top of the stack; CALL recurses in C, RET returns the top.
static const long fib_code[] = {
    /*0*/ DUP, PUSH, 2, LT, JZ, 7, RET,
    /*7*/ DUP, PUSH, 1, SUB, CALL, 0,
    /*13*/ SWAP, PUSH, 2, SUB, CALL, 0, ADD, RET,
};

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 22;
  struct vm *m = calloc(1, sizeof *m);
  long total = 0;
  for (int k = 0; k < 3; k++) {
    m->sp = 0;
    push(m, n + k % 2);
    total += run(m, fib_code, 0);
    for (int i = 0; i < 3; i++) total += builtins[i](total & 0xffff);
  }
  printf("%ld in %ld steps\n", total, m->steps);
  free(m);
  return 0;
}

// An LZ77-style compressor and decompressor, round-tripping generated text.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4096
#define MIN_MATCH 4
#define HASH_BITS 12

static inline uint32_t load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline uint32_t hash4(const uint8_t *p) {
  return (load32(p) * 2654435761u) >> (32 - HASH_BITS);
}

static inline size_t match_len(const uint8_t *a, const uint8_t *b, size_t max) {
  size_t n = 0;
  while (n < max && a[n] == b[n]) n++;
  return n;
}

static inline uint8_t *put_varint(uint8_t *out, size_t v) {
  while (v >= 0x80) {
    *out++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *out++ = (uint8_t)v;
  return out;
}

static inline const uint8_t *get_varint(const uint8_t *in, size_t *v) {
  size_t r = 0;
  int shift = 0;
  while (*in & 0x80) {
    r |= (size_t)(*in++ & 0x7f) << shift;
    shift += 7;
  }
  r |= (size_t)(*in++) << shift;
  *v = r;
  return in;
}

static inline uint8_t *emit_literals(uint8_t *out, const uint8_t *lit, size_t n) {
  *out++ = 0;
  out = put_varint(out, n);
  memcpy(out, lit, n);
  return out + n;
}

static inline uint8_t *emit_match(uint8_t *out, size_t dist, size_t len) {
  *out++ = 1;
  out = put_varint(out, dist);
  return put_varint(out, len);
}

size_t compress(const uint8_t *in, size_t n, uint8_t *out) {
  int32_t table[1 << HASH_BITS];
  for (int i = 0; i < (1 << HASH_BITS); i++) table[i] = -1;
  uint8_t *o = out;
  size_t lit_start = 0, i = 0;
  while (i + MIN_MATCH <= n) {
    uint32_t h = hash4(in + i);
    int32_t cand = table[h];
    table[h] = (int32_t)i;
    if (cand >= 0 && i - (size_t)cand <= WINDOW && load32(in + cand) == load32(in + i)) {
      size_t len = match_len(in + cand, in + i, n - i);
      if (i > lit_start) o = emit_literals(o, in + lit_start, i - lit_start);
      o = emit_match(o, i - (size_t)cand, len);
      i += len;
      lit_start = i;
    } else {
      i++;
    }
  }
  if (n > lit_start) o = emit_literals(o, in + lit_start, n - lit_start);
  return (size_t)(o - out);
}

size_t decompress(const uint8_t *in, size_t n, uint8_t *out) {
  const uint8_t *end = in + n;
  uint8_t *o = out;
  while (in < end) {
    uint8_t tag = *in++;
    size_t a, b;
    in = get_varint(in, &a);
    if (tag == 0) {
      memcpy(o, in, a);
      in += a;
      o += a;
    } else {
      in = get_varint(in, &b);
      for (size_t k = 0; k < b; k++) o[k] = o[k - a];
      o += b;
    }
  }
  return (size_t)(o - out);
}

static const char *words[] = {"profile", "branch", "sample", "kernel", "inline", "record",
                              "convert", "build", "verdict", "range", "count", "the"};

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 200000;
  uint8_t *text = malloc(n + 16), *packed = malloc(2 * n + 64), *back = malloc(n + 16);
  uint32_t seed = 12345;
  size_t len = 0;
  while (len < n) {
    seed = seed * 1103515245u + 12345u;
    const char *w = words[(seed >> 16) % 12];
    size_t wl = strlen(w);
    if (len + wl + 1 > n) break;
    memcpy(text + len, w, wl);
    len += wl;
    text[len++] = (seed & 0x100) ? ' ' : '\n';
  }
  size_t total = 0;
  for (int round = 0; round < 4; round++) {
    size_t c = compress(text, len, packed);
    size_t d = decompress(packed, c, back);
    if (d != len || memcmp(text, back, len) != 0) {
      fprintf(stderr, "round trip failed\n");
      return 1;
    }
    total += c;
  }
  printf("%zu bytes -> %zu\n", len, total / 4);
  free(text);
  free(packed);
  free(back);
  return 0;
}

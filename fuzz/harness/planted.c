/*
 * A small offload-container loader written here with planted bugs, the
 * always-present target of tools/fuzz-eval (issue 41). It reads what a
 * runtime's loader reads: a clang offload bundle (entries, IDs, payloads),
 * an offload binary (0x10FF10AD: entries, string tables, images) at the
 * top or inside a bundle entry, and the program headers of each ELF64
 * image. Four checks are wrong on purpose, each as real loaders have got
 * them wrong (spec rules in brackets):
 *
 *   C1  bundle entry ID bounds checked in 32 bits           [BIN-6]
 *   C2  ELF p_offset + p_filesz checked after it wrapped     [CO-4]
 *   C3  offload binary string count × 16 checked after it wrapped [OB-7]
 *   C4  an offload binary's image range unchecked for IMG_Object [OB-9]
 *
 * Magma-style canaries: CANARY(id, reached, triggered) logs the first
 * execution that reaches a bug's code and the first that would trigger it
 * ("fuzz-eval: canary C2 triggered exec 1234"), then goes on without the
 * bad access, so one trial measures every canary. Coverage is libFuzzer's
 * own edge count of this file.
 *
 * Mutator arms: fuzz/harness/arms.h (only the mutator changes between arms).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static unsigned long long execs;
static int reached[5], triggered[5];

static void canary(int id, int hit) {
  if (!reached[id]) {
    reached[id] = 1;
    fprintf(stderr, "fuzz-eval: canary C%d reached exec %llu\n", id, execs);
  }
  if (hit && !triggered[id]) {
    triggered[id] = 1;
    fprintf(stderr, "fuzz-eval: canary C%d triggered exec %llu\n", id, execs);
  }
}

static uint64_t u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* The program headers of an ELF64 image. */
static int read_elf(const uint8_t *d, uint64_t n) {
  if (n < 64 || memcmp(d, "\x7f" "ELF", 4) != 0 || d[4] != 2) return 0;
  uint64_t phoff = u64(d + 32);
  uint16_t phentsize = u16(d + 54), phnum = u16(d + 56);
  if (phentsize != 56 || phoff > n || (uint64_t)phnum * 56 > n - phoff) return 0;
  int loads = 0;
  for (uint16_t i = 0; i < phnum; i++) {
    const uint8_t *ph = d + phoff + (uint64_t)i * 56;
    if (u32(ph) != 1) continue; /* PT_LOAD */
    uint64_t off = u64(ph + 8), filesz = u64(ph + 32);
    /* C2: the sum is checked after it wrapped. */
    int wrapped = off + filesz < off;
    canary(2, wrapped && off + filesz <= n);
    if (wrapped || off + filesz > n) continue;
    uint8_t sum = 0;
    for (uint64_t j = 0; j < filesz && j < 64; j++) sum ^= d[off + j];
    loads += 1 + (sum & 1);
  }
  return loads;
}

/* An offload binary (version 1) at d[0..n]. */
static int read_offload_binary(const uint8_t *d, uint64_t n) {
  if (n < 32 || u32(d) != 0xAD10FF10u) return 0;
  uint32_t version = u32(d + 4);
  uint64_t size = u64(d + 8), entry_off = u64(d + 16), entry_size = u64(d + 24);
  if (version != 1 || size > n || size < 32 || entry_size < 48) return 0;
  if (entry_off > size || entry_size > size - entry_off) return 0;
  const uint8_t *e = d + entry_off;
  uint16_t image_kind = u16(e);
  uint64_t str_off = u64(e + 8), nstr = u64(e + 16);
  uint64_t img_off = u64(e + 24), img_size = u64(e + 32);
  /* C3: the count × 16 wraps before the check. */
  uint64_t table = nstr * 16;
  int mul_wrapped = nstr != 0 && table / nstr != 16;
  canary(3, mul_wrapped && str_off <= size && table <= size - str_off);
  if (mul_wrapped || str_off > size || table > size - str_off) return 0;
  int strings = 0;
  for (uint64_t i = 0; i < nstr && i < 16; i++) {
    uint64_t k = u64(d + str_off + 16 * i), v = u64(d + str_off + 16 * i + 8);
    if (k < size && v < size && memchr(d + k, 0, size - k) && memchr(d + v, 0, size - v))
      strings++;
  }
  /* C4: IMG_Object (1) images are taken without a range check. */
  int outside = img_off > size || img_size > size - img_off;
  if (image_kind == 1) canary(4, outside);
  if (outside) return strings;
  return strings + read_elf(d + img_off, img_size);
}

/* A clang offload bundle at d[0..n]. */
static int read_bundle(const uint8_t *d, uint64_t n) {
  static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (n < 32 || memcmp(d, magic, 24) != 0) return 0;
  uint64_t count = u64(d + 24), at = 32;
  int found = 0;
  for (uint64_t i = 0; i < count && i < 64; i++) {
    if (at > n || n - at < 24) return found;
    uint64_t off = u64(d + at), size = u64(d + at + 8), idlen = u64(d + at + 16);
    at += 24;
    /* C1: the ID's end is computed in 32 bits. */
    uint64_t end64 = at + idlen;
    uint32_t end32 = (uint32_t)(at + idlen);
    canary(1, (end64 > n || end64 < at) && end32 <= n);
    if (end64 > n || end64 < at) return found;
    if (idlen >= 4 && memcmp(d + at, "hip", 3) == 0) found++;
    at = end64;
    if (off > n || size > n - off) continue;
    found += read_offload_binary(d + off, size) + read_elf(d + off, size);
  }
  return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  execs++;
  canary(0, 0);
  volatile int sink = read_bundle(data, size) + read_offload_binary(data, size) + read_elf(data, size);
  (void)sink;
  return 0;
}

#include "arms.h"

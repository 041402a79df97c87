// libFuzzer harness for offload-kit's own C ABI (include/offload_kit.h),
// linked against a coverage-instrumented liboffloadkit.a (tools/fuzz-capi).
//
// Each input is used five ways, and every answer is checked against what
// the header promises; a broken promise aborts (a crash for libFuzzer):
//   1. offloadkit_validate on the input: 0 or 1, never an internal error;
//      on 1 a NUL-terminated rule ID and an offset inside the input (or
//      UINT64_MAX, no offset; an input holding a compressed bundle may get
//      an offset within the decompressed bytes, as the header says).
//   2. offloadkit_mutate on a copy: at most max_size bytes, and the mutant
//      validates as in 1.
//   3. The first bytes pick a kind, a rule and a seed: offloadkit_generate
//      must give a file that validates (0), offloadkit_generate_malformed
//      one that breaks exactly that rule at the offset it reports.
//   4. offloadkit_inspect, offloadkit_list and offloadkit_check (a GPU the input picks) on
//      the input: 0 or 1, a JSON object of the length they report, the
//      same length when asked for the size alone.
//   5. offloadkit_unbundle of the input (a release and type the input
//      picks): 0, 1 or OFFLOADKIT_NOT_WRITTEN, sized as it writes; and
//      offloadkit_bundle of the input as a device payload, which
//      offloadkit_unbundle must give back byte for byte; offloadkit_decompress
//      of the input: 0 or 1, sized as it writes.
#define _GNU_SOURCE  // memmem
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offload_kit.h"

#define MAX_SIZE (1 << 16)

static const char *const KINDS[] = {"binary", "text",           "object", "fatbin",
                                    "ccob",   "offload-binary", "archive"};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

// Rules that some kind can break one at a time (offload-kit generate
// --malformed); a kind that cannot break the rule gives 0 bytes.
static const char *const RULES[] = {
    "BIN-1", "BIN-2", "BIN-3", "BIN-5",  "BIN-7",  "BIN-8",  "BIN-9", "BIN-10", "ID-1",
    "ID-2",  "TID-1", "TID-3", "TXT-3",  "TXT-6",  "TXT-11", "OBJ-4", "OBJ-6",  "FAT-2",
    "FAT-3", "CCOB-2", "CCOB-4", "CCOB-6", "OB-2", "OB-4",   "OB-12", "OB-25",  "OB-21"};
#define NRULES (sizeof RULES / sizeof RULES[0])

static void broken(const char *what, const uint8_t *data, size_t size) {
  fprintf(stderr, "capi-harness: %s (input of %zu bytes)\n", what, size);
  (void)data;
  abort();
}

// Validate data[0..size] and check the answer's shape; returns the result.
static int check_validate(const uint8_t *data, size_t size) {
  char rule[32];
  memset(rule, 0x7f, sizeof rule);
  uint64_t offset = 0;
  int r = offloadkit_validate(data, size, rule, sizeof rule, &offset);
  if (r != 0 && r != 1) broken("offloadkit_validate returned neither 0 nor 1", data, size);
  if (r == 1) {
    if (memchr(rule, 0, sizeof rule) == NULL || rule[0] == 0)
      broken("a violation without a NUL-terminated rule ID", data, size);
    if (offset != UINT64_MAX && offset > size && !memmem(data, size, "CCOB", 4)) {
      fprintf(stderr, "capi-harness: rule %s at offset %llu\n", rule,
              (unsigned long long)offset);
      broken("a violation's offset lies past the input", data, size);
    }
  }
  return r;
}

// A JSON call's promises: status 0 or 1, the length it reports both when
// sizing (cap 0) and when writing, the document NUL-terminated and an
// object. `gpu` NULL: offloadkit_inspect, else offloadkit_check.
static void check_json(const uint8_t *data, size_t size, const char *gpu) {
  static char doc[1 << 20];
  size_t need = 0, len = 0;
  int r0 = gpu ? offloadkit_check(data, size, gpu, NULL, 0, &need) : offloadkit_inspect(data, size, NULL, 0, &need);
  int r1 = gpu ? offloadkit_check(data, size, gpu, doc, sizeof doc, &len)
               : offloadkit_inspect(data, size, doc, sizeof doc, &len);
  if ((r0 != 0 && r0 != 1) || r1 != r0) broken("a JSON call returned neither 0 nor 1, or two answers", data, size);
  if (len != need) broken("a JSON call sized its document otherwise than it wrote it", data, size);
  if (len < sizeof doc && (strlen(doc) != len || doc[0] != '{' || doc[len - 1] != '}'))
    broken("a JSON call wrote no object of the length it reported", data, size);
  if (!gpu) {
    // offloadkit_list, the same promises.
    size_t lneed = 0, llen = 0;
    int l0 = offloadkit_list(data, size, NULL, 0, &lneed), l1 = offloadkit_list(data, size, doc, sizeof doc, &llen);
    if ((l0 != 0 && l0 != 1) || l1 != l0 || llen != lneed) broken("offloadkit_list broke a promise", data, size);
    if (llen < sizeof doc && (strlen(doc) != llen || doc[0] != '{')) broken("offloadkit_list wrote no object", data, size);
  }
}

// Step 5: the bundler in memory, on the input and around it.
static void check_bundler(const uint8_t *data, size_t size) {
  static const uint32_t RELEASES[] = {13, 14, 15, 16, 19, 22, 23, 24};
  static const char *const TYPES[] = {"o", "bc", "hipi", "s"};
  static uint8_t out[MAX_SIZE * 2 + 8192];
  const char *targets[] = {"host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906",
                           "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"};
  uint8_t pick = size ? data[size - 1] : 0;
  offloadkit_bundler_options o = {RELEASES[pick % 8], TYPES[(pick / 8) % 4], 1, 0, 0, (pick / 32) % 2};
  for (size_t i = 0; i < 3; i++) {
    size_t need = 0, len = 0;
    int r0 = offloadkit_unbundle(data, size, targets, 3, i, &o, NULL, 0, &need);
    int r1 = offloadkit_unbundle(data, size, targets, 3, i, &o, out, sizeof out, &len);
    if ((r0 != 0 && r0 != 1 && r0 != OFFLOADKIT_NOT_WRITTEN) || r1 != r0 || len != need)
      broken("offloadkit_unbundle broke a promise", data, size);
    if (r0 == 1 && len < sizeof out && (strlen((char *)out) != len || out[0] != '{'))
      broken("offloadkit_unbundle's errors are no document", data, size);
  }
  // offloadkit_decompress: 0 or 1, sized as it writes.
  {
    size_t need = 0, len = 0;
    int d0 = offloadkit_decompress(data, size, NULL, 0, &need);
    int d1 = offloadkit_decompress(data, size, out, sizeof out, &len);
    if ((d0 != 0 && d0 != 1) || d1 != d0 || len != need) broken("offloadkit_decompress broke a promise", data, size);
  }
  // A plain bundle of the input as the device's payload gives it back.
  if (size > MAX_SIZE) return;
  const uint8_t *payloads[] = {(const uint8_t *)"", data};
  size_t sizes[] = {0, size};
  // 19 and 22 read the first bundle only; main walks on into a payload
  // that holds a bundle's magic (modelled), so it is left out here.
  o.llvm_version = pick % 2 ? 22 : 19;
  o.file_type = "bc";
  o.align = pick % 4 ? 4096 : 1;
  size_t len = 0, got = 0;
  if (offloadkit_bundle(targets, payloads, sizes, 2, &o, out, sizeof out, &len) != 0)
    broken("offloadkit_bundle refused a host and a device", data, size);
  static uint8_t back[MAX_SIZE * 2];
  if (len > sizeof back) broken("a bundle of one payload larger than thought", data, size);
  memcpy(back, out, len);
  int r = offloadkit_unbundle(back, len, targets, 2, 1, &o, out, sizeof out, &got);
  if (r != 0 || got != size || (size && memcmp(out, data, size) != 0))
    broken("offloadkit_unbundle did not give back what offloadkit_bundle bundled", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_validate(data, size);
  static const char *const GPUS[] = {"gfx906", "gfx90a:xnack+", "gfx1100", "gfx942:sramecc+:xnack-"};
  check_json(data, size, NULL);
  check_json(data, size, GPUS[size % 4]);
  check_bundler(data, size);

  static uint8_t buf[MAX_SIZE];
  size_t n = size < MAX_SIZE ? size : MAX_SIZE;
  memcpy(buf, data, n);
  unsigned int seed = size ? data[size / 2] * 2654435761u : 1;
  size_t m = offloadkit_mutate(buf, n, MAX_SIZE, seed);
  if (m > MAX_SIZE) broken("offloadkit_mutate returned more than max_size", data, size);
  check_validate(buf, m);

  if (size >= 10) {
    const char *kind = KINDS[data[0] % NKINDS];
    const char *rule = RULES[data[1] % NRULES];
    uint64_t s;
    memcpy(&s, data + 2, sizeof s);
    size_t g = offloadkit_generate(kind, s, buf, MAX_SIZE);
    if (g > MAX_SIZE) broken("offloadkit_generate returned more than cap", data, size);
    if (g > 0 && check_validate(buf, g) != 0) {
      fprintf(stderr, "capi-harness: generated %s from seed %llu\n", kind, (unsigned long long)s);
      broken("a generated valid file does not validate", data, size);
    }
    uint64_t at = 0;
    g = offloadkit_generate_malformed(kind, rule, s, buf, MAX_SIZE, &at);
    if (g > MAX_SIZE) broken("offloadkit_generate_malformed returned more than cap", data, size);
    if (g > 0) {
      char got[32];
      uint64_t got_at = 0;
      int r = offloadkit_validate(buf, g, got, sizeof got, &got_at);
      if (r != 1 || strcmp(got, rule) != 0 || got_at != at) {
        fprintf(stderr,
                "capi-harness: %s breaking %s at %llu (seed %llu) validates as %d %s at %llu\n",
                kind, rule, (unsigned long long)at, (unsigned long long)s, r, r == 1 ? got : "-",
                (unsigned long long)got_at);
        broken("a malformed file does not break its rule where it says", data, size);
      }
    }
  }
  return 0;
}

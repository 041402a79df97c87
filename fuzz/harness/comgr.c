/* libFuzzer harness: ROCm comgr's fat binary lookup, called the way the HIP
 * runtime (CLR, hipamd/src/hip_code_object.cpp) calls it, with the runtime's
 * use of the answer checked by ASan.
 *
 * Build (tools/fuzz-comgr does this):
 *   /usr/lib/llvm-22/bin/clang -fsanitize=fuzzer,address -g -O1 \
 *     -o target/fuzz-comgr/comgr-libfuzzer fuzz/harness/comgr.c -lamd_comgr
 * With offload-kit's structure-aware mutator instead of libFuzzer's:
 *   ... -DOFFLOADKIT_MUTATOR -Iinclude fuzz/harness/comgr.c \
 *     target/release/liboffloadkit.a -lamd_comgr -lzstd -lz -lpthread -ldl -lm
 *   (then offloadkit_mutate() is the only mutator: no fallback to
 *   LLVMFuzzerMutate, so a run measures offload-kit's mutator alone.)
 * -DBYTEFLIP_MUTATOR: 1-8 random bytes set to random values, the baseline.
 *
 * Per input, as CLR does: a data object of kind AMD_COMGR_DATA_KIND_FATBIN,
 * amd_comgr_set_data() (no name needed), a query list of full code object
 * target IDs ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", the form
 * hsa_isa_get_info(HSA_ISA_INFO_NAME) reports; a bare "gfx906" never
 * matches), amd_comgr_lookup_code_object(), then the runtime reads
 * image + offset .. + size for every answer with size != 0. Offsets are
 * relative to the start of the data given to comgr.
 *
 * Differences from CLR, on purpose: CLR passes a fixed 4096 bytes for an
 * in-memory image (it does not know the size); here the data is exactly the
 * input, so that an answer outside it is caught. comgr copies the data in
 * amd_comgr_set_data(), so the reads below are the only reads of the input
 * buffer after that copy.
 *
 * COMGR_HARNESS_STATS=1 prints at exit, and just before the read of an
 * out-of-range answer (libFuzzer owns ASan's death callback), to stderr:
 *   comgr-harness: execs=N found=M outcomes=K oob=J
 * found = executions where >= 1 query got a code object, outcomes = distinct
 * (status, number of queries answered) pairs seen, each then listed as
 *   comgr-harness: outcome status=S found=F   (S: amd_comgr_status_t, 4 = other)
 * oob = executions where comgr answered outside the input.
 *
 * COMGR_HARNESS_OOB=count: count an out-of-range answer (oob) but skip the
 * read, so that fuzzing gets past this (constant) finding to whatever else
 * comgr does; the default makes it an ASan report, as the runtime would.
 */
#include <amd_comgr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OFFLOADKIT_MUTATOR
#include "offload_kit.h"
#endif

/* One query per distinct GPU, as CLR builds it. Order matters in comgr 5.2
 * (see fuzz/findings/comgr-5.2/README.md), so it is fixed. */
static const char *const kIsas[] = {
    "amdgcn-amd-amdhsa--gfx906",
    "amdgcn-amd-amdhsa--gfx906:xnack-",
    "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
    "amdgcn-amd-amdhsa--gfx1030",
    "amdgcn-amd-amdhsa--gfx908:xnack+",
};
#define NQ (sizeof kIsas / sizeof kIsas[0])
#define NSTATUS 5 /* SUCCESS, ERROR, INVALID_ARGUMENT, OUT_OF_RESOURCES, other */

static unsigned long long g_execs, g_found, g_oob;
static int g_stats, g_oob_count_only;
static unsigned char g_seen[NSTATUS][NQ + 1];
static volatile uint64_t g_sink; /* keeps the reads below from being elided */

static void print_stats(void) {
  unsigned outcomes = 0;
  for (int s = 0; s < NSTATUS; s++)
    for (size_t n = 0; n <= NQ; n++)
      outcomes += g_seen[s][n];
  fprintf(stderr, "comgr-harness: execs=%llu found=%llu outcomes=%u oob=%llu\n",
          g_execs, g_found, outcomes, g_oob);
  for (int s = 0; s < NSTATUS; s++)
    for (size_t n = 0; n <= NQ; n++)
      if (g_seen[s][n])
        fprintf(stderr, "comgr-harness: outcome status=%d found=%zu\n", s, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *e = getenv("COMGR_HARNESS_STATS");
  if (e && strcmp(e, "1") == 0) {
    g_stats = 1;
    atexit(print_stats); /* -max_total_time / -runs end via exit() */
  }
  e = getenv("COMGR_HARNESS_OOB");
  g_oob_count_only = e && strcmp(e, "count") == 0;
  return 0;
}

static int in_range(size_t size, uint64_t off, uint64_t len) {
  return off <= size && len <= size - off;
}

/* Reads what the runtime reads for one answer: a code object reader / copy
 * of image + offset, size bytes. Out of range, it touches the first byte past
 * the end rather than a wild address, so that ASan reports a
 * heap-buffer-overflow every time (a far pointer could land in another live
 * allocation and go unnoticed). */
static void use_code_object(const uint8_t *data, size_t size, uint64_t off,
                            uint64_t len) {
  uint64_t sum = 0;
  if (in_range(size, off, len)) {
    for (uint64_t i = 0; i < len; i++)
      sum += data[off + i];
  } else {
    fprintf(stderr,
            "comgr-harness: answer offset=%llu size=%llu outside input of "
            "%zu bytes\n",
            (unsigned long long)off, (unsigned long long)len, size);
    for (uint64_t i = off < size ? off : size; i <= size; i++)
      sum += data[i]; /* the last iteration is the overflow */
  }
  g_sink += sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  amd_comgr_code_object_info_t q[NQ];
  for (size_t i = 0; i < NQ; i++) {
    q[i].isa = kIsas[i];
    q[i].size = 0;
    q[i].offset = 0;
  }

  amd_comgr_data_t obj;
  amd_comgr_status_t st = amd_comgr_create_data(AMD_COMGR_DATA_KIND_FATBIN, &obj);
  if (st != AMD_COMGR_STATUS_SUCCESS)
    abort(); /* not input-dependent: the harness itself is broken */
  st = amd_comgr_set_data(obj, size, (const char *)data);
  if (st == AMD_COMGR_STATUS_SUCCESS)
    st = amd_comgr_lookup_code_object(obj, q, NQ);
  amd_comgr_release_data(obj);

  /* CLR uses the answers only after SUCCESS (an error mid-table can leave
   * earlier answers filled in: counted as found, not read). */
  size_t found = 0;
  int oob = 0;
  for (size_t i = 0; i < NQ; i++) {
    if (q[i].size == 0)
      continue;
    found++;
    if (st == AMD_COMGR_STATUS_SUCCESS && !in_range(size, q[i].offset, q[i].size))
      oob = 1;
  }
  g_execs++;
  g_found += found != 0;
  g_oob += oob;
  unsigned s = (unsigned)st < NSTATUS - 1 ? (unsigned)st : NSTATUS - 1;
  g_seen[s][found] = 1;

  if (st != AMD_COMGR_STATUS_SUCCESS || (oob && g_oob_count_only))
    return 0;
  if (oob && g_stats)
    print_stats(); /* the ASan report below ends the process */
  for (size_t i = 0; i < NQ; i++)
    if (q[i].size != 0)
      use_code_object(data, size, q[i].offset, q[i].size);
  return 0;
}

#if defined(OFFLOADKIT_MUTATOR)
/* offload-kit's structure-aware mutator only (no LLVMFuzzerMutate fallback). */
size_t LLVMFuzzerCustomMutator(uint8_t *Data, size_t Size, size_t MaxSize,
                               unsigned int Seed) {
  return offloadkit_mutate(Data, Size, MaxSize, Seed);
}
#elif defined(BYTEFLIP_MUTATOR)
/* Plain byte flips, the baseline: 1-8 random bytes set to random values. */
size_t LLVMFuzzerCustomMutator(uint8_t *Data, size_t Size, size_t MaxSize,
                               unsigned int Seed) {
  (void)MaxSize;
  if (Size == 0) return 0;
  srand(Seed);
  for (int i = 1 + rand() % 8; i > 0; i--) Data[(size_t)rand() % Size] = (uint8_t)rand();
  return Size;
}
#endif

/*
 * The mutator arms of tools/fuzz-eval, shared by every harness so that only
 * the mutator changes between arms (issue 41). Include it last, once:
 *   (none)               libFuzzer's own mutator
 *   -DBYTEFLIP_MUTATOR   1-8 random bytes set to random values
 *   -DOFFLOADKIT_MUTATOR offloadkit_mutate() alone (the README's recipe)
 *   -DMIX_MUTATOR        offloadkit_mutate() or LLVMFuzzerMutate(), half each
 *   -DBOOT_MUTATOR       offloadkit_mutate_flags(..., OFFLOADKIT_MUTATE_BOOTSTRAP):
 *                        an unrecognised input is sometimes replaced by a
 *                        freshly generated file (exploratory)
 *   -DNOIMAGE_MUTATOR    ablation: offloadkit_mutate without the image-aware
 *                        family (OFFLOADKIT_MUTATE_NO_IMAGE)
 *   -DBYTESONLY_MUTATOR  ablation: offloadkit_mutate's byte edits alone
 *                        (OFFLOADKIT_MUTATE_NO_STRUCTURE)
 */
#ifndef OFFLOAD_KIT_FUZZ_ARMS_H
#define OFFLOAD_KIT_FUZZ_ARMS_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(OFFLOADKIT_MUTATOR) || defined(MIX_MUTATOR) || defined(BOOT_MUTATOR) || \
    defined(NOIMAGE_MUTATOR) || defined(BYTESONLY_MUTATOR)
#include "offload_kit.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#if defined(OFFLOADKIT_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return offloadkit_mutate(data, size, max_size, seed);
}
#elif defined(BOOT_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return offloadkit_mutate_flags(data, size, max_size, seed, OFFLOADKIT_MUTATE_BOOTSTRAP);
}
#elif defined(NOIMAGE_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return offloadkit_mutate_flags(data, size, max_size, seed, OFFLOADKIT_MUTATE_NO_IMAGE);
}
#elif defined(BYTESONLY_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return offloadkit_mutate_flags(data, size, max_size, seed, OFFLOADKIT_MUTATE_NO_STRUCTURE);
}
#elif defined(MIX_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (seed & 1) return LLVMFuzzerMutate(data, size, max_size);
  size_t n = offloadkit_mutate(data, size, max_size, seed >> 1);
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
#elif defined(BYTEFLIP_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  srand(seed);
  if (size == 0) {
    if (max_size == 0) return 0;
    data[0] = (uint8_t)rand();
    return 1;
  }
  int k = 1 + rand() % 8;
  for (int i = 0; i < k; i++) data[rand() % size] = (uint8_t)rand();
  return size;
}
#endif

#ifdef __cplusplus
}
#endif
#endif

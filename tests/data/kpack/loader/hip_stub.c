/* A stand-in for the HIP runtime's registration entry points, loaded as
 * libamdhip64.so.5 by tests/kpack.rs: it prints what the dynamic loader
 * handed each fat-binary wrapper (magic, reserved1, the first bytes its
 * pointer reaches), so a rewritten host is checked by glibc's own loader.
 * Not HIP: nothing is run on a GPU. */
#include <stdint.h>
#include <stdio.h>

struct wrapper {
  uint32_t magic;
  uint32_t version;
  const unsigned char *binary;
  uint64_t reserved1;
};

void **__hipRegisterFatBinary(const struct wrapper *w) {
  static void *handle;
  printf("magic %.4s index %llu data", (const char *)&w->magic,
         (unsigned long long)w->reserved1);
  for (int i = 0; i < 20 && w->binary; i++)
    printf(" %02x", w->binary[i]);
  printf("\n");
  fflush(stdout);
  return &handle;
}
void __hipRegisterFunction(void) {}
void __hipUnregisterFatBinary(void *h) { (void)h; }
int __hipPopCallConfiguration(void) { return 0; }
int hipLaunchKernel(void) { return 0; }

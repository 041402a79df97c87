/* dlopen each host named on the command line, as a program using it would
 * (tests/kpack.rs): its constructors register its fat binaries with the
 * stand-in runtime (hip_stub.c). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 1;
    }
  }
  return 0;
}

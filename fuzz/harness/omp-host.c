/* An OpenMP program with one target region: fuzz/harness/make-seeds builds it
 * for the host plugin (clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu). */
#include <stdio.h>
int main(void) { int x = 1;
#pragma omp target map(tofrom: x)
  x += 41;
  printf("%d\n", x); return 0; }

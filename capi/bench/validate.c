/* Throughput of offloadkit_validate from C (a benchmark for the README, not a test).
 * cargo build --release -p offload-kit-capi && cc -O2 -Iinclude capi/bench/validate.c \
 *   target/release/liboffloadkit.a -lzstd -lz -lpthread -ldl -lm -o target/validate-bench && target/validate-bench */
#include "offload_kit.h"
#include <stdio.h>
#include <time.h>
int main(void) {
    static uint8_t buf[1 << 16]; char rule[16]; uint64_t off;
    size_t n = 0;
    for (uint64_t s = 0; ; s++) { n = offloadkit_generate("binary", s, buf, sizeof buf);
        if (n > 4000 && n < 7000) break; } /* 4 entries, each an image (about 1.3 KB) */
    FILE *f = fopen("target/validate-bench.bundle", "wb"); /* for `offload-kit list` */
    if (f) { fwrite(buf, 1, n, f); fclose(f); }
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    long k = 0; int r = 0;
    do { for (int i = 0; i < 10000; i++) r |= offloadkit_validate(buf, n, rule, sizeof rule, &off); k += 10000;
         clock_gettime(CLOCK_MONOTONIC, &b); } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 2.0);
    double t = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("C ABI validate of a %zu-byte bundle: %.0f/s (r=%d)\n", n, k / t, r);
    return 0;
}

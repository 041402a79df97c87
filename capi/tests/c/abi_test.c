/* The C ABI from C: linked against liboffloadkit.a by capi/tests/c_abi.rs.
 * Every check prints what failed and exits 1. */
#include "offload_kit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

int main(int argc, char **argv) {
    static uint8_t buf[1 << 16];
    char rule[16];
    uint64_t off = 0;
    const char *kinds[] = {"binary", "text", "object", "fatbin", "ccob", "offload-binary", "archive"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        for (uint64_t seed = 0; seed < 20; seed++) {
            size_t n = offloadkit_generate(kinds[k], seed, buf, sizeof buf);
            CHECK(n > 0, "generate %s seed %llu gave nothing", kinds[k], (unsigned long long)seed);
            int r = offloadkit_validate(buf, n, rule, sizeof rule, &off);
            CHECK(r == 0, "generated %s seed %llu: validate %d %s at %llu", kinds[k],
                  (unsigned long long)seed, r, rule, (unsigned long long)off);
            /* Mutants stay within the limit, however often mutated. */
            for (unsigned m = 0; m < 50; m++) {
                n = offloadkit_mutate(buf, n, sizeof buf, m);
                CHECK(n <= sizeof buf, "mutant too big");
                r = offloadkit_validate(buf, n, rule, sizeof rule, &off);
                CHECK(r == 0 || r == 1, "validate of a mutant gave %d", r);
            }
        }
    }
    /* A malformed file is reported with its rule at its offset. */
    uint64_t want = 0;
    size_t n = offloadkit_generate_malformed("binary", "BIN-7", 3, buf, sizeof buf, &want);
    CHECK(n > 0, "no BIN-7 file");
    CHECK(offloadkit_validate(buf, n, rule, sizeof rule, &off) == 1, "BIN-7 file accepted");
    CHECK(strcmp(rule, "BIN-7") == 0 && off == want, "BIN-7 file: %s at %llu, want BIN-7 at %llu", rule,
          (unsigned long long)off, (unsigned long long)want);
    /* A short rule buffer is cut and NUL-terminated. */
    char tiny[3];
    CHECK(offloadkit_validate(buf, n, tiny, sizeof tiny, &off) == 1 && strcmp(tiny, "BI") == 0, "cut rule '%s'", tiny);
    /* A ROCm kpack archive (argv[1]: ROCm's own) is a file offload-kit
     * reads: valid, as `offload-kit validate` and Python say; cut after its
     * magic it breaks KPAK-1. */
    CHECK(argc == 2, "usage: abi_test KPACK-ARCHIVE");
    if (argc == 2) {
        FILE *f = fopen(argv[1], "rb");
        CHECK(f != NULL, "cannot open %s", argv[1]);
        if (f) {
            size_t k = fread(buf, 1, sizeof buf, f);
            fclose(f);
            CHECK(k > 0 && k < sizeof buf, "%s: %zu bytes", argv[1], k);
            int r = offloadkit_validate(buf, k, rule, sizeof rule, &off);
            CHECK(r == 0, "ROCm's kpack archive: validate %d %s at %llu", r, rule, (unsigned long long)off);
            r = offloadkit_validate(buf, 4, rule, sizeof rule, &off);
            CHECK(r == 1 && strcmp(rule, "KPAK-1") == 0, "KPAK alone: %d %s", r, rule);
        }
    }
    /* A kpack split is every file: the host, then its archives beside it
     * (each valid, named as the host's search path finds it). */
    {
        static uint8_t archive[1 << 16];
        char name[64];
        size_t host = offloadkit_generate("kpack", 5, buf, sizeof buf);
        CHECK(host > 0, "no kpack host");
        size_t files = 0;
        for (size_t i = 0;; i++) {
            size_t need = offloadkit_generate_companion("kpack", 5, sizeof buf, i, NULL, 0, NULL, 0);
            if (need == 0)
                break;
            size_t k = offloadkit_generate_companion("kpack", 5, sizeof buf, i, name, sizeof name, archive,
                                                     sizeof archive);
            CHECK(k == need, "archive %zu: %zu bytes, then %zu", i, need, k);
            CHECK(strncmp(name, "kpack-0000000000000005-", 23) == 0 && strstr(name, ".kpack") != NULL,
                  "archive name '%s'", name);
            int r = offloadkit_validate(archive, k, rule, sizeof rule, &off);
            CHECK(r == 0, "archive %s: validate %d %s", name, r, rule);
            files++;
        }
        CHECK(files >= 1, "a kpack split without archives");
        /* A name buffer too small: the size, nothing written. */
        name[0] = 'x';
        CHECK(offloadkit_generate_companion("kpack", 5, sizeof buf, 0, name, 4, archive, sizeof archive) > 0 &&
                  name[0] == 0, "a short name buffer: not emptied");
        CHECK(offloadkit_generate_companion("binary", 5, sizeof buf, 0, name, sizeof name, archive, sizeof archive) == 0,
              "a bundle has no companion");
        CHECK(offloadkit_generate_companion(NULL, 5, sizeof buf, 0, name, sizeof name, archive, sizeof archive) == 0,
              "NULL kind");
    }
    /* inspect: the JSON report, sized first (cap 0), then written. */
    {
        static char doc[1 << 16];
        size_t need = 0, got = 0;
        size_t n = offloadkit_generate("binary", 7, buf, sizeof buf);
        CHECK(offloadkit_inspect(buf, n, NULL, 0, &need) == 0 && need > 20, "inspect sized %zu", need);
        CHECK(offloadkit_inspect(buf, n, doc, sizeof doc, &got) == 0 && got == need && strlen(doc) == need &&
                  strncmp(doc, "{\"report\":", 10) == 0,
              "inspect: %.60s", doc);
        /* Too small a buffer: the length, nothing written. */
        doc[0] = 'x';
        CHECK(offloadkit_inspect(buf, n, doc, need, &got) == 0 && got == need && doc[0] == 0, "short buffer not emptied");
        /* Not a container: errors with their rule. */
        CHECK(offloadkit_inspect(buf, 30, doc, sizeof doc, &got) == 1 && strstr(doc, "\"errors\"") && strstr(doc, "BIN-"),
              "a cut bundle: %.80s", doc);
        CHECK(offloadkit_inspect(NULL, 5, doc, sizeof doc, &got) == OFFLOADKIT_EBADARG, "NULL data");
        CHECK(offloadkit_inspect(buf, n, doc, sizeof doc, NULL) == OFFLOADKIT_EBADARG, "NULL len_out");
    }
    /* list: list --json's document. */
    {
        static char doc[1 << 16];
        size_t got = 0;
        size_t n = offloadkit_generate("binary", 7, buf, sizeof buf);
        CHECK(offloadkit_list(buf, n, doc, sizeof doc, &got) == 0 && strstr(doc, "\"schema\":\"offload-kit-list/1\"") &&
                  strstr(doc, "\"entries\":[{"),
              "list: %.80s", doc);
        CHECK(offloadkit_list(buf, 30, doc, sizeof doc, &got) == 1 && strstr(doc, "\"errors\""), "list of a cut bundle");
    }
    /* check: the verdict for one GPU, sized as inspect's. */
    {
        static char doc[1 << 16];
        size_t need = 0, got = 0;
        size_t n = offloadkit_generate("binary", 7, buf, sizeof buf);
        CHECK(offloadkit_check(buf, n, "gfx906", NULL, 0, &need) == 0 && need > 10, "check sized %zu", need);
        CHECK(offloadkit_check(buf, n, "gfx906", doc, sizeof doc, &got) == 0 && got == need &&
                  strstr(doc, "\"gpu\":\"gfx906\"") && strstr(doc, "\"runs\":"),
              "check: %.80s", doc);
        CHECK(offloadkit_check(buf, 30, "gfx906", doc, sizeof doc, &got) == 1 && strstr(doc, "\"errors\""),
              "check of a cut bundle: %.80s", doc);
        CHECK(offloadkit_check(buf, n, "not a gpu", doc, sizeof doc, &got) == OFFLOADKIT_EBADARG, "bad GPU");
        CHECK(offloadkit_check(buf, n, NULL, doc, sizeof doc, &got) == OFFLOADKIT_EBADARG, "NULL GPU");
    }
    /* bundle and unbundle: clang-offload-bundler in memory. */
    {
        static uint8_t bundle[1 << 16], piece[1 << 16];
        const char *targets[] = {"host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906"};
        const uint8_t *payloads[] = {(const uint8_t *)"HOST", (const uint8_t *)"DEVICE"};
        size_t sizes[] = {4, 6};
        offloadkit_bundler_options o = {22, "bc", 4096, 0, 0, 0};
        size_t need = 0, got = 0;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, NULL, 0, &need) == 0 && need > 4096,
              "bundle sized %zu", need);
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == 0 && got == need &&
                  memcmp(bundle, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0,
              "bundle: %zu bytes", got);
        CHECK(offloadkit_unbundle(bundle, got, targets, 2, 1, &o, piece, sizeof piece, &need) == 0 && need == 6 &&
                  memcmp(piece, "DEVICE", 6) == 0,
              "unbundle of the device: %zu bytes", need);
        /* Compressed as LLVM 22 compresses (CCOB v3), unbundled back. */
        o.compress = OFFLOADKIT_COMPRESS_DEFAULT;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == 0 &&
                  memcmp(bundle, "CCOB\x03\x00", 6) == 0,
              "compressed bundle: %zu bytes, version %d", got, bundle[4]);
        CHECK(offloadkit_unbundle(bundle, got, targets, 2, 0, &o, piece, sizeof piece, &need) == 0 && need == 4 &&
                  memcmp(piece, "HOST", 4) == 0,
              "unbundle of the compressed host");
        /* The release refuses: the errors document, with its rule. */
        static char doc[4096];
        const char *missing[] = {"hip-amdgcn-amd-amdhsa--gfx90a"};
        CHECK(offloadkit_unbundle(bundle, got, missing, 1, 0, &o, (uint8_t *)doc, sizeof doc, &need) == 1 &&
                  strstr(doc, "\"errors\":[{") && strstr(doc, "\"llvm_message\":"),
              "a missing target: %.120s", doc);
        o.allow_missing = 1;
        CHECK(offloadkit_unbundle(bundle, got, missing, 1, 0, &o, piece, sizeof piece, &need) == 0 && need == 0,
              "a missing target allowed: an empty file");
        const char *twice[] = {"host-x86_64-unknown-linux-gnu", "host-x86_64-unknown-linux-gnu"};
        CHECK(offloadkit_bundle(twice, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == 1 &&
                  strstr((char *)bundle, "\"rule\":\"CLI-3\"") &&
                  strstr((char *)bundle, "Duplicate targets are not allowed"),
              "a target twice: %.160s", (char *)bundle);
        o.llvm_version = 18;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == OFFLOADKIT_EUNKNOWN,
              "no LLVM 18 profile");
        o.llvm_version = 22;
        o.compress = 4;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == OFFLOADKIT_EBADARG,
              "no CCOB version 4");
        CHECK(offloadkit_unbundle(bundle, got, targets, 2, 2, &o, piece, sizeof piece, &need) == OFFLOADKIT_EBADARG,
              "an index past the targets");
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, NULL, bundle, sizeof bundle, &got) == OFFLOADKIT_EBADARG,
              "NULL options");
        o.compress = 0;
        o.level = 5;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == OFFLOADKIT_EBADARG,
              "a level without compression");
        /* LLVM 19 writes the output of two targets that name one bundle
           once, for the later: the earlier's file is not written. */
        o.level = 0;
        o.llvm_version = 19;
        o.allow_missing = 0;
        CHECK(offloadkit_bundle(targets, payloads, sizes, 2, &o, bundle, sizeof bundle, &got) == 0, "bundle for 19");
        const char *alike[] = {"hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa-gfx906",
                               "host-x86_64-unknown-linux-gnu"};
        CHECK(offloadkit_unbundle(bundle, got, alike, 3, 0, &o, piece, sizeof piece, &need) == OFFLOADKIT_NOT_WRITTEN &&
                  need == 0,
              "19: the earlier of two alike targets is not written");
        CHECK(offloadkit_unbundle(bundle, got, alike, 3, 1, &o, piece, sizeof piece, &need) == 0 && need == 6 &&
                  memcmp(piece, "DEVICE", 6) == 0,
              "19: the later of two alike targets holds the device");
    }
    /* compress and decompress: a compressed bundle and back. */
    {
        static uint8_t z[1 << 16], back[1 << 16];
        size_t n = offloadkit_generate("binary", 9, buf, sizeof buf), zn = 0, bn = 0;
        CHECK(offloadkit_compress(buf, n, 3, "zstd", 0, z, sizeof z, &zn) == 0 && memcmp(z, "CCOB\x03\x00", 6) == 0,
              "compress: %zu bytes", zn);
        CHECK(offloadkit_decompress(z, zn, back, sizeof back, &bn) == 0 && bn == n && memcmp(back, buf, n) == 0,
              "decompress: %zu bytes of %zu", bn, n);
        CHECK(offloadkit_decompress(z, zn - 3, (uint8_t *)rule, 0, &bn) == 1 && bn > 10, "a cut bundle is refused");
        CHECK(offloadkit_decompress(buf, n, back, sizeof back, &bn) == 1 && strstr((char *)back, "CCOB-1"),
              "a plain bundle is no compressed bundle: %.80s", (char *)back);
        CHECK(offloadkit_compress(buf, n, 4, NULL, 0, z, sizeof z, &zn) == 1, "no CCOB version 4");
        CHECK(offloadkit_compress(buf, n, 3, "lz4", 0, z, sizeof z, &zn) == OFFLOADKIT_EBADARG, "no lz4");
    }
    /* Bad arguments are error codes, not crashes. */
    CHECK(offloadkit_validate(NULL, 5, rule, sizeof rule, &off) == OFFLOADKIT_EBADARG, "NULL data");
    CHECK(offloadkit_validate(buf, n, NULL, 16, &off) == OFFLOADKIT_EBADARG, "NULL rule");
    CHECK(offloadkit_validate(buf, n, rule, 0, &off) == OFFLOADKIT_EBADARG, "zero capacity");
    CHECK(offloadkit_validate(buf, n, rule, sizeof rule, NULL) == OFFLOADKIT_EBADARG, "NULL offset");
    CHECK(offloadkit_validate(NULL, 0, rule, sizeof rule, &off) == 1, "empty input is no container");
    /* From one byte, the bootstrap flag makes whole containers that
       validate answers for; without it, the byte stays small. */
    int grown = 0, plain_grown = 0;
    for (unsigned seed = 0; seed < 64; seed++) {
        buf[0] = 'x';
        size_t g = offloadkit_mutate_flags(buf, 1, sizeof buf, seed, OFFLOADKIT_MUTATE_BOOTSTRAP);
        CHECK(g <= sizeof buf, "bootstrapped mutant too big");
        if (g > 64) {
            grown++;
            int v = offloadkit_validate(buf, g, rule, sizeof rule, &off);
            CHECK(v == 0 || v == 1, "validate of a fresh file gave %d", v);
        }
        buf[0] = 'x';
        plain_grown += offloadkit_mutate_flags(buf, 1, sizeof buf, seed, 0) > 64;
    }
    CHECK(grown > 4 && plain_grown == 0, "bootstrap grew %d of 64, plain %d", grown, plain_grown);
    CHECK(offloadkit_mutate_flags(NULL, 0, 10, 1, OFFLOADKIT_MUTATE_BOOTSTRAP) == 0, "mutate_flags NULL");
    CHECK(offloadkit_mutate(NULL, 0, 10, 1) == 0, "mutate NULL");
    CHECK(offloadkit_mutate(buf, 10, 0, 1) == 0, "mutate into 0 bytes");
    CHECK(offloadkit_generate(NULL, 1, buf, sizeof buf) == 0, "NULL kind");
    CHECK(offloadkit_generate("no-such-kind", 1, buf, sizeof buf) == 0, "unknown kind");
    CHECK(offloadkit_generate("binary", 1, NULL, 100) == 0, "NULL buffer");
    CHECK(offloadkit_generate("binary", 1, buf, 0) == 0, "zero capacity");
    CHECK(offloadkit_generate("fatbin", 1, buf, 100) == 0, "a fat binary never fits 100 bytes");
    CHECK(offloadkit_generate_malformed("ccob", "BIN-7", 1, buf, sizeof buf, NULL) == 0, "ccob cannot break BIN-7");
    CHECK(offloadkit_generate_malformed("binary", NULL, 1, buf, sizeof buf, NULL) == 0, "NULL rule");
    /* Only what the release reads: version 1 offload binaries for 22. */
    for (uint64_t seed = 0; seed < 40; seed++) {
        size_t n = offloadkit_generate_for_release("offload-binary", 22, seed, buf, sizeof buf);
        CHECK(n > 8 && buf[4] == 1, "22: offload binary v1 (seed %llu)", (unsigned long long)seed);
    }
    CHECK(offloadkit_generate_for_release("ccob", 16, 1, buf, sizeof buf) == 0, "16 reads no CCOB");
    CHECK(offloadkit_generate_for_release("binary", 18, 1, buf, sizeof buf) == 0, "no LLVM 18 profile");
    /* LLVM 23 (modelled from source) reads offload binaries of versions 1
       and 2, never main's 3; main is 24.0.0git. */
    int v2 = 0;
    for (uint64_t seed = 0; seed < 40; seed++) {
        size_t n = offloadkit_generate_for_release("offload-binary", 23, seed, buf, sizeof buf);
        CHECK(n > 8 && (buf[4] == 1 || buf[4] == 2), "23: offload binary v1 or v2 (seed %llu)", (unsigned long long)seed);
        v2 += n > 8 && buf[4] == 2;
    }
    CHECK(v2 > 0, "23 makes version 2 binaries too");
    CHECK(offloadkit_generate_for_release("binary", 24, 1, buf, sizeof buf) > 0, "24 is main");
    CHECK(offloadkit_generate_for_release("binary", 25, 1, buf, sizeof buf) == 0, "no LLVM 25 profile");
    if (failures) return 1;
    puts("c abi: ok");
    return 0;
}

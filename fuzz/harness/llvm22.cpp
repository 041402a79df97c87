/*
 * LLVM 22's own readers of offload containers, as Debian ships them, as
 * targets of tools/fuzz-eval (issue 41). One reader per build:
 *
 *   -DREADER_OFFLOAD_BINARY  llvm/lib/Object/OffloadBinary.cpp
 *                            (extractOffloadBinaries, every entry's strings
 *                            and image)
 *   -DREADER_OFFLOAD_BUNDLE  llvm/lib/Object/OffloadBundle.cpp
 *                            (extractOffloadBundleFatBinary of an object,
 *                            OffloadBundleFatBin::create of a bundle,
 *                            CompressedOffloadBundle::decompress)
 *   -DREADER_BUNDLER         clang/lib/Driver/OffloadBundler.cpp
 *                            (ListBundleIDsInFile as -type=o and -type=bc,
 *                            CompressedOffloadBundle::decompress)
 *
 * The reader's code is Debian's compiled object, taken out of the static
 * library of llvm-22-dev / libclang-22-dev (OffloadBinary.cpp.o, ...) and
 * linked into this program, so it runs from here and nothing of it is
 * rebuilt. It is not instrumented: libFuzzer's feedback is this harness's
 * edges plus an extra counter per distinct answer (the error text with its
 * numbers removed, and the number of entries), the same in every arm.
 * Coverage of the reader is measured outside the fuzzer, by replaying the
 * corpus under valgrind (tools/fuzz-eval --targets llvm22-*). ASan's
 * interceptors (memcpy, malloc) and the header's inline code, which is
 * compiled here, still catch what the reader does wrong.
 *
 * Canaries (Magma-style, decided on the input before the reader runs, so a
 * trial measures each even when the reader does not crash):
 *   OB7  a string table past the binary's end           [OB-7]
 *   OB8  a key or value offset past the binary's end    [OB-8]
 *   OB9  an image past the binary's end                 [OB-9]
 *   W    a bundle entry's offset + size wraps 2^64      [BIN-5, llvm#222361's class]
 *   V    a CCOB header of a version 22 does not know    [CCOB-2, llvm#200140]
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#if defined(READER_OFFLOAD_BINARY)
#include "llvm/Object/OffloadBinary.h"
#elif defined(READER_OFFLOAD_BUNDLE)
#include "llvm/Object/OffloadBundle.h"
#elif defined(READER_BUNDLER)
#include "clang/Driver/OffloadBundler.h"
#else
#error "define one of READER_OFFLOAD_BINARY, READER_OFFLOAD_BUNDLE, READER_BUNDLER"
#endif

using namespace llvm;

// One libFuzzer extra counter per distinct answer (hashed).
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t answers[8192];

static void answer(const std::string &what, uint64_t entries) {
  uint64_t h = 1469598103934665603ull;
  for (char c : what) {
    if (c >= '0' && c <= '9') continue;  // offsets and sizes differ per input, not per answer
    h = (h ^ (uint8_t)c) * 1099511628211ull;
  }
  h = (h ^ (entries < 16 ? entries : 16)) * 1099511628211ull;
  answers[h % sizeof answers]++;
}

static std::string take(Error E) { return E ? toString(std::move(E)) : std::string(); }

// Canary events go to $FUZZ_EVAL_CANARIES when set: in libFuzzer's fork
// mode the children's stderr is not the trial's. Each line carries the wall
// time, so the first hit of a trial is found across children.
static void canary_event(const char *id, const char *what) {
  static FILE *log = [] {
    const char *path = getenv("FUZZ_EVAL_CANARIES");
    FILE *f = path ? fopen(path, "a") : nullptr;
    return f ? f : stderr;
  }();
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  fprintf(log, "fuzz-eval: canary %s %s at %lld.%03ld\n", id, what, (long long)now.tv_sec,
          now.tv_nsec / 1000000);
  fflush(log);
}

static void canary(const char *id, bool hit) {
  static std::string reached, triggered;
  std::string key = std::string(" ") + id + " ";
  if (reached.find(key) == std::string::npos) {
    reached += key;
    canary_event(id, "reached");
  }
  if (hit && triggered.find(key) == std::string::npos) {
    triggered += key;
    canary_event(id, "triggered");
  }
}

static uint64_t u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

// a + b > limit, without wrapping.
static bool past(uint64_t a, uint64_t b, uint64_t limit) { return a > limit || b > limit - a; }

#if defined(READER_OFFLOAD_BINARY)
// The canaries of an offload binary at the start of the input (layout:
// spec/offload-binary.md; 16-byte string entries, 40-byte entries).
static void binary_canaries(const uint8_t *d, size_t n) {
  if (n < 32 || memcmp(d, "\x10\xff\x10\xad", 4) != 0) return;
  uint64_t size = u64(d + 8) < n ? u64(d + 8) : n, e = u64(d + 16);
  if (past(e, 40, size)) return;
  uint64_t soff = u64(d + e + 8), nstr = u64(d + e + 16);
  uint64_t ioff = u64(d + e + 24), isize = u64(d + e + 32);
  bool table_past = nstr > size / 16 || past(soff, nstr * 16, size);
  canary("OB7", table_past);
  canary("OB9", past(ioff, isize, size));
  if (table_past) return;
  bool string_past = false;
  for (uint64_t i = 0; i < nstr; i++)
    string_past |= u64(d + soff + 16 * i) >= size || u64(d + soff + 16 * i + 8) >= size;
  canary("OB8", string_past);
}
#else
// The canaries of a bundle or CCOB header at the start of the input.
static void bundle_canaries(const uint8_t *d, size_t n) {
  static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (n >= 8 && memcmp(d, "CCOB", 4) == 0) {
    uint16_t v = (uint16_t)(d[4] | d[5] << 8);
    canary("V", v < 1 || v > 3);
  }
  if (n < 32 || memcmp(d, magic, 24) != 0) return;
  uint64_t count = u64(d + 24), at = 32;
  bool wraps = false;
  for (uint64_t i = 0; i < count && at + 24 <= n; i++) {
    uint64_t off = u64(d + at), size = u64(d + at + 8), idlen = u64(d + at + 16);
    wraps |= off + size < off;
    if (past(at + 24, idlen, n)) break;
    at += 24 + idlen;
  }
  canary("W", wraps);
}
#endif

#if defined(READER_BUNDLER)
static int memfd = -1;
#endif

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The readers print what they list to stdout; libFuzzer talks on stderr.
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, 1);
#if defined(READER_BUNDLER)
  memfd = memfd_create("bundler-input", 0);
#endif
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef bytes(reinterpret_cast<const char *>(data), size);
  MemoryBufferRef ref(bytes, "fuzz-input");
#if defined(READER_OFFLOAD_BINARY)
  binary_canaries(data, size);
  SmallVector<object::OffloadFile> files;
  std::string err = take(object::extractOffloadBinaries(ref, files));
  uint64_t sum = 0;
  for (auto &f : files) {
    const object::OffloadBinary *b = f.getBinary();
    sum += b->getImage().size() + b->getTriple().size() + b->getArch().size() + b->getFlags();
    for (auto &kv : b->strings()) sum += kv.first.size() + kv.second.size();
  }
  asm volatile("" ::"r"(sum));
  answer(err, files.size());
#elif defined(READER_OFFLOAD_BUNDLE)
  bundle_canaries(data, size);
  uint64_t entries = 0;
  std::string err;
  if (auto obj = object::ObjectFile::createObjectFile(ref)) {
    SmallVector<object::OffloadBundleFatBin> bundles;
    err = take(object::extractOffloadBundleFatBinary(**obj, bundles));
    for (auto &b : bundles) entries += b.getEntries().size();
  } else {
    err = take(obj.takeError());
    auto fat = object::OffloadBundleFatBin::create(ref, 0, "fuzz-input", /*Decompress=*/true);
    if (fat)
      entries = (*fat)->getEntries().size();
    else
      err += take(fat.takeError());
  }
  if (size >= 4 && memcmp(data, "CCOB", 4) == 0) {
    auto in = MemoryBuffer::getMemBuffer(bytes, "fuzz-input", false);
    auto out = object::CompressedOffloadBundle::decompress(*in);
    err += out ? "decompressed" : take(out.takeError());
  }
  answer(err, entries);
#elif defined(READER_BUNDLER)
  bundle_canaries(data, size);
  if (memfd < 0 || ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
    abort();
  std::string path = "/proc/self/fd/" + std::to_string(memfd), err;
  for (const char *type : {"o", "bc"}) {
    clang::OffloadBundlerConfig config;
    config.FilesType = type;
    err += take(clang::OffloadBundler::ListBundleIDsInFile(path, config));
  }
  if (size >= 4 && memcmp(data, "CCOB", 4) == 0) {
    auto in = MemoryBuffer::getMemBuffer(bytes, "fuzz-input", false);
    auto out = clang::CompressedOffloadBundle::decompress(*in);
    err += out ? "decompressed" : take(out.takeError());
  }
  answer(err, 0);
#endif
  return 0;
}

#include "arms.h"

/* libFuzzer harness: LLVM 22's offload runtime (libomptarget.so.22.1,
 * Debian liboffload-22) registering and loading each input as a program
 * built by clang-linker-wrapper would hand it over, on the host plugin's
 * device (its devices run x86-64 shared objects, dlopen'ed).
 *
 * Build (tools/fuzz-omptarget does this):
 *   clang-22 -fsanitize=fuzzer,address -g -O1 fuzz/harness/omptarget.c \
 *     -l:libomptarget.so.22.1 -ldl -o target/fuzz-omptarget/omptarget-libfuzzer
 * -DOFFLOADKIT_MUTATOR: offloadkit_mutate() is the only mutator (link
 *   target/release/liboffloadkit.a); -DBYTEFLIP_MUTATOR: 1-8 random bytes
 *   set to random values, the baseline of "plain byte flips".
 *
 * Each input is run twice, each time in a forked child (the host plugin
 * dlopens the image, running its constructors, and LLVM's plugin objects
 * are leaked by design at teardown):
 *   binary: the descriptor's image is the whole input, as a program whose
 *           wrapper pointed at an embedded offload binary; libomptarget's
 *           DeviceImageTy runs llvm::object::OffloadBinary::create on it.
 *   image:  the descriptor's image is the image inside the input's first
 *           offload binary (found by this file's own bounds-checked reading
 *           of version 1), as clang-linker-wrapper's wrapper points at it in
 *           LLVM 22; an input that is itself an ELF file is its own image.
 *           After __tgt_register_lib, __tgt_interop_init on device 0 makes
 *           libomptarget load the image (plugin selection, the ELF checks,
 *           the write to /tmp and dlopen) without aborting when it fails.
 * (LLVM 22's liboffload cannot be used here: its host device is virtual,
 * and olCreateProgram on it dereferences NULL; see fuzz/findings/llvm-22.)
 *
 * A child that dies is a crash; the parent names where from the first
 * stack frame outside libc, the sanitizer runtime and this harness, as the
 * child's signal handler found it:
 *   llvm    libomptarget or libLLVM (the runtime's own code)
 *   ldso    the system's dynamic loader (ld-linux), loading the image, or
 *           one of its "Inconsistency detected" assertions (exit 127)
 *   image   code inside the loaded image (its constructors)
 *   other   anything else
 *   asan    an AddressSanitizer report (memory the runtime does not own)
 *   hang    no answer within OMPT_HARNESS_TIMEOUT seconds (default 5)
 * OMPT_HARNESS_DEVICE=N loads on device N instead of 0 and judges a load
 * by the runtime's own messages (for a GPU plugin's device, where nothing
 * is dlopen'ed: tools/fuzz-omptarget-cuda).
 * With OMPT_HARNESS_CRASH=count the crash is counted and fuzzing goes on;
 * by default the parent aborts, so libFuzzer keeps the input.
 *
 * OMPT_HARNESS_STATS=1 prints at exit, to stderr:
 *   omptarget-harness: execs=N images=I loaded=L outcomes=K crash_binary=A crash_image=B image_code=C first_crash=E
 * images = inputs with an image found (an ELF input, or the first entry's
 * image of an uncompressed offload binary); loaded = inputs whose image the host plugin dlopen'ed; outcomes = distinct
 * (mode, result) pairs; crash_* = crashes of the runtime, the dynamic
 * loader or unknown code per mode; image_code = crashes in the image's own
 * code (not counted as crashes, never fatal); first_crash = the execution
 * that crashed first (0: none). Each crash class is listed as
 *   omptarget-harness: class mode=M where=W signal=S count=C   (or exit=E)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifdef OFFLOADKIT_MUTATOR
#include "offload_kit.h"
#endif

/* llvm/include/llvm/Frontend/Offloading/Utility.h (EntryTy) and
 * offload/include/omptarget.h, LLVM 22: no header is packaged. */
typedef struct {
  uint64_t Reserved;
  uint16_t Version;
  uint16_t Kind;
  uint32_t Flags;
  void *Address;
  char *SymbolName;
  uint64_t Size;
  uint64_t Data;
  void *AuxAddr;
} tgt_offload_entry;
typedef struct {
  void *ImageStart, *ImageEnd;
  tgt_offload_entry *EntriesBegin, *EntriesEnd;
} tgt_device_image;
typedef struct {
  int32_t NumDeviceImages;
  tgt_device_image *DeviceImages;
  tgt_offload_entry *HostEntriesBegin, *HostEntriesEnd;
} tgt_bin_desc;

void __tgt_register_lib(tgt_bin_desc *);
void __tgt_unregister_lib(tgt_bin_desc *);
void __tgt_interop_init(void *loc, int32_t gtid, void **interop, int32_t type,
                        int32_t dev, int32_t ndeps, void *deps, int32_t nowait);
int omp_get_num_devices(void);

const char *__asan_default_options(void) {
  /* The runtime leaks its plugins by design; 86 marks an ASan report. */
  return "detect_leaks=0:exitcode=86:handle_segv=0:handle_sigbus=0:handle_abort=0";
}

enum { MODE_BINARY, MODE_IMAGE, NMODES };
static const char *const kModes[] = {"binary", "image"};
enum { R_REFUSED, R_LOADED, R_LLVM, R_LDSO, R_IMAGE, R_OTHER, R_ASAN, R_HANG, NRESULTS };
static const char *const kResults[] = {"refused", "loaded", "llvm", "ldso",
                                       "image",   "other",  "asan", "hang"};
/* Child exit codes: 10 loaded, 11 not loaded, 64 + 16 * R_* + signal a
 * classified crash, 86 an ASan report, 127 an ld.so assertion. */

static unsigned long long g_execs, g_images, g_loaded, g_crash[NMODES], g_image_code, g_first_crash;
/* Per (mode, result): 0-31 the signal that ended the child, 32-63 its exit
 * code (mod 32) when it exited. */
static unsigned long long g_seen[NMODES][NRESULTS][64];
static int g_stats, g_count, g_timeout = 5, g_device = -1;

static int loaded_from_tmp(struct dl_phdr_info *info, size_t size, void *found) {
  (void)size;
  if (info->dlpi_name && strncmp(info->dlpi_name, "/tmp/tmpfile_", 13) == 0)
    *(int *)found = 1;
  return 0;
}

/* Where a crash happened: the first frame outside libc, the sanitizer
 * runtime and this program. */
static int classify(void *const *frames, int n) {
  for (int i = 0; i < n; i++) {
    Dl_info info;
    if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
    const char *f = info.dli_fname;
    if (strstr(f, "libomptarget") || strstr(f, "libLLVM")) return R_LLVM;
    if (strstr(f, "ld-linux")) return R_LDSO;
    if (strncmp(f, "/tmp/tmpfile_", 13) == 0) return R_IMAGE;
  }
  return R_OTHER;
}

static void on_fatal(int sig, siginfo_t *si, void *ctx) {
  (void)si;
  void *frames[64];
  int n = backtrace(frames, 64);
  /* The faulting instruction itself, in case the unwinder cannot step
   * through the signal frame. */
  ucontext_t *uc = ctx;
  frames[n < 64 ? n++ : 63] = (void *)uc->uc_mcontext.gregs[REG_RIP];
  int where = classify(frames, n);
  /* 64 + 16 * where + signal: where (2-5) and the signal (all below 16). */
  _exit(64 + 16 * where + (sig & 15));
}

/* The image inside the first version 1 offload binary of `d`, every field
 * checked against the bytes that exist; 0 when there is none. */
static int inner_image(const uint8_t *d, size_t n, size_t *off, size_t *len) {
  static const uint8_t magic[4] = {0x10, 0xff, 0x10, 0xad};
  if (n >= 64 && memcmp(d, "\x7f" "ELF", 4) == 0) {
    *off = 0, *len = n;
    return 1;
  }
  if (n < 72 || memcmp(d, magic, 4) != 0) return 0;
  uint64_t size, entry, ioff, isz, inflated;
  uint32_t version;
  /* Versions 2 and 3 (LLVM main) keep the entry layout; a compressed
   * version 3 binary has no image until inflated. */
  memcpy(&version, d + 4, 4);
  memcpy(&inflated, d + 32, 8);
  if (version == 3 && inflated != 0) return 0;
  memcpy(&size, d + 8, 8);
  memcpy(&entry, d + 16, 8);
  if (size > n || entry > size || size - entry < 40) return 0;
  memcpy(&ioff, d + entry + 24, 8);
  memcpy(&isz, d + entry + 32, 8);
  if (ioff > size || isz > size - ioff || isz == 0) return 0;
  *off = ioff, *len = isz;
  return 1;
}

/* Register `len` bytes at `img` (a copy, 8-aligned), load them when asked,
 * unregister. Runs in the child; returns its exit code. */
static int run_child(const uint8_t *img, size_t len, int load) {
  static uint8_t altstack[1 << 16];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
  alarm(g_timeout);
  uint8_t *buf = malloc(len ? len : 1);
  memcpy(buf, img, len);
  /* One OpenMP entry: libomptarget skips images whose host table is empty. */
  tgt_offload_entry e = {0, 1, 1, 0, NULL, (char *)"x", 0, 0, NULL};
  tgt_device_image di = {buf, buf + len, &e, &e + 1};
  tgt_bin_desc desc = {1, &di, &e, &e + 1};
  /* On a GPU plugin's device nothing is dlopen'ed: the runtime's own
   * refusal ("Failed to load image") on stderr tells. */
  FILE *log = g_device >= 0 ? tmpfile() : NULL;
  if (log) dup2(fileno(log), 2);
  __tgt_register_lib(&desc);
  int loaded = 0;
  if (load && omp_get_num_devices() > 0) {
    void *interop = NULL;
    __tgt_interop_init(NULL, 0, &interop, 0, g_device >= 0 ? g_device : 0, 0, NULL, 0);
    dl_iterate_phdr(loaded_from_tmp, &loaded);
    if (log && !loaded) {
      char text[4096] = {0};
      fflush(stderr);
      rewind(log);
      size_t n = fread(text, 1, sizeof text - 1, log);
      text[n] = 0;
      loaded = strstr(text, "Failed to load") == NULL;
    }
  }
  __tgt_unregister_lib(&desc);
  free(buf);
  return loaded ? 10 : 11;
}

/* The host plugin writes each image to /tmp/tmpfile_XXXXXX and never
 * removes it; the harness removes them all after each input, so run one
 * harness per /tmp at a time. */
static void remove_tmpfiles(void) {
  DIR *dir = opendir("/tmp");
  if (!dir) return;
  struct dirent *de;
  char path[300];
  while ((de = readdir(dir))) {
    if (strncmp(de->d_name, "tmpfile_", 8) != 0) continue;
    snprintf(path, sizeof path, "/tmp/%s", de->d_name);
    unlink(path);
  }
  closedir(dir);
}

static int run_mode(const uint8_t *img, size_t len, int mode) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return R_REFUSED;
  if (pid == 0) {
    /* The runtime prints its refusals; keep the fuzzer's output readable. */
    if (!getenv("OMPT_HARNESS_VERBOSE")) {
      FILE *null = freopen("/dev/null", "w", stdout);
      (void)null;
    }
    _exit(run_child(img, len, mode == MODE_IMAGE));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  remove_tmpfiles();
  int key, result;
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    key = 32 + (code & 31);
    if (code == 10) result = R_LOADED;
    else if (code == 11) result = R_REFUSED;
    else if (code == 86) result = R_ASAN, key = 0;
    /* ld.so's "Inconsistency detected" assertions end the process with 127. */
    else if (code == 127) result = R_LDSO, key = 0;
    else if (code >= 64 + 16 * R_LLVM && code < 64 + 16 * (R_OTHER + 1))
      result = (code - 64) / 16, key = (code - 64) % 16;
    else result = R_OTHER;
  } else {
    key = WTERMSIG(status) & 31;
    result = key == SIGALRM ? R_HANG : R_OTHER;
  }
  g_seen[mode][result][key]++;
  /* The image's own code crashing (its constructors, run by dlopen) is no
   * loader's fault: counted apart. */
  if (result == R_IMAGE) g_image_code++;
  else if (result >= R_LLVM) {
    g_crash[mode]++;
    if (!g_first_crash) g_first_crash = g_execs;
    if (!g_count) {
      fprintf(stderr, "omptarget-harness: crash mode=%s where=%s (child status 0x%x)\n",
              kModes[mode], kResults[result], status);
      abort();
    }
  }
  return result;
}

static void print_stats(int final) {
  if (!g_stats) return;
  unsigned outcomes = 0;
  for (int m = 0; m < NMODES; m++)
    for (int r = 0; r < NRESULTS; r++)
      for (int s = 0; s < 64; s++) outcomes += g_seen[m][r][s] != 0;
  fprintf(stderr,
          "omptarget-harness: execs=%llu images=%llu loaded=%llu outcomes=%u crash_binary=%llu "
          "crash_image=%llu image_code=%llu first_crash=%llu\n",
          g_execs, g_images, g_loaded, outcomes, g_crash[MODE_BINARY], g_crash[MODE_IMAGE],
          g_image_code, g_first_crash);
  if (!final) return;
  for (int m = 0; m < NMODES; m++)
    for (int r = R_LLVM; r < NRESULTS; r++)
      for (int s = 0; s < 64; s++)
        if (g_seen[m][r][s])
          fprintf(stderr, "omptarget-harness: class mode=%s where=%s %s=%d count=%llu\n",
                  kModes[m], kResults[r], s < 32 ? "signal" : "exit", s & 31, g_seen[m][r][s]);
}

static void print_final_stats(void) { print_stats(1); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  /* Computed once per process by libomptarget: without MANDATORY, a first
   * look that finds no device disables offloading for good. */
  setenv("OMP_TARGET_OFFLOAD", "MANDATORY", 1);
  g_stats = getenv("OMPT_HARNESS_STATS") != NULL;
  const char *c = getenv("OMPT_HARNESS_CRASH");
  g_count = c && strcmp(c, "count") == 0;
  const char *dev = getenv("OMPT_HARNESS_DEVICE");
  if (dev && *dev) g_device = atoi(dev);
  const char *t = getenv("OMPT_HARNESS_TIMEOUT");
  if (t && atoi(t) > 0) g_timeout = atoi(t);
  atexit(print_final_stats);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  g_execs++;
  if (size >= 4 && memcmp(data, "\x10\xff\x10\xad", 4) == 0)
    run_mode(data, size, MODE_BINARY);
  size_t off, len;
  if (inner_image(data, size, &off, &len)) {
    g_images++;
    if (run_mode(data + off, len, MODE_IMAGE) == R_LOADED) g_loaded++;
  }
  if (g_stats && g_execs % 1000 == 0) print_stats(0);
  return 0;
}

#if defined(OFFLOADKIT_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return offloadkit_mutate(data, size, max_size, seed);
}
#elif defined(BYTEFLIP_MUTATOR)
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  (void)max_size;
  if (size == 0) return 0;
  srand(seed);
  for (int i = 1 + rand() % 8; i > 0; i--) data[(size_t)rand() % size] = (uint8_t)rand();
  return size;
}
#endif

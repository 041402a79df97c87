/* comgr-lookup: ask ROCm comgr which code object of a fat binary it would
 * hand to the HIP runtime for each ISA.
 *
 * Build: cc -O2 -o target/comgr-lookup conformance/shims/comgr_lookup.c -lamd_comgr
 *        (Debian: libamd-comgr-dev; comgr 5.2 = interface 2.4)
 *
 * Usage: comgr-lookup [--kind fatbin|bytes|executable] [--clr-window] FILE ISA...
 *   Prints one line per ISA, in argument order: <isa>\t<offset>\t<size>
 *   (size 0 = not found), exit 0 on AMD_COMGR_STATUS_SUCCESS; otherwise the
 *   status name on stderr and exit 1. Usage/IO errors exit 2.
 *
 * The query is made the way CLR (hipamd/src/hip_code_object.cpp) makes it:
 * a data object of kind FATBIN, amd_comgr_set_data() (no name is needed),
 * one amd_comgr_code_object_info_t {isa, 0, 0} per ISA, then
 * amd_comgr_lookup_code_object(). ISA names are full code object target
 * IDs, e.g. "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".
 *
 * --clr-window: CLR hands comgr an in-memory image as exactly 4096 bytes
 * (amd_comgr_set_data(obj, 4096, image)) because it does not know the image
 * size. This option reproduces that: the file is cut or zero-padded to 4096.
 *
 * The offsets and sizes are printed as comgr returned them; this program never
 * dereferences them, so it cannot read outside FILE even if comgr's answer is
 * out of range (checking that is the caller's job).
 */
#include <amd_comgr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *status_name(amd_comgr_status_t s) {
  switch (s) {
  case AMD_COMGR_STATUS_SUCCESS: return "AMD_COMGR_STATUS_SUCCESS";
  case AMD_COMGR_STATUS_ERROR: return "AMD_COMGR_STATUS_ERROR";
  case AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT:
    return "AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT";
  case AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES:
    return "AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES";
  }
  return "AMD_COMGR_STATUS_<unknown>";
}

static int usage(void) {
  fprintf(stderr, "usage: comgr-lookup [--kind fatbin|bytes|executable] "
                  "[--clr-window] FILE ISA...\n");
  return 2;
}

int main(int argc, char **argv) {
  amd_comgr_data_kind_t kind = AMD_COMGR_DATA_KIND_FATBIN;
  int clr_window = 0, i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
    if (strcmp(argv[i], "--clr-window") == 0) {
      clr_window = 1;
    } else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
      const char *k = argv[++i];
      if (strcmp(k, "fatbin") == 0) kind = AMD_COMGR_DATA_KIND_FATBIN;
      else if (strcmp(k, "bytes") == 0) kind = AMD_COMGR_DATA_KIND_BYTES;
      else if (strcmp(k, "executable") == 0) kind = AMD_COMGR_DATA_KIND_EXECUTABLE;
      else return usage();
    } else {
      return usage();
    }
  }
  if (argc - i < 2) return usage();
  const char *path = argv[i++];
  size_t nisa = (size_t)(argc - i);

  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); return 2; }
  if (fseek(f, 0, SEEK_END) != 0) { perror(path); return 2; }
  long len = ftell(f);
  if (len < 0 || fseek(f, 0, SEEK_SET) != 0) { perror(path); return 2; }
  size_t size = (size_t)len;
  size_t alloc = clr_window ? 4096 : size;
  char *buf = calloc(alloc ? alloc : 1, 1);
  if (!buf) { perror("calloc"); return 2; }
  size_t want = size < alloc ? size : alloc;
  if (fread(buf, 1, want, f) != want) { perror(path); return 2; }
  fclose(f);

  amd_comgr_code_object_info_t *q = calloc(nisa, sizeof *q);
  if (!q) { perror("calloc"); return 2; }
  for (size_t j = 0; j < nisa; j++) q[j].isa = argv[i + (int)j];

  amd_comgr_data_t data;
  amd_comgr_status_t st = amd_comgr_create_data(kind, &data);
  if (st == AMD_COMGR_STATUS_SUCCESS) {
    st = amd_comgr_set_data(data, alloc, buf);
    if (st == AMD_COMGR_STATUS_SUCCESS)
      st = amd_comgr_lookup_code_object(data, q, nisa);
    amd_comgr_release_data(data);
  }
  if (st != AMD_COMGR_STATUS_SUCCESS) {
    fprintf(stderr, "%s\n", status_name(st));
    return 1;
  }
  for (size_t j = 0; j < nisa; j++)
    printf("%s\t%llu\t%llu\n", q[j].isa, (unsigned long long)q[j].offset,
           (unsigned long long)q[j].size);
  free(q);
  free(buf);
  return 0;
}

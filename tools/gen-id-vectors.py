#!/usr/bin/env python3
"""Generate ground-truth bundle-entry-ID vectors by running the real LLVM
clang-offload-bundler (each release of tools/llvm-releases).

Writes tests/data/llvm-id-vectors.json (relative to the repository root).

Two families of vectors:

* "written": which ID does each version store in a binary bundle (-type=bc)
  for a given -targets string?
* "match":   given a hand-made binary bundle holding ONE entry whose ID is
  stored verbatim, does `-unbundle -targets=<request>` extract it?

Each "written" item also carries "targets": the full -targets list that was
run (the host is prepended, or for a host T the HIP gfx906 companion is
appended, or T is run alone for HIP-only lists).  The recorded ID is the one
whose payload equals the input given for T.  Error messages are the first
"<argv0>: error: " line of stderr with that prefix removed; cl::opt parser
errors (no "error:") have the "clang-offload-bundler: " prefix removed, and
the bundler's full path is replaced by "clang-offload-bundler" everywhere.

Usage: python3 tools/gen-id-vectors.py [--llvm-root /usr/lib] [--out PATH]

Only the Python standard library is used.  The output is deterministic:
vectors are emitted in the order of the tables below, keys are sorted, and
nothing time- or path-dependent is recorded (the bundler's argv[0] is
stripped from messages).
"""

import argparse
import concurrent.futures
import json
import os
import struct
import subprocess
import sys
import tempfile

# The releases of tools/llvm-releases (one per line, '#' comments).
VERSIONS = [line.strip() for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "llvm-releases"))
            if line.strip() and not line.startswith("#")]
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HOST = "host-x86_64-unknown-linux-gnu"
HIP_COMPANION = "hip-amdgcn-amd-amdhsa--gfx906"
HOST_CONTENT = b"HOSTCONTENT-0123456789\n"
DEVICE_CONTENT = b"DEVICECONTENT-abcdefghij\n"
PAYLOAD = b"PAYLOAD"
TIMEOUT = 60

# ---------------------------------------------------------------------------
# "written" vectors.
# Each item: (target, mode)
#   mode "host"     -> -targets=host-x86_64-unknown-linux-gnu,T   (T is a device)
#   mode "hostfirst"-> -targets=T,hip-amdgcn-amd-amdhsa--gfx906   (T is a host)
#   mode "alone"    -> -targets=T                                 (HIP-only list)
# mode "auto" picks "hostfirst" if T starts with "host-", else "host".
# ---------------------------------------------------------------------------
WRITTEN = [
    # --- required by the brief ---
    ("host-x86_64-unknown-linux-gnu", "auto"),
    ("host-x86_64-unknown-linux-", "auto"),
    ("host-x86_64-linux-gnu-", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906", "auto"),
    ("hip-amdgcn-amd-amdhsa-gfx906", "auto"),
    ("hip-amdgcn-amd-amdhsa-unknown-gfx906", "auto"),
    ("hip-amdgcn-amd-amdhsa--", "auto"),
    ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-", "auto"),
    ("openmp-nvptx64-nvidia-cuda--sm_70", "auto"),
    ("openmp-nvptx64-nvidia-cuda", "auto"),
    ("openmp-nvptx64-nvidia-cuda-sm_70", "auto"),
    ("openmp-amdgcn-amd-amdhsa-gnu-gfx906", "auto"),
    ("openmp-x86_64-pc-linux-gnu--foo", "auto"),
    ("openmp-x86_64-pc-linux-gnu--gfx906", "auto"),
    ("openmp-x86_64-pc-linux-gnu", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906-extra", "auto"),
    ("openmp-nvptx64", "auto"),
    ("cuda-nvptx64-nvidia-cuda--sm_70", "auto"),
    ("openmp-bogus-unknown-linux", "auto"),
    ("openmp-bogus-unknown-linux-gnu", "auto"),
    # --- host spellings ---
    ("host-x86_64-unknown-linux-gnu-", "auto"),
    ("host-x86_64-unknown-linux", "auto"),
    ("host-x86_64-pc-linux-gnu", "auto"),
    ("host-x86_64-linux-gnu", "auto"),
    ("host-x86_64-unknown-linux-unknown", "auto"),
    ("host-aarch64-unknown-linux-gnu", "auto"),
    ("host-x86_64-pc-windows-msvc", "auto"),
    ("host-x86_64-unknown-linux-gnu--gfx906", "auto"),
    ("host-x86_64", "auto"),
    ("HOST-x86_64-unknown-linux-gnu", "auto"),
    # --- HIP, triple shapes ---
    ("hip-amdgcn-amd-amdhsa", "auto"),
    ("hip-amdgcn-amd-amdhsa-", "auto"),
    ("hip-amdgcn-amd-amdhsa---", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906-", "auto"),
    ("hip-amdgcn-amd-amdhsa-gnu-gfx906", "auto"),
    ("hip-amdgcn-amd-amdhsa-unknown-", "auto"),
    ("hip-amdgcn-amd-amdhsa-unknown", "auto"),
    ("hip-amdgcn-amd-amdhsa-unknown-gfx906-extra", "auto"),
    ("hip-amdgcn-unknown-amdhsa--gfx906", "auto"),
    ("hip-amdgcn-amd-amdpal--gfx906", "auto"),
    ("hip-amdgcn--amdhsa--gfx906", "auto"),
    ("hip-amdgcn-amdhsa--gfx906", "auto"),
    # --- HIP, capitals ---
    ("HIP-amdgcn-amd-amdhsa--gfx906", "auto"),
    ("hip-AMDGCN-amd-amdhsa--gfx906", "auto"),
    ("hip-amdgcn-AMD-AMDHSA--gfx906", "auto"),
    ("hip-amdgcn-amd-amdhsa--GFX906", "auto"),
    # --- HIP, target IDs / processors ---
    ("hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906:xnack", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906:foo+", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx906:xnack+:xnack-", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx1030:xnack+", "auto"),
    ("hip-amdgcn-amd-amdhsa--:xnack+", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx9999", "auto"),
    ("hip-amdgcn-amd-amdhsa--fiji", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic:xnack+", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx9-4-generic", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx10-3-generic", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx1200", "auto"),
    ("hip-amdgcn-amd-amdhsa--gfx950", "auto"),
    ("hip-amdgcn-amd-amdhsa--sm_70", "auto"),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", "auto"),
    ("hip-spirv64-amd-amdhsa-amdgcnspirv", "auto"),
    ("openmp-spirv64-amd-amdhsa--amdgcnspirv", "auto"),
    ("hip-nvptx64-nvidia-cuda--sm_70", "auto"),
    ("hipv4-amdgcn-amd-amdhsa--gfx906", "auto"),
    # --- NVPTX ---
    ("openmp-nvptx64-nvidia-cuda--sm_75", "auto"),
    ("openmp-nvptx64-nvidia-cuda--sm_90a", "auto"),
    ("openmp-nvptx64-nvidia-cuda-unknown-sm_70", "auto"),
    ("openmp-nvptx64-nvidia-cuda--", "auto"),
    ("openmp-nvptx64-nvidia-cuda-", "auto"),
    ("openmp-nvptx64-nvidia-cuda--sm_70:xnack+", "auto"),
    ("openmp-nvptx64-nvidia-cuda--gfx906", "auto"),
    ("openmp-nvptx64-nvidia-cuda--sm_999", "auto"),
    ("openmp-nvptx-nvidia-cuda--sm_70", "auto"),
    ("openmp-amdgcn-amd-amdhsa--sm_70", "auto"),
    ("openmp-amdgcn-amd-amdhsa--gfx906", "auto"),
    ("openmp-amdgcn-amd-amdhsa", "auto"),
    # --- x86_64 / other openmp offload ---
    ("openmp-x86_64-unknown-linux-gnu", "auto"),
    ("openmp-x86_64-pc-linux-gnu-", "auto"),
    ("openmp-x86_64-pc-linux-gnu--", "auto"),
    ("openmp-x86_64-pc-linux", "auto"),
    ("openmp-x86_64-pc-linux-gnu-unknown-extra", "auto"),
    ("openmp-x86_64", "auto"),
    ("openmp-aarch64-unknown-linux-gnu", "auto"),
    ("openmp-x86_64-linux-gnu", "auto"),
    # --- kinds ---
    ("sycl-spir64-unknown-unknown", "auto"),
    ("hip", "auto"),
    ("openmp-", "auto"),
    ("foo-x86_64-pc-linux-gnu", "auto"),
    # --- HIP-only lists (no host target) ---
    ("hip-amdgcn-amd-amdhsa--gfx906", "alone"),
    ("hip-amdgcn-amd-amdhsa-gfx906", "alone"),
    ("hip-amdgcn-amd-amdhsa--", "alone"),
    ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-", "alone"),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", "alone"),
    ("hip-nvptx64-nvidia-cuda--sm_70", "alone"),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", "alone"),
    ("openmp-amdgcn-amd-amdhsa--gfx906", "alone"),
]

# ---------------------------------------------------------------------------
# "match" vectors: (entry ID stored verbatim, request, hip_openmp_compatible)
# ---------------------------------------------------------------------------
H906 = "hip-amdgcn-amd-amdhsa--gfx906"
H4_906 = "hipv4-amdgcn-amd-amdhsa--gfx906"
O906 = "openmp-amdgcn-amd-amdhsa--gfx906"
HA = "hip-amdgcn-amd-amdhsa--gfx90a"
H4A = "hipv4-amdgcn-amd-amdhsa--gfx90a"
NV70 = "openmp-nvptx64-nvidia-cuda--sm_70"
F, T = False, True

MATCH = [
    # --- exact matches ---
    (H906, H906, F),
    (H4A + ":xnack+", H4A + ":xnack+", F),
    (NV70, NV70, F),
    (HOST, HOST, F),
    (HOST + "-", HOST + "-", F),
    ("openmp-x86_64-pc-linux-gnu", "openmp-x86_64-pc-linux-gnu", F),
    ("openmp-x86_64-pc-linux-gnu-", "openmp-x86_64-pc-linux-gnu-", F),
    ("openmp-amdgcn-amd-amdhsa--gfx908", "openmp-amdgcn-amd-amdhsa--gfx908", F),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", "hip-spirv64-amd-amdhsa--amdgcnspirv", F),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx9-generic", F),
    ("hip-nvptx64-nvidia-cuda--sm_70", "hip-nvptx64-nvidia-cuda--sm_70", F),
    (HA + ":xnack+:sramecc-", HA + ":xnack+:sramecc-", F),
    (H906, H906, T),
    (HOST, HOST, T),
    # --- hip vs hipv4 ---
    (H906, H4_906, F),
    (H4_906, H906, F),
    (H4A + ":xnack+", HA + ":xnack+", F),
    (HA + ":xnack+", H4A + ":xnack+", F),
    (H4_906, H906, T),
    # --- openmp vs hip, without and with -hip-openmp-compatible ---
    (H906, O906, F),
    (H906, O906, T),
    (O906, H906, F),
    (O906, H906, T),
    (H4_906, O906, F),
    (H4_906, O906, T),
    (O906, H4_906, T),
    (NV70, "hip-nvptx64-nvidia-cuda--sm_70", F),
    (NV70, "hip-nvptx64-nvidia-cuda--sm_70", T),
    ("hip-nvptx64-nvidia-cuda--sm_70", NV70, T),
    (O906, H906 + ":xnack+", T),
    ("HIP-amdgcn-amd-amdhsa--gfx906", O906, T),
    ("hipfoo-amdgcn-amd-amdhsa--gfx906", O906, T),
    ("hipfoo-amdgcn-amd-amdhsa--gfx906", H906, F),
    (HOST, "openmp-x86_64-unknown-linux-gnu", T),
    # --- 3-field vs 4-field vs "--" triples, "-unknown-" env ---
    (H906, "hip-amdgcn-amd-amdhsa-gfx906", F),
    ("hip-amdgcn-amd-amdhsa-gfx906", H906, F),
    ("hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa-gfx906", F),
    (H906, "hip-amdgcn-amd-amdhsa-unknown-gfx906", F),
    ("hip-amdgcn-amd-amdhsa-unknown-gfx906", H906, F),
    ("hip-amdgcn-amd-amdhsa-unknown-gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906", F),
    ("hip-amdgcn-amd-amdhsa-gnu-gfx906", H906, F),
    (H906, "hip-amdgcn-amd-amdhsa-gnu-gfx906", F),
    (NV70, "openmp-nvptx64-nvidia-cuda-unknown-sm_70", F),
    ("openmp-nvptx64-nvidia-cuda-unknown-sm_70", NV70, F),
    (NV70, "openmp-nvptx64-nvidia-cuda-sm_70", F),
    ("openmp-nvptx64-nvidia-cuda-sm_70", NV70, F),
    ("openmp-nvptx64-nvidia-cuda-sm_70-", "openmp-nvptx64-nvidia-cuda-sm_70", F),
    ("openmp-nvptx64-nvidia-cuda", "openmp-nvptx64-nvidia-cuda", F),
    ("openmp-nvptx64-nvidia-cuda", "openmp-nvptx64-nvidia-cuda--", F),
    ("openmp-nvptx64-nvidia-cuda--", "openmp-nvptx64-nvidia-cuda", F),
    ("openmp-nvptx64-nvidia-cuda--", "openmp-nvptx64-nvidia-cuda--", F),
    ("openmp-nvptx64-nvidia-cuda-unknown-", "openmp-nvptx64-nvidia-cuda--", F),
    (NV70, "openmp-nvptx64-nvidia-cuda--", F),
    ("openmp-nvptx64-nvidia-cuda--", NV70, F),
    ("openmp-amdgcn-amd-amdhsa-gnu-gfx906", O906, F),
    (O906, "openmp-amdgcn-amd-amdhsa-gnu-gfx906", F),
    ("openmp-amdgcn-amd-amdhsa-unknown-gfx906", O906, F),
    ("hip-amdgcn-amd-amdhsa--", "hip-amdgcn-amd-amdhsa--", F),
    ("hip-amdgcn-amd-amdhsa--hip-amdgcn-amd-amdhsa--", "hip-amdgcn-amd-amdhsa--", F),
    (H906, "hip-amdgcn-amd-amdhsa--", F),
    ("hip-amdgcn-amd-amdhsa--", H906, F),
    ("hip-amdgcn-amd-amdhsa--gfx906-extra", "hip-amdgcn-amd-amdhsa--gfx906-extra", F),
    ("hip-amdgcn-amd-amdhsa--", "hip-amdgcn-amd-amdhsa--gfx906-extra", F),
    # --- host entries (14/16 style: no trailing dash; 19/22 style: trailing dash) ---
    (HOST, HOST + "-", F),
    (HOST + "-", HOST, F),
    ("host-x86_64-unknown-linux-", "host-x86_64-unknown-linux-", F),
    ("host-x86_64-unknown-linux-unknown-", "host-x86_64-unknown-linux-", F),
    ("host-x86_64-unknown-linux-unknown-", "host-x86_64-unknown-linux", F),
    ("host-x86_64-unknown-linux--host-x86_64-unknown-linux-", "host-x86_64-unknown-linux-", F),
    (HOST + "-", "host-x86_64-linux-gnu-", F),
    (HOST, "host-x86_64-linux-gnu", F),
    (HOST, "host-x86_64-pc-linux-gnu", F),
    ("host-x86_64-pc-linux-gnu", HOST, F),
    (HOST, "host-x86_64-unknown-linux-musl", F),
    (HOST, "host-x86_64-unknown-linux", F),
    ("host-x86_64-unknown-linux", HOST, F),
    ("host-aarch64-unknown-linux-gnu", HOST, F),
    (HOST, "host-x86_64-unknown-windows-msvc", F),
    ("openmp-x86_64-pc-linux-gnu", "openmp-x86_64-pc-linux-gnu-", F),
    ("openmp-x86_64-pc-linux-gnu-", "openmp-x86_64-pc-linux-gnu", F),
    ("openmp-x86_64-pc-linux-gnu", "openmp-x86_64-unknown-linux-gnu", F),
    # --- target-ID features (Any / On / Off) ---
    (H906, H906 + ":xnack+", F),
    (H906, H906 + ":xnack-", F),
    (H906, H906 + ":sramecc+:xnack-", F),
    (H906 + ":xnack+", H906, F),
    (H906 + ":xnack+", H906 + ":xnack-", F),
    (H906 + ":xnack+", H906 + ":xnack+:sramecc+", F),
    (HA + ":xnack+", HA, F),
    (HA + ":xnack+", HA + ":xnack+", F),
    (HA + ":xnack+", HA + ":xnack+:sramecc+", F),
    (HA + ":xnack+", HA + ":sramecc+:xnack+", F),
    (HA + ":xnack+", HA + ":xnack-", F),
    (HA + ":xnack+", HA + ":sramecc-:xnack+", F),
    (HA + ":xnack+:sramecc-", HA + ":sramecc-:xnack+", F),
    (HA + ":sramecc-:xnack+", HA + ":xnack+:sramecc-", F),
    (HA + ":xnack+:sramecc-", HA + ":xnack+", F),
    (HA + ":sramecc+", HA + ":sramecc+:xnack-", F),
    (HA, HA + ":xnack+:sramecc+", F),
    (H4A + ":xnack+", HA + ":xnack+:sramecc+", F),
    ("hip-amdgcn-amd-amdhsa--gfx1030", "hip-amdgcn-amd-amdhsa--gfx1030:xnack+", F),
    ("hip-amdgcn-amd-amdhsa--gfx1030:xnack+", "hip-amdgcn-amd-amdhsa--gfx1030:xnack+", F),
    (H906, H906 + ":foo+", F),
    (H906 + ":foo+", H906 + ":foo+", F),
    (H906 + ":xnack", H906 + ":xnack", F),
    (H906 + ":xnack", H906 + ":xnack+", F),
    (H906 + ":xnack+:xnack+", H906 + ":xnack+", F),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx9-generic:xnack+", F),
    (O906, O906 + ":xnack+", F),
    (NV70, NV70 + ":xnack+", F),
    # --- processors: differences, aliases, generic, unknown ---
    (H906, "hip-amdgcn-amd-amdhsa--gfx908", F),
    ("hip-amdgcn-amd-amdhsa--gfx803", "hip-amdgcn-amd-amdhsa--fiji", F),
    ("hip-amdgcn-amd-amdhsa--fiji", "hip-amdgcn-amd-amdhsa--gfx803", F),
    ("hip-amdgcn-amd-amdhsa--fiji", "hip-amdgcn-amd-amdhsa--fiji", F),
    ("hip-amdgcn-amd-amdhsa--polaris10", "hip-amdgcn-amd-amdhsa--fiji", F),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", H906, F),
    (H906, "hip-amdgcn-amd-amdhsa--gfx9-generic", F),
    ("hip-amdgcn-amd-amdhsa--gfx9999", "hip-amdgcn-amd-amdhsa--gfx9999", F),
    ("hip-amdgcn-amd-amdhsa--gfx9999", H906, F),
    ("hip-amdgcn-amd-amdhsa--gfx9999", "hip-amdgcn-amd-amdhsa--", F),
    (NV70, "openmp-nvptx64-nvidia-cuda--sm_75", F),
    ("openmp-nvptx64-nvidia-cuda--sm_75", NV70, F),
    ("openmp-x86_64-pc-linux-gnu--foo", "openmp-x86_64-pc-linux-gnu--foo", F),
    ("openmp-x86_64-pc-linux-gnu--foo", "openmp-x86_64-pc-linux-gnu", F),
    ("openmp-x86_64-pc-linux-gnu-", "openmp-x86_64-pc-linux-gnu--foo", F),
    ("openmp-x86_64-pc-linux-gnu--foo-", "openmp-x86_64-pc-linux-gnu--foo", F),
    ("openmp-x86_64-pc-linux-gnu--gfx906", "openmp-x86_64-pc-linux-gnu--gfx906", F),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv", F),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", H906, F),
    # --- vendor / os / arch differences ---
    (H906, "hip-amdgcn-unknown-amdhsa--gfx906", F),
    ("hip-amdgcn-unknown-amdhsa--gfx906", H906, F),
    (H906, "hip-amdgcn-amd-amdpal--gfx906", F),
    (NV70, "openmp-nvptx64-unknown-cuda--sm_70", F),
    (NV70, "openmp-nvptx-nvidia-cuda--sm_70", F),
    ("openmp-nvptx64-nvidia-cuda--sm_70", "openmp-nvptx64-nvidia-unknown--sm_70", F),
    # --- capitals ---
    ("HIP-amdgcn-amd-amdhsa--gfx906", H906, F),
    ("hip-AMDGCN-amd-amdhsa--gfx906", H906, F),
    ("hip-amdgcn-AMD-AMDHSA--gfx906", H906, F),
    ("hip-amdgcn-amd-amdhsa--GFX906", H906, F),
    (H906, "hip-amdgcn-amd-amdhsa--GFX906", F),
    (H906, "HIP-amdgcn-amd-amdhsa--gfx906", F),
    (H906, "hip-AMDGCN-amd-amdhsa--gfx906", F),
    # --- odd entries ---
    ("cuda-nvptx64-nvidia-cuda--sm_70", NV70, F),
    ("openmp-nvptx64----", "openmp-nvptx64", F),
    ("", H906, F),
    # --- added after a first run: unknown-vs-unknown, 19 double-normalisation,
    #     22 env-as-processor collapse ---
    ("hip-amdgcn-amd-amdhsa--gfx9999", "hip-amdgcn-amd-amdhsa--fiji", F),
    (HOST + "-" + HOST + "-", HOST + "-", F),
    (HOST + "-" + HOST + "-", HOST, F),
    ("hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx10-3-generic", F),
    ("hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa-gfx908", F),
    ("hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--", F),
    ("hip-amdgcn-amd-amdhsa-gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", F),
    ("openmp-nvptx64-nvidia-cuda-sm_70", "openmp-nvptx64-nvidia-cuda-sm_75", F),
    ("openmp-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a", T),
    ("openmp-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", T),
    (H906, H906 + ":xnack", F),
    (H906, H906 + ":xnack+:xnack-", F),
    ("openmp-x86_64-pc-linux-gnu-unknown-extra", "openmp-x86_64-pc-linux-gnu", F),
]


# ---------------------------------------------------------------------------
def bundler(version, root):
    return os.path.join(root, "llvm-%s" % version, "bin", "clang-offload-bundler")


def io_args(version, inputs, output):
    if version in ("13", "14"):
        return ["-inputs=" + ",".join(inputs), "-outputs=" + output]
    return ["-input=" + i for i in inputs] + ["-output=" + output]


def run(argv, cwd):
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env.pop("OFFLOAD_BUNDLER_COMPRESS", None)
    env.pop("OFFLOAD_BUNDLER_VERBOSE", None)
    p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=TIMEOUT)
    rc = p.returncode
    if rc < 0:  # killed by a signal: report like a shell would
        rc = 128 - rc
    return rc, p.stdout, p.stderr.decode("utf-8", "replace")


def error_message(stderr, argv0):
    """First error line, with '<argv0>: error: ' (or the cl-parser prefix
    'clang-offload-bundler: ') removed."""
    # the full path of the bundler also appears inside some messages
    # ("Try: '<argv0> --help'"): replace it to keep the output path-independent
    stderr = stderr.replace(argv0, "clang-offload-bundler")
    argv0 = "clang-offload-bundler"
    lines = [l for l in stderr.splitlines() if l.strip()]
    prefixes = [argv0 + ": error: "]
    for l in lines:
        for p in prefixes:
            if l.startswith(p):
                return l[len(p):]
    # no 'error:' line: cl::opt parser errors and crashes
    for l in lines:
        if l.startswith(argv0 + ": "):
            return l[len(argv0) + 2:]
    return lines[0] if lines else ""


def parse_bundle(data):
    if data[:24] != MAGIC:
        raise ValueError("no bundle magic (first bytes %s)" % data[:24].hex())
    (n,) = struct.unpack_from("<Q", data, 24)
    p = 32
    out = []
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", data, p)
        p += 24
        ident = data[p:p + idlen].decode("utf-8", "surrogateescape")
        p += idlen
        out.append((ident, data[off:off + size]))
    return out


def make_bundle(entry_id, payload):
    idb = entry_id.encode()
    header = MAGIC + struct.pack("<Q", 1)
    hdr_len = len(header) + 24 + len(idb)
    return header + struct.pack("<QQQ", hdr_len, len(payload), len(idb)) + idb + payload


def written_one(version, root, target, mode):
    exe = bundler(version, root)
    with tempfile.TemporaryDirectory(prefix="idvec-") as d:
        if mode == "hostfirst":
            targets = [target, HIP_COMPANION]
            contents = [DEVICE_CONTENT, HOST_CONTENT]
        elif mode == "alone":
            targets = [target]
            contents = [DEVICE_CONTENT]
        else:
            targets = [HOST, target]
            contents = [HOST_CONTENT, DEVICE_CONTENT]
        names = []
        for i, c in enumerate(contents):
            name = "in%d" % i
            with open(os.path.join(d, name), "wb") as f:
                f.write(c)
            names.append(name)
        argv = [exe, "-type=bc", "-targets=" + ",".join(targets)] + io_args(version, names, "o")
        rc, _, err = run(argv, d)
        if rc != 0:
            return {"error": error_message(err, exe), "rc": rc}
        with open(os.path.join(d, "o"), "rb") as f:
            data = f.read()
        entries = parse_bundle(data)
        ids = [e for e, payload in entries if payload == DEVICE_CONTENT]
        if len(ids) == 1:
            return {"id": ids[0]}
        # should not happen; keep the information so it can be inspected
        return {"id": None, "all_ids": [e for e, _ in entries]}


def match_one(version, root, entry, request, hoc):
    exe = bundler(version, root)
    with tempfile.TemporaryDirectory(prefix="idvec-") as d:
        with open(os.path.join(d, "b"), "wb") as f:
            f.write(make_bundle(entry, PAYLOAD))
        argv = [exe, "-type=bc", "-unbundle", "-targets=" + request] + io_args(version, ["b"], "out")
        if hoc:
            argv.append("-hip-openmp-compatible")
        rc, _, err = run(argv, d)
        out_path = os.path.join(d, "out")
        out = None
        if os.path.exists(out_path):
            with open(out_path, "rb") as f:
                out = f.read()
        if rc == 0:
            if out == PAYLOAD:
                return True
            return {"error": "rc 0 but output is %r" % (out,), "rc": 0}
        msg = error_message(err, exe)
        if msg.startswith("Can't find bundles for "):
            return False
        return {"error": msg, "rc": rc}


def version_line(version, root):
    rc, out, err = run([bundler(version, root), "--version"], "/")
    text = out.decode("utf-8", "replace") + err
    for l in text.splitlines():
        if "version" in l:
            return l.strip()
    return text.strip()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llvm-root", default="/usr/lib")
    ap.add_argument("--out", default=os.path.join(repo, "tests", "data", "llvm-id-vectors.json"))
    ap.add_argument("-j", "--jobs", type=int, default=8)
    args = ap.parse_args()

    # sanity: no duplicated vectors
    wkeys = [(t, m if m != "auto" else ("hostfirst" if t.startswith("host-") else "host")) for t, m in WRITTEN]
    assert len(set(wkeys)) == len(wkeys), "duplicate written vector"
    assert len(set(MATCH)) == len(MATCH), "duplicate match vector"

    result = {
        "generated_by": "tools/gen-id-vectors.py",
        "llvm": {v: version_line(v, args.llvm_root) for v in VERSIONS},
        "written": [],
        "match": [],
    }

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        wfut = []
        for t, m in wkeys:
            futs = {v: ex.submit(written_one, v, args.llvm_root, t, m) for v in VERSIONS}
            wfut.append((t, m, futs))
        mfut = []
        for e, r, h in MATCH:
            futs = {v: ex.submit(match_one, v, args.llvm_root, e, r, h) for v in VERSIONS}
            mfut.append((e, r, h, futs))

        for t, m, futs in wfut:
            if m == "hostfirst":
                tl = [t, HIP_COMPANION]
            elif m == "alone":
                tl = [t]
            else:
                tl = [HOST, t]
            item = {"target": t, "targets": ",".join(tl)}
            for v in VERSIONS:
                item[v] = futs[v].result()
            result["written"].append(item)
        for e, r, h, futs in mfut:
            item = {"entry": e, "request": r, "hip_openmp_compatible": h}
            for v in VERSIONS:
                item[v] = futs[v].result()
            result["match"].append(item)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print("wrote %s: %d written, %d match vectors"
          % (args.out, len(result["written"]), len(result["match"])), file=sys.stderr)


if __name__ == "__main__":
    main()

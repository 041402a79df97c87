#!/usr/bin/env python3
"""Generate the conformance corpus: conformance/corpus/**/*.json.

Three sources, one case format (conformance/README.md):

* hand-written cases below, translated in spirit from LLVM's
  clang/test/Driver/clang-offload-bundler*.c and from
  shared/research/llvm-behaviour-matrix.md sections 1-3 and 7 (the malformed
  inputs of shared/research/malformed/*.bin are rebuilt from recipes or
  embedded as hex);
* parse-id cases from the "written" vectors of tests/data/llvm-id-vectors.json;
* compatible cases from its "match" vectors.

Expectations are the spec's. For the vector cases the spec verdict comes
from offload-kit's strict layer (`offload-kit conformance spec ...`) and was
reviewed; each LLVM release's recorded behaviour that differs from it (after
the release's ID spelling) becomes a `known_divergence` note. Notes of the
hand-written cases are written out below, each with the research section
that documents it.

Usage: cargo build --release && python3 tools/gen-conformance-corpus.py
       [--offload-kit target/release/offload-kit]

The output is deterministic; the directory is rewritten (stale files removed).
Only the Python standard library is used.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "conformance", "corpus")
ALL = [14, 16, 19, 22]

HOST = "host-x86_64-unknown-linux-gnu"
HOST2 = "host-aarch64-unknown-linux-gnu"
GFX906 = "hip-amdgcn-amd-amdhsa--gfx906"
GFX908 = "hip-amdgcn-amd-amdhsa--gfx908"
GFX908X = "hip-amdgcn-amd-amdhsa--gfx908:xnack+"
GFX90AX = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
HIPV4_90AX = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
SM70 = "openmp-nvptx64-nvidia-cuda--sm_70"
OMP906 = "openmp-amdgcn-amd-amdhsa--gfx906"

MATRIX = "shared/research/llvm-behaviour-matrix.md"
FORMATS = "shared/research/llvm-formats.md"
LLVM_TEST = "clang/test/Driver/clang-offload-bundler.c"

CASES = {}


def W(t):
    """An ID spelled as the implementation's release writes target t."""
    return {"written": t}


def u(s):
    return {"utf8": s}


def hx(b):
    return {"hex": b.hex()}


def entry(id_, payload="", **over):
    e = {"id": id_, "payload": payload if isinstance(payload, dict) else u(payload)}
    e.update(over)
    return e


def bundle(entries, **kw):
    b = {"entries": entries}
    b.update(kw)
    return {"bundle": b}


def note(releases, rule, outcome, text, profile=False, ref=None):
    n = {"releases": list(releases), "rule": rule, "outcome": outcome, "note": text}
    if profile:
        n["profile"] = True
    if ref:
        n["ref"] = ref
    return n


def case(path, title, rules, op, args=None, inputs=None, expect=None, notes=(), source=None):
    assert path not in CASES, path
    c = {"$schema": "../../case.schema.json" if path.count("/") == 1 else "../../../case.schema.json",
         "title": title}
    if source:
        c["source"] = source
    c["rules"] = rules
    if inputs:
        c["inputs"] = inputs
    c["op"] = op
    if args:
        c["args"] = args
    c["expect"] = expect
    if notes:
        c["known_divergence"] = list(notes)
    CASES[path] = c


# ---------------------------------------------------------------------------
# A small bundle builder (for expected bytes of tampered files).
# ---------------------------------------------------------------------------

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def build(entries, align=1):
    """entries: [(id bytes, payload bytes)] -> bundle bytes (BIN-11 layout)."""
    hsize = 32 + sum(24 + len(i) for i, _ in entries)
    cur = hsize
    offs = []
    for _, p in entries:
        cur = (cur + align - 1) // align * align
        offs.append(cur)
        cur += len(p)
    h = bytearray(MAGIC + struct.pack("<Q", len(entries)))
    for (i, p), o in zip(entries, offs):
        h += struct.pack("<QQQ", o, len(p), len(i)) + i
    out = bytearray(h)
    for (i, p), o in zip(entries, offs):
        out += b"\0" * (o - len(out)) + p
    return bytes(out)


GOOD = build([(b"host-x86_64-unknown-linux-gnu-", b"HOSTDATA"), (GFX906.encode(), b"DEVDATA")])
GOOD14 = build([(HOST.encode(), b"HOSTDATA"), (GFX906.encode(), b"DEVDATA")])
assert GOOD.hex() == (
    "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f02000000000000008b000000000000000800000000"
    "0000001e00000000000000686f73742d7838365f36342d756e6b6e6f776e2d6c696e75782d676e752d93000000"
    "0000000007000000000000001d000000000000006869702d616d6467636e2d616d642d616d646873612d2d6766"
    "78393036484f53544441544144455644415441")
IDLEN0 = bytes.fromhex(
    "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f02000000000000006d0000000000000008000000000"
    "000000000000000000000750000000000000007000000000000001d000000000000006869702d616d6467636e2d"
    "616d642d616d646873612d2d676678393036484f53544441544144455644415441")


def patched(b, at, raw):
    b = bytearray(b)
    b[at:at + len(raw)] = raw
    return bytes(b)


# ---------------------------------------------------------------------------
# Bundling
# ---------------------------------------------------------------------------

HD = {"host": u("HOSTDATA"), "dev": u("DEVDATA")}


def bundling():
    case("bundle/host-hip", "Bundle a host and a HIP input: header, then payloads in -targets order",
         ["BIN-11", "CLI-1"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD, {"bundle": {}},
         source=f"{LLVM_TEST} (CK-BC round trip); {MATRIX} §1.1")
    case("bundle/good-bin-bytes", "The bytes of research good.bin (154 B, host ID with the empty environment field)",
         ["BIN-1", "BIN-11", "ID-4"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD, {"outputs": [hx(GOOD)]},
         [note([14, 16], "ID-4", {"outputs": [hx(GOOD14)]},
               "14 and 16 write the -targets text verbatim ('host-x86_64-unknown-linux-gnu', 153 B)",
               profile=True, ref=f"{MATRIX} §1.1, §1.3")],
         source=f"{MATRIX} §1.1")
    case("bundle/three-entries", "Worked example: three entries, offsets 199/207/211",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906, GFX908X], "inputs": ["h", "d1", "d2"]},
         {"h": u("HOSTDATA"), "d1": u("DEV1"), "d2": u("DEVICE22")}, {"bundle": {}},
         source=f"{FORMATS} §1.1")
    case("bundle/host-not-first", "Entries keep -targets order; the host is not moved first",
         ["BIN-11", "BIN-12"], "bundle",
         {"targets": [GFX906, HOST, SM70], "inputs": ["a", "b", "c"]},
         {"a": u("DEVICE-A"), "b": u("HOST-B"), "c": u("OPENMP-C")}, {"bundle": {}},
         source=f"{LLVM_TEST} (CK-TEXTS-UNORDERED, binary variant); {MATRIX} §1.2")
    for al in [1, 2, 3, 7, 16, 64, 4096]:
        case(f"bundle/align-{al}", f"-bundle-align={al}: every payload at the next multiple of {al}, zero padding, no trailing pad",
             ["BIN-11", "BIN-9"], "bundle",
             {"targets": [HOST, GFX906, GFX908X], "inputs": ["h", "d1", "d2"], "bundle_align": al},
             {"h": u("HOSTDATA"), "d1": u("DEV1"), "d2": u("DEVICE22")}, {"bundle": {}},
             source=f"{LLVM_TEST} (-bundle-align); {MATRIX} §1.2")
    short = build([(HOST.encode(), b"HOSTDATA"), (GFX906.encode(), b"")], 16)
    assert len(short) == 160
    case("bundle/align-empty-last-entry", "-bundle-align=16 with an empty last input: the padding before it is written",
         ["BIN-11", "BIN-5"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "empty"], "bundle_align": 16},
         {"host": u("HOSTDATA"), "empty": u("")}, {"bundle": {}},
         [note([14, 16], "BIN-5", {"outputs": [hx(short[:152])]},
               "14 and 16 stop after the last non-empty payload: the empty entry's offset (160) lies past the end of "
               "the 152-byte file, and reading that bundle back crashes 14 and 16 (SIGSEGV); the 14/16 profiles "
               "reproduce the bytes (byte identity)", profile=True,
               ref="found by offload-kit conformance --random 100 --seed 42 (minimal case: bundle/align-empty-only-entry)")],
         source="offload-kit conformance --random")
    case("bundle/align-empty-only-entry", "-bundle-align=7 with a single empty input (minimal reproducer from --random)",
         ["BIN-11", "BIN-5"], "bundle",
         {"targets": [GFX908X], "inputs": ["empty"], "bundle_align": 7}, {"empty": u("")}, {"bundle": {}},
         [note([14, 16], "BIN-5", "success",
               "14 and 16 write only the header: the entry's offset lies past the end of the file (the 14/16 "
               "profiles reproduce the bytes)", profile=True, ref="offload-kit conformance --random 100 --seed 42")],
         source="offload-kit conformance --random 100 --seed 42 (shrunk)")
    case("bundle/align-0", "-bundle-align=0 is refused (alignment must be at least 1)",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "bundle_align": 0}, HD, {"fail": "BIN-11"},
         [note(ALL, "BIN-11", "crash", "division by zero in alignTo: SIGFPE (C1)", ref=f"{MATRIX} §1.2, §7 C1")])
    case("bundle/empty-inputs", "Empty inputs give zero-size entries placed at the end of the header",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["e1", "e2"]}, {"e1": u(""), "e2": u("")}, {"bundle": {}},
         source=f"{MATRIX} §1.2")
    for t in ["gch", "ast"]:
        case(f"bundle/type-{t}", f"-type={t} writes the same binary format as bc",
             ["BIN-1", "BIN-11"], "bundle",
             {"type": t, "targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD, {"bundle": {}},
             source=f"{MATRIX} §1.2")
    case("bundle/hip-only", "A HIP-only bundle needs no host entry",
         ["CLI-3", "BIN-11"], "bundle",
         {"targets": [GFX906, GFX908], "inputs": ["a", "b"]}, {"a": u("GFX906"), "b": u("GFX908")}, {"bundle": {}},
         source=f"{FORMATS} §5.2")
    case("bundle/openmp-without-host", "Bundling OpenMP code objects requires exactly one host target",
         ["CLI-3"], "bundle",
         {"targets": [SM70], "inputs": ["dev"]}, HD, {"fail": "CLI-3"},
         source=f"{LLVM_TEST} (CK-ERR: expecting exactly one host target but got 0)")
    case("bundle/two-hosts", "Two host targets are refused",
         ["CLI-3", "BIN-13"], "bundle",
         {"targets": [HOST, HOST2, GFX906], "inputs": ["host", "host", "dev"]}, HD, {"fail": "CLI-3"},
         source=f"{MATRIX} §1.3, §3.6")
    case("bundle/duplicate-targets", "The same target twice is refused",
         ["CLI-3", "BIN-8"], "bundle",
         {"targets": [HOST, GFX906, GFX906], "inputs": ["host", "dev", "dev"]}, HD, {"fail": "CLI-3"},
         source=f"{LLVM_TEST} (CK-ERR: Duplicate targets are not allowed)")
    case("bundle/ids-collapse-under-22", "Five-field IDs naming a processor are ambiguous (LLVM 22 writes both as hip-amdgcn-amd-amdhsa--)",
         ["ID-5", "BIN-8"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa-gfx908"], "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("GFX906"), "b": u("GFX908")}, {"fail": "ID-5"},
         [note([14, 16, 19], "ID-5", {"bundle": {}}, "14/16 write the IDs verbatim, 19 inserts the empty environment: both readable",
               profile=True, ref=f"{MATRIX} §1.3"),
          note([22], "BIN-8", "success",
               "LLVM 22 drops the processor of both targets, writes two entries under one ID and corrupts the header (data loss)",
               ref=f"{FORMATS} §5.1, §9.2.1"),
          note([22], "BIN-8", {"fail": "BIN-8"},
               "the LLVM 22 profile reproduces the collapse and refuses to write the corrupt bundle", profile=True)])
    case("bundle/conflicting-target-ids", "gfx90a (xnack Any) and gfx90a:xnack+ in one bundle violate the composition rule",
         ["COMPOSE-1", "COMPAT-3"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx90a", GFX90AX], "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("ANY"), "b": u("XNACKON")}, {"fail": "COMPOSE-1"},
         [note([14], "COMPOSE-1", {"bundle": {}}, "14 has no composition check", profile=True, ref=f"{MATRIX} §3.6")],
         source=f"{MATRIX} §3.6")
    case("bundle/conflict-one-directional", "{gfx906:sramecc+:xnack+, gfx906:xnack+}: sramecc is Any in one entry only",
         ["COMPOSE-1"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"],
          "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("BOTH"), "b": u("XNACK")}, {"fail": "COMPOSE-1"},
         [note(ALL, "COMPOSE-1", {"bundle": {}},
               "getConflictTargetIDCombination only checks one direction (sorted set, first ID per processor kept)",
               profile=True, ref=f"{FORMATS} §5.4, §9.1.8")])
    case("bundle/inputs-targets-mismatch", "Bundling needs one input per target",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host"]}, HD, {"fail": "CLI-1"},
         source=f"{LLVM_TEST} (CK-ERR: number of input files and targets should match)")
    case("bundle/two-outputs", "Bundling writes exactly one output",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "outputs": 2}, HD,
         {"fail": "CLI-1"}, source=f"{MATRIX} §3.6")
    case("bundle/no-output", "Bundling without an output is refused",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "outputs": 0}, HD,
         {"fail": "CLI-1"}, source=f"{MATRIX} §3.6")
    case("bundle/no-targets", "Bundling without -targets is refused",
         ["CLI-1"], "bundle", {"targets": [], "inputs": ["host"]}, HD,
         {"fail": "CLI-1"}, source=f"{MATRIX} §3.6")
    case("bundle/unknown-kind", "'cuda' is not an offload kind",
         ["ID-2"], "bundle", {"targets": [HOST, "cuda-nvptx64-nvidia-cuda--sm_70"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-2"}, source=f"{MATRIX} §1.3")
    case("bundle/kind-case-sensitive", "'HIP' is not an offload kind (case-sensitive)",
         ["ID-2"], "bundle", {"targets": [HOST, "HIP-amdgcn-amd-amdhsa--gfx906"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-2"}, source=f"{FORMATS} §5.1")
    case("bundle/unknown-arch", "'bogus' is not a known architecture",
         ["ID-3"], "bundle", {"targets": [HOST, "openmp-bogus-unknown-linux-gnu"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-3"}, source=f"{MATRIX} §1.3")
    case("bundle/host-with-target-id", "A host entry carries no target ID",
         ["ID-6"], "bundle", {"targets": ["host-x86_64-unknown-linux-gnu--gfx906", GFX906], "inputs": ["host", "dev"]},
         HD, {"fail": "ID-6"},
         [note(ALL, "ID-6", "success", "no release checks the host entry's target ID (22 drops it, others keep it)",
               profile=True, ref="tests/data/llvm-id-vectors.json")])
    case("bundle/unknown-processor", "gfx9999 is not a processor of amdgcn",
         ["TID-3"], "bundle", {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx9999"], "inputs": ["host", "dev"]},
         HD, {"fail": "TID-3"},
         [note(ALL, "TID-3", "success",
               "no release validates processors when bundling (22 drops the unknown one: hip-amdgcn-amd-amdhsa--)",
               profile=True, ref=f"{MATRIX} §1.3")])
    case("bundle/feature-without-sign", "gfx906:xnack lacks the +/- of a feature",
         ["TID-1"], "bundle", {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx906:xnack"], "inputs": ["host", "dev"]},
         HD, {"fail": "TID-1"},
         [note(ALL, "TID-1", "success", "target IDs are written without a format check", profile=True,
               ref="tests/data/llvm-id-vectors.json")])
    case("bundle/feature-repeated", "xnack given twice",
         ["TID-2"], "bundle", {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx906:xnack+:xnack-"], "inputs": ["host", "dev"]},
         HD, {"fail": "TID-2"},
         [note(ALL, "TID-2", "success", "target IDs are written without a format check", profile=True,
               ref="tests/data/llvm-id-vectors.json")])
    case("bundle/features-order", "Features are written in canonical (alphabetical) order",
         ["TID-4", "ID-4"], "bundle",
         {"targets": [HOST, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-"], "inputs": ["host", "dev"]}, HD,
         {"bundle": {}}, source=f"{MATRIX} §1.3 (LLVM keeps the given order: the release spelling)")
    case("bundle/nvptx-environment", "A non-AMDHSA triple is written with four components (unknown environment)",
         ["ID-4"], "bundle", {"targets": [HOST, SM70], "inputs": ["host", "dev"]}, HD, {"bundle": {}},
         source=f"{MATRIX} §1.3")
    case("bundle/amdhsa-environment", "An AMDHSA triple is written with an empty environment",
         ["ID-4"], "bundle", {"targets": [HOST, "openmp-amdgcn-amd-amdhsa-gnu-gfx906"], "inputs": ["host", "dev"]},
         HD, {"bundle": {}}, source=f"{MATRIX} §1.3")
    case("bundle/missing-input-file", "A missing input fails and leaves no output",
         ["CLI-5"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "nothere"]},
         {"host": u("HOSTDATA"), "nothere": {"missing": True}}, {"fail": "*", "no_outputs": True},
         [note([14, 16], "CLI-5", "failure", "14 and 16 create the output before reading the inputs (0-byte file left)",
               ref=f"{MATRIX} §3.6")])
    case("bundle/invalid-type", "An unknown -type fails and leaves no output",
         ["CLI-5"], "bundle", {"type": "xyz", "targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD,
         {"fail": "*", "no_outputs": True},
         [note([14, 16], "CLI-5", "failure", "14 and 16 leave a 0-byte output", ref=f"{MATRIX} §3.6")])
    case("bundle/negative-align", "-bundle-align=-1 is not an alignment",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "bundle_align": 18446744073709551615}, HD,
         {"fail": "BIN-11"}, source=f"{MATRIX} §1.2 (value invalid for uint argument)")


# ---------------------------------------------------------------------------
# Unbundling
# ---------------------------------------------------------------------------

def std_bundle(*extra, align=1):
    return bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), "DEVDATA")] + list(extra), align=align)


def unbundling():
    ins = {"fat": std_bundle()}
    case("unbundle/round-trip", "Unbundle what the release bundles: each output gets its payload",
         ["CLI-2", "BIN-12"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]}, ins,
         {"outputs": [u("HOSTDATA"), u("DEVDATA")]}, source=f"{LLVM_TEST} (CK-BC round trip)")
    case("unbundle/device-only", "Unbundling a device target alone needs no host target",
         ["CLI-3", "CLI-2"], "unbundle", {"targets": [GFX906], "inputs": ["fat"]}, ins,
         {"outputs": [u("DEVDATA")]}, source=f"{MATRIX} §3.3")
    case("unbundle/reverse-order", "Requests in another order than the entries",
         ["CLI-2"], "unbundle", {"targets": [GFX906, HOST], "inputs": ["fat"]}, ins,
         {"outputs": [u("DEVDATA"), u("HOSTDATA")]})
    four = {"fat": bundle([entry(W(SM70), "SM70"), entry(W(HIPV4_90AX), "GFX90A"), entry(W(HOST), "HOST"),
                           entry(W(GFX906), "GFX906")])}
    case("unbundle/three-of-four", "Three of four entries, in another order",
         ["CLI-2", "CLI-4"], "unbundle", {"targets": [GFX906, SM70, HOST], "inputs": ["fat"]}, four,
         {"outputs": [u("GFX906"), u("SM70"), u("HOST")]}, source=f"{MATRIX} §3.1")
    case("unbundle/all-four", "All four entries of the §3.1 bundle",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906, HIPV4_90AX, SM70], "inputs": ["fat"]}, four,
         {"outputs": [u("HOST"), u("GFX906"), u("GFX90A"), u("SM70")]}, source=f"{MATRIX} §3.1")
    miss = "hip-amdgcn-amd-amdhsa--gfx908"
    case("unbundle/missing-one", "A requested target that is not in the bundle",
         ["CLI-4"], "unbundle", {"targets": [HOST, GFX906, miss], "inputs": ["fat"]}, ins, {"fail": "CLI-4"},
         source=f"{LLVM_TEST} (Can't find bundles for); {MATRIX} §3.4")
    case("unbundle/missing-leaves-no-output", "A failed unbundling writes none of its outputs",
         ["CLI-5", "CLI-4"], "unbundle", {"targets": [HOST, GFX906, miss], "inputs": ["fat"]}, ins,
         {"fail": "CLI-4", "no_outputs": True},
         [note(ALL, "CLI-5", {"fail": "CLI-4"}, "outputs found before the error are still written",
               ref=f"{FORMATS} §1.3, {MATRIX} §3.2")])
    case("unbundle/missing-two", "Two missing targets",
         ["CLI-4"], "unbundle",
         {"targets": [HOST, miss, "openmp-nvptx64-nvidia-cuda--sm_80"], "inputs": ["fat"]}, ins, {"fail": "CLI-4"},
         source=f"{MATRIX} §3.4")
    case("unbundle/missing-three", "Three missing targets",
         ["CLI-4"], "unbundle",
         {"targets": [miss, "openmp-nvptx64-nvidia-cuda--sm_80", "hip-amdgcn-amd-amdhsa--gfx1030"], "inputs": ["fat"]},
         ins, {"fail": "CLI-4"}, source=f"{MATRIX} §3.4")
    case("unbundle/allow-missing", "-allow-missing-bundles: a missing target gets an empty output",
         ["CLI-4"], "unbundle",
         {"targets": [HOST, GFX906, miss], "inputs": ["fat"], "allow_missing_bundles": True}, ins,
         {"outputs": [u("HOSTDATA"), u("DEVDATA"), u("")]}, source=f"{LLVM_TEST} (-allow-missing-bundles)")
    devonly = {"fat": bundle([entry(W(GFX906), "DEVDATA")])}
    case("unbundle/allow-missing-host-absent", "-allow-missing-bundles with the host missing and a device found",
         ["CLI-4"], "unbundle",
         {"targets": [HOST, GFX906], "inputs": ["fat"], "allow_missing_bundles": True}, devonly,
         {"outputs": [u(""), u("DEVDATA")]},
         [note([14], "CLI-4", {"fail": "CLI-4"}, "14 still fails: Can't find bundle for the host target", profile=True,
               ref=f"{MATRIX} §3.4, §8.6")])
    case("unbundle/host-absent", "The host is requested but the bundle has none",
         ["CLI-4"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]}, devonly, {"fail": "CLI-4"},
         source=f"{MATRIX} §3.4")
    plain = {"plain": u("not a bundle at all\n")}
    case("unbundle/not-a-bundle", "An input without the magic holds none of the targets",
         ["CLI-4", "BIN-1"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["plain"]}, plain, {"fail": "CLI-4"},
         source=f"{MATRIX} §3.4")
    case("unbundle/not-a-bundle-allow-missing", "A non-bundle with -allow-missing-bundles: the host output is the input",
         ["CLI-4", "BIN-1"], "unbundle",
         {"targets": [HOST, GFX906], "inputs": ["plain"], "allow_missing_bundles": True}, plain,
         {"outputs": [{"input": "plain"}, u("")]}, source=f"{MATRIX} §3.4")
    case("unbundle/zero-size-entry", "A zero-size entry unbundles to an empty file",
         ["BIN-11", "CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]},
         {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), "")])}, {"outputs": [u("HOSTDATA"), u("")]},
         source=f"{FORMATS} §1.2")
    case("unbundle/aligned-4096", "Payloads aligned to 4096",
         ["BIN-11", "BIN-9"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]},
         {"fat": std_bundle(align=4096)}, {"outputs": [u("HOSTDATA"), u("DEVDATA")]})
    big = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), {"zeros": 65536})], align=4096)}
    case("unbundle/large-payload", "A 64 KiB payload (checked by SHA-256)",
         ["BIN-11", "CLI-2"], "unbundle", {"targets": [GFX906, HOST], "inputs": ["fat"]}, big,
         {"outputs": [{"sha256": hashlib.sha256(b"\0" * 65536).hexdigest()}, u("HOSTDATA")]})
    case("unbundle/two-inputs", "Unbundling takes one input",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat", "fat"]}, ins, {"fail": "CLI-2"},
         source=f"{MATRIX} §3.6")
    case("unbundle/outputs-mismatch", "Unbundling needs one output per target",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"], "outputs": 1}, ins, {"fail": "CLI-2"},
         source=f"{MATRIX} §3.6")
    case("unbundle/two-hosts-requested", "At most one host target when unbundling",
         ["CLI-3"], "unbundle", {"targets": [HOST, HOST2], "inputs": ["fat"]}, ins, {"fail": "CLI-3"},
         source=f"{MATRIX} §3.6")
    case("unbundle/duplicate-requests", "The same target requested twice",
         ["CLI-3"], "unbundle", {"targets": [GFX906, GFX906], "inputs": ["fat"]}, ins, {"fail": "CLI-3"})
    # Matching (§3.3)
    hipent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(GFX906, "DEVDATA")])}
    case("unbundle/hipv4-request-hip-entry", "hip and hipv4 are compatible kinds",
         ["COMPAT-1"], "unbundle", {"targets": ["hipv4-amdgcn-amd-amdhsa--gfx906"], "inputs": ["fat"]}, hipent,
         {"outputs": [u("DEVDATA")]},
         [note([14, 16], "COMPAT-1", {"fail": "CLI-4"}, "14 and 16 treat hip and hipv4 as different kinds", profile=True,
               ref=f"{MATRIX} §3.3, §8.4")])
    ompent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(OMP906, "OMPDATA")])}
    case("unbundle/hip-openmp-compatible", "With -hip-openmp-compatible a hip request takes an openmp entry",
         ["COMPAT-1"], "unbundle",
         {"targets": [GFX906], "inputs": ["fat"], "hip_openmp_compatible": True}, ompent, {"outputs": [u("OMPDATA")]},
         source=f"{MATRIX} §3.3")
    case("unbundle/hip-openmp-not-requested", "Without the option hip and openmp are incompatible",
         ["COMPAT-1"], "unbundle", {"targets": [GFX906], "inputs": ["fat"]}, ompent, {"fail": "CLI-4"},
         source=f"{MATRIX} §3.3")
    anyent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), "ANY")])}
    case("unbundle/feature-any-satisfies", "An entry leaving xnack Any satisfies a request for xnack+",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx906:xnack+"], "inputs": ["fat"]}, anyent,
         {"outputs": [u("ANY")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{FORMATS} §5.3")])
    xent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX90AX), "XNACKON")])}
    case("unbundle/feature-set-not-satisfied", "An entry with xnack+ does not satisfy a request leaving xnack Any",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a"], "inputs": ["fat"]}, xent,
         {"fail": "CLI-4"}, source=f"{MATRIX} §3.3")
    case("unbundle/feature-opposite", "xnack+ does not satisfy xnack-",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack-"], "inputs": ["fat"]}, xent,
         {"fail": "CLI-4"}, source=f"{MATRIX} §3.3")
    case("unbundle/feature-superset", "A request setting more features than the entry",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+"], "inputs": ["fat"]},
         xent, {"outputs": [u("XNACKON")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{MATRIX} §3.3")])
    case("unbundle/feature-order", "Feature order does not matter",
         ["COMPAT-3", "TID-4"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"], "inputs": ["fat"]},
         xent, {"outputs": [u("XNACKON")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{MATRIX} §3.3")])
    nv = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(SM70, "SM70")])}
    case("unbundle/empty-environment-is-unknown", "openmp-nvptx64-nvidia-cuda--sm_70 satisfies ...-unknown-sm_70",
         ["COMPAT-2"], "unbundle", {"targets": ["openmp-nvptx64-nvidia-cuda-unknown-sm_70"], "inputs": ["fat"]}, nv,
         {"outputs": [u("SM70")]},
         [note([14], "COMPAT-2", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{MATRIX} §3.3")])
    case("unbundle/vendor-differs", "amd and unknown vendors are different triples",
         ["COMPAT-2"], "unbundle", {"targets": ["hip-amdgcn-unknown-amdhsa--gfx906"], "inputs": ["fat"]}, hipent,
         {"fail": "CLI-4"}, source="tests/data/llvm-id-vectors.json")
    case("unbundle/one-entry-two-requests", "One entry compatible with two requests satisfies only one",
         ["CLI-4", "COMPAT-3"], "unbundle",
         {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-"],
          "inputs": ["fat"]}, xent, {"fail": "CLI-4"}, source=f"{MATRIX} §3.3")
    case("unbundle/conflicting-requests", "Requests gfx90a:xnack+ and gfx90a:xnack+:sramecc+ are not composable",
         ["COMPOSE-1"], "unbundle",
         {"targets": [GFX90AX, "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+"], "inputs": ["fat"]}, xent,
         {"fail": "COMPOSE-1"},
         [note([14], "COMPOSE-1", {"fail": "CLI-4"}, "14 has no composition check; the second request is simply missing",
               profile=True)], source=f"{MATRIX} §3.3")
    # Cross-version (§3.2): bundles as each release writes them, requested with the original spellings.
    req = [HOST, GFX906, SM70]
    pay = ["HOST", "HIP", "OMP"]
    for writer, ids, n in [
        (14, [HOST, GFX906, SM70], [note([19], "ID-4", {"fail": "CLI-4"},
                                         "19 looks for host-x86_64-unknown-linux-gnu- and cannot find the 14/16 spelling",
                                         profile=True, ref=f"{MATRIX} §3.2")]),
        (19, [HOST + "-", GFX906, SM70], [note([14, 16], "ID-4", {"fail": "CLI-4"},
                                               "14 and 16 compare the host ID as a string: -gnu vs -gnu-",
                                               profile=True, ref=f"{MATRIX} §3.2")]),
        (22, [HOST + "-", GFX906, "openmp-nvptx64-nvidia-cuda-unknown-sm_70"],
         [note([14, 16], "ID-4", {"fail": "CLI-4"}, "14 and 16 cannot match the 22 spellings of the host (and, for 14, of sm_70)",
               profile=True, ref=f"{MATRIX} §3.2")]),
    ]:
        case(f"unbundle/written-by-{writer}", f"A bundle as LLVM {writer} writes it, unbundled with the original -targets",
             ["ID-4", "COMPAT-2", "CLI-4"], "unbundle", {"targets": req, "inputs": ["fat"]},
             {"fat": bundle([entry(i, p) for i, p in zip(ids, pay)])}, {"outputs": [u(p) for p in pay]}, n,
             source=f"{MATRIX} §3.2")


# ---------------------------------------------------------------------------
# Malformed and non-conforming bundles: -list and unbundling
# ---------------------------------------------------------------------------

def good_recipe(**kw):
    return bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA")], **kw)


def pair(name, title, rules, inp, rule, list_notes, unb_notes, source=None, unb_targets=(GFX906,)):
    case(f"malformed/{name}-list", f"{title}: -list", rules, "list", {"inputs": ["in"]}, {"in": inp},
         {"fail": rule}, list_notes, source=source)
    case(f"malformed/{name}-unbundle", f"{title}: unbundle", rules, "unbundle",
         {"targets": list(unb_targets), "inputs": ["in"]}, {"in": inp}, {"fail": rule}, unb_notes, source=source)


def crash_notes(what):
    return [note(ALL, what[0], "crash", what[1], ref=f"{MATRIX} §3.5, §7 C3")]


def nobundles(rule, why):
    return ([note(ALL, rule, {"list": []}, why + ": LLVM sees no bundles and lists nothing", profile=True,
                  ref=f"{MATRIX} §3.5")],
            [note(ALL, rule, {"fail": "CLI-4"}, why + ": LLVM sees no bundles (Can't find bundles)", profile=True,
                  ref=f"{MATRIX} §3.5")])


def malformed():
    src = f"{MATRIX} §3.5; shared/research/malformed/"
    case("malformed/good-list", "research good.bin: -list", ["BIN-1", "BIN-12"], "list", {"inputs": ["in"]},
         {"in": hx(GOOD)}, {"list": [HOST + "-", GFX906]}, source=src + "good.bin")
    case("malformed/good-unbundle", "research good.bin: unbundle host and device", ["BIN-1", "CLI-2"], "unbundle",
         {"targets": [HOST, GFX906], "inputs": ["in"]}, {"in": hx(GOOD)}, {"outputs": [u("HOSTDATA"), u("DEVDATA")]},
         [note([14, 16], "ID-4", {"fail": "CLI-4"}, "14 and 16 compare the host ID as a string: -gnu vs -gnu-",
               profile=True, ref=f"{MATRIX} §3.2")], source=src + "good.bin")
    crash = "SIGSEGV: the header reader stops at the bad record after a valid one and an uninitialised iterator is used"
    pair("trunc153", "good.bin without its last byte (second payload past the end)", ["BIN-5"],
         good_recipe(truncate=153), "BIN-5", crash_notes(("BIN-5", crash)), crash_notes(("BIN-5", crash)), src + "trunc153.bin")
    ln, un = nobundles("BIN-5", "the first record's payload is outside the file")
    pair("trunc139", "good.bin cut after the header (no payloads)", ["BIN-5"], good_recipe(truncate=139), "BIN-5", ln, un, src)
    ln, un = nobundles("BIN-2", "the first record is incomplete")
    pair("trunc109", "good.bin cut inside the second ID", ["BIN-2"], good_recipe(truncate=109), "BIN-2",
         [note(ALL, "BIN-2", {"list": []}, "the first record's payload is outside the cut file: LLVM sees no bundles",
               profile=True, ref=f"{MATRIX} §3.5")],
         [note(ALL, "BIN-2", {"fail": "CLI-4"}, "LLVM sees no bundles", profile=True, ref=f"{MATRIX} §3.5")], src)
    ln, un = nobundles("BIN-2", "the count field is incomplete")
    pair("trunc28", "good.bin cut inside the entry count", ["BIN-2"], good_recipe(truncate=28), "BIN-2", ln, un, src)
    ln, un = nobundles("BIN-2", "the count field is missing")
    pair("magic-only", "only the 24-byte magic", ["BIN-2", "BIN-1"], hx(MAGIC), "BIN-2", ln, un, src)
    ln, un = nobundles("BIN-1", "no magic")
    pair("trunc8", "8 bytes of the magic", ["BIN-1"], good_recipe(truncate=8), "BIN-1", ln, un, src)
    pair("empty-file", "an empty file", ["BIN-1"], u(""), "BIN-1", ln, un, src)
    pair("no-magic", "bytes that are not a bundle", ["BIN-1"], u("neither a bundle nor any other container\n"), "BIN-1", ln, un)
    ln, un = nobundles("BIN-3", "zero entries")
    pair("n0", "entry count 0", ["BIN-3"], good_recipe(count=0), "BIN-3", ln, un, src)
    pair("n3", "entry count 3, two records present", ["BIN-2"], good_recipe(count=3), "BIN-2",
         crash_notes(("BIN-2", crash)), crash_notes(("BIN-2", crash)), src + "n3.bin")
    pair("nhuge", "entry count 2^64-1", ["BIN-2"], good_recipe(count=2**64 - 1), "BIN-2",
         crash_notes(("BIN-2", crash)), crash_notes(("BIN-2", crash)), src)
    ln, un = nobundles("BIN-6", "the first record has offset 0")
    pair("off0first", "first entry offset 0", ["BIN-6"],
         bundle([entry(HOST + "-", "HOSTDATA", offset=0), entry(GFX906, "DEVDATA")]), "BIN-6", ln, un, src)
    pair("off0dev", "second entry offset 0", ["BIN-6"],
         bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", offset=0)]), "BIN-6",
         crash_notes(("BIN-6", crash)), crash_notes(("BIN-6", crash)), src + "off0dev.bin")
    pair("offpast", "second entry offset past the end", ["BIN-5"],
         bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", offset=1000)]), "BIN-5",
         crash_notes(("BIN-5", crash)), crash_notes(("BIN-5", crash)), src)
    pair("sizepast", "second entry size past the end", ["BIN-5"],
         bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", size=1000)]), "BIN-5",
         crash_notes(("BIN-5", crash)), crash_notes(("BIN-5", crash)), src)
    pair("idlenhuge", "second ID length 2^64-1", ["BIN-2"],
         bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", id_len=2**64 - 1)]), "BIN-2",
         crash_notes(("BIN-2", crash)), crash_notes(("BIN-2", crash)), src + "idlenhuge.bin")
    wrap = bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", size=0xffffffffffffff6e)])
    case("malformed/offsizewrap-list", "offset + size of the second entry wraps past 2^64: -list", ["BIN-5"], "list",
         {"inputs": ["in"]}, {"in": wrap}, {"fail": "BIN-5"},
         [note(ALL, "BIN-5", {"list": [HOST + "-", GFX906]}, "the wrapped sum passes LLVM's range check; -list prints both IDs",
               profile=True, ref=f"{MATRIX} §3.5")], source=src + "offsizewrap.bin")
    case("malformed/offsizewrap-unbundle", "offset + size of the second entry wraps past 2^64: unbundle", ["BIN-5"],
         "unbundle", {"targets": [GFX906], "inputs": ["in"]}, {"in": wrap}, {"fail": "BIN-5"},
         [note(ALL, "BIN-5", "crash", "LLVM copies heap memory into the output (C4): 14 aborts, 16-22 exit 1 after the leak",
               ref=f"{MATRIX} §3.5, §7 C4")], source=src + "offsizewrap.bin")
    # Non-conforming but readable: LLVM reads them leniently; the profile reproduces that.
    lenient = "LLVM's reader does not check this"

    def readable(name, title, rules, inp, rule, listing, outputs, targets=(GFX906,), extra_list=(), extra_unb=(),
                 source=None, why=lenient):
        case(f"malformed/{name}-list", f"{title}: -list", rules, "list", {"inputs": ["in"]}, {"in": inp},
             {"fail": rule}, [note(ALL, rule, {"list": listing}, why, profile=True, ref=f"{MATRIX} §3.5")] + list(extra_list),
             source=source)
        case(f"malformed/{name}-unbundle", f"{title}: unbundle", rules, "unbundle",
             {"targets": list(targets), "inputs": ["in"]}, {"in": inp}, {"fail": rule},
             [note(ALL, rule, {"outputs": outputs}, why, profile=True, ref=f"{MATRIX} §3.5")] + list(extra_unb),
             source=source)

    lit = [HOST + "-", GFX906]
    header_bytes = build([(HOST.encode() + b"-", b"HOSTDATA"), (GFX906.encode(), b"DEVDATA")])[32:39]
    readable("payload-in-header", "second payload points into the header", ["BIN-6"],
             bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", offset=32)]), "BIN-6", lit,
             [hx(header_bytes)], why="LLVM accepts offsets into the header and returns header bytes")
    readable("overlap", "second payload overlaps the first", ["BIN-7"],
             bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA", offset=0x8b)]), "BIN-7", lit,
             [u("HOSTDAT")], why="LLVM accepts overlapping entries")
    readable("duplicate-ids", "two entries with the same ID", ["BIN-8"],
             bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "FIRST"), entry(GFX906, "SECOND")]), "BIN-8",
             lit, [u("SECOND")], why="LLVM keeps one entry per ID (a StringMap): the last one wins")
    readable("nonzero-padding", "non-zero bytes in the alignment padding", ["BIN-9"],
             bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA")], align=16, padding="ff"), "BIN-9", lit,
             [u("DEVDATA")])
    readable("trailing-bytes", "bytes after the last payload", ["BIN-10"],
             bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA")], append=u("GARBAGE")), "BIN-10", lit,
             [u("DEVDATA")], why="LLVM ignores trailing data")
    readable("concatenated", "two bundles concatenated", ["BIN-10"],
             {"concat": [hx(GOOD), hx(build([(b"hip-amdgcn-amd-amdhsa--gfx908", b"OTHER")]))]}, "BIN-10", lit,
             [u("DEVDATA")], why="LLVM reads only the first bundle of an uncompressed file")
    readable("two-host-entries", "a bundle with two host entries", ["BIN-13"],
             bundle([entry(HOST + "-", "H1"), entry(HOST2 + "-", "H2"), entry(GFX906, "DEVDATA")]), "BIN-13",
             [HOST + "-", HOST2 + "-", GFX906], [u("DEVDATA")])
    # Invalid IDs inside a bundle.
    for name, bad, rule in [("id-unknown-kind", "cuda-nvptx64-nvidia-cuda--sm_70", "ID-2"),
                            ("id-unknown-arch", "openmp-bogus-unknown-linux-gnu-", "ID-3"),
                            ("id-ambiguous", "hip-amdgcn-amd-amdhsa-gfx908", "ID-5"),
                            ("id-host-target-id", "host-aarch64-unknown-linux-gnu--gfx906", "ID-6"),
                            ("id-feature-format", "hip-amdgcn-amd-amdhsa--gfx908:xnack", "TID-1"),
                            ("id-feature-twice", "hip-amdgcn-amd-amdhsa--gfx908:xnack+:xnack+", "TID-2"),
                            ("id-unknown-processor", "hip-amdgcn-amd-amdhsa--gfx9999", "TID-3"),
                            ("id-carriage-return", "hip-amdgcn-amd-amdhsa--gfx908\r", "ID-1"),
                            ("id-syntax", "openmp-nvptx64", "ID-1")]:
        inp = bundle([entry(HOST + "-", "HOSTDATA"), entry(bad, "BAD"), entry(GFX906, "DEVDATA")])
        readable(name, f"an entry ID violating {rule} ({bad!r})", [rule], inp, rule, [HOST + "-", bad, GFX906],
                 [u("DEVDATA")], why="LLVM does not validate entry IDs it reads")
    inp = hx(IDLEN0)
    case("malformed/idlen0-list", "first entry ID of length 0 (research idlen0.bin): -list", ["BIN-4"], "list",
         {"inputs": ["in"]}, {"in": inp}, {"fail": "BIN-4"},
         [note(ALL, "BIN-4", {"list": ["", GFX906]}, "-list prints an empty line for the empty ID", profile=True,
               ref=f"{MATRIX} §3.5")], source=src + "idlen0.bin")
    case("malformed/idlen0-unbundle", "first entry ID of length 0 (research idlen0.bin): unbundle", ["BIN-4"], "unbundle",
         {"targets": [GFX906], "inputs": ["in"]}, {"in": inp}, {"fail": "BIN-4"},
         [note([14, 16, 19], "BIN-4", {"outputs": [u("DEVDATA")]}, "the empty ID is skipped", profile=True,
               ref=f"{MATRIX} §3.5"),
          note([22], "BIN-4", {"fail": "ID-1"}, "22: invalid bundle id read from the bundle", profile=True,
               ref=f"{MATRIX} §3.5")], source=src + "idlen0.bin")


def listing():
    four = [SM70, HIPV4_90AX, HOST, GFX906]
    case("list/four-entries", "-list shows every ID (the §3.1 bundle; LLVM prints StringMap order)",
         ["BIN-12"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(t), t[:4]) for t in four])}, {"list": [W(t) for t in four]},
         source=f"{MATRIX} §3.1")
    three = [GFX906, HOST, "hip-amdgcn-amd-amdhsa--gfx908:xnack+"]
    case("list/three-entries", "-list of the §7.3 example",
         ["BIN-12"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(t), "X") for t in three])}, {"list": [W(t) for t in three]},
         source=f"{FORMATS} §7.3")
    many = [HOST] + [f"hip-amdgcn-amd-amdhsa--gfx{p}" for p in
                     ["900", "902", "904", "906", "908", "909", "90a", "90c", "940", "942", "1010", "1030", "1100"]] + \
        ["openmp-nvptx64-nvidia-cuda--sm_%d" % s for s in [60, 70, 75, 80, 86, 89, 90]]
    case("list/twenty-one-entries", "-list of 21 entries (the StringMap grows twice)",
         ["BIN-12"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(t), "P%d" % i) for i, t in enumerate(many)])}, {"list": [W(t) for t in many]})
    case("list/single-entry", "-list of a one-entry HIP bundle", ["BIN-12", "BIN-3"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(GFX906), "X")])}, {"list": [W(GFX906)]})
    case("list/type-gch", "-list with -type=gch", ["BIN-12"], "list", {"type": "gch", "inputs": ["fat"]},
         {"fat": std_bundle()}, {"list": [W(HOST), W(GFX906)]})


# ---------------------------------------------------------------------------
# Vector-derived cases
# ---------------------------------------------------------------------------

def spec_parse(ok, ids):
    out = subprocess.run([ok, "conformance", "spec", "parse-id"] + ids, check=True, capture_output=True, text=True)
    return [json.loads(l) for l in out.stdout.splitlines()]


def spec_compat(ok, entry_, request, hipomp):
    argv = [ok, "conformance", "spec", "compatible", entry_, request] + (["--hip-openmp"] if hipomp else [])
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


MESSAGES = json.load(open(os.path.join(ROOT, "conformance", "messages", "clang-offload-bundler.json")))["messages"]


def rules_of(msg):
    r = []
    for m in MESSAGES:
        if m["contains"] in msg:
            r += m["rules"]
    return sorted(set(r))


def slug(s, n):
    s = re.sub(r"[^A-Za-z0-9_.+-]+", "_", s).strip("_") or "empty"
    return "%03d-%s" % (n, s[:70])


def kind_of(i):
    return i.split("-", 1)[0]


def id_vectors(ok):
    v = json.load(open(os.path.join(ROOT, "tests", "data", "llvm-id-vectors.json")))
    written = v["written"]
    specs = spec_parse(ok, [w["target"] for w in written])
    for n, (w, sp) in enumerate(zip(written, specs)):
        t = w["target"]
        targets = w["targets"].split(",")
        kinds = [kind_of(x) for x in targets]
        # The spec verdict of the whole -targets list: each ID, then the host count (CLI-3).
        expect = None
        for x in targets:
            if x == t:
                if "fail" in sp:
                    expect = {"fail": sp["fail"]}
                    break
        if expect is None:
            hosts = sum(k == "host" for k in kinds)
            hip_only = all(k in ("hip", "hipv4") for k in kinds)
            if hosts > 1 or (hosts == 0 and not hip_only):
                expect = {"fail": "CLI-3"}
            else:
                expect = {"id": W(t)}
        rule = expect.get("fail", "ID-4")
        notes = []
        for r in ALL:
            got = w[str(r)]
            prof = sp["written"][str(r)]
            if "id" in got:
                observed = {"id": got["id"]}
                if "id" in expect and prof.get("id") == got["id"]:
                    continue  # the release spelling of the spec's answer
                text = f"LLVM {r} writes '{got['id']}'"
                nr = rule if "fail" in expect else "ID-4"
            else:
                rs = rules_of(got["error"])
                if "fail" in expect and expect["fail"] in rs:
                    continue
                observed = {"fail": rs[0] if rs else "*"}
                text = f"LLVM {r} refuses: {got['error']}"
                nr = rs[0] if ("id" in expect and rs) else rule
            notes.append((r, nr, json.dumps(observed, sort_keys=True), observed, text))
        merged = {}
        for r, nr, key, observed, text in notes:
            k = (nr, key, text.replace(f"LLVM {r} ", "LLVM "))
            merged.setdefault(k, (observed, []))[1].append(r)
        kd = [note(rs, nr, obs, txt.replace("LLVM ", "LLVM " + "/".join(map(str, rs)) + " ", 1), profile=True,
                   ref="tests/data/llvm-id-vectors.json (written)")
              for (nr, _, txt), (obs, rs) in merged.items()]
        rules = sorted({rule} | ({"ID-4"} if "id" in expect else set()))
        case(f"parse-id/{slug(t, n)}", f"The ID written for -targets entry {t!r} (with {','.join(targets)})",
             rules, "parse-id", {"targets": targets, "id": t}, None, expect, kd,
             source="tests/data/llvm-id-vectors.json (written); " + MATRIX + " §1.3")

    for n, m in enumerate(v["match"]):
        e, rq, ho = m["entry"], m["request"], m["hip_openmp_compatible"]
        sp = spec_compat(ok, e, rq, ho)
        if "fail" in sp:
            expect = {"fail": sp["fail"]}
            rule = sp["fail"]
        else:
            expect = {"compatible": sp["compatible"]}
            ke, kr = kind_of(e), kind_of(rq)
            if ke != kr:
                rule = "COMPAT-1"
            else:
                te = e.split("-")[1:4] + [(e.split("-") + ["", ""])[4] or "unknown"]
                tr = rq.split("-")[1:4] + [(rq.split("-") + ["", ""])[4] or "unknown"]
                rule = "COMPAT-2" if te != tr else "COMPAT-3"
        notes = {}
        for r in ALL:
            got = m[str(r)]
            if isinstance(got, bool):
                obs = {"compatible": got}
                if obs == expect:
                    continue
                text = "LLVM %s %s" % ("%s", "matches" if got else "does not match")
            else:
                if r == 14 and ho:
                    continue  # 14 has no -hip-openmp-compatible: the case is n/a there
                rs = rules_of(got["error"])
                if "fail" in expect and expect["fail"] in rs:
                    continue
                obs = {"fail": rs[0] if rs else "*"}
                text = "LLVM %s refuses: " + got["error"]
            key = (json.dumps(obs, sort_keys=True), text)
            notes.setdefault(key, (obs, []))[1].append(r)
        kd = [note(rs, rule, obs, text % "/".join(map(str, rs)), profile=True,
                   ref="tests/data/llvm-id-vectors.json (match)")
              for (_, text), (obs, rs) in notes.items()]
        args = {"entry": e, "request": rq}
        if ho:
            args["hip_openmp_compatible"] = True
        case(f"compatible/{slug(e + '__' + rq + ('__hipomp' if ho else ''), n)}",
             f"Does entry {e!r} satisfy request {rq!r}{' (-hip-openmp-compatible)' if ho else ''}?",
             [rule], "compatible", args, None, expect, kd,
             source="tests/data/llvm-id-vectors.json (match); " + FORMATS + " §5.3")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--offload-kit", default=os.path.join(ROOT, "target", "release", "offload-kit"))
    a = ap.parse_args()
    if not os.path.exists(a.offload_kit):
        sys.exit(f"{a.offload_kit} not found: cargo build --release first")
    bundling()
    unbundling()
    malformed()
    listing()
    id_vectors(a.offload_kit)
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    for path, c in sorted(CASES.items()):
        p = os.path.join(CORPUS, path + ".json")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    try:  # optional: validate against the schema when python3-jsonschema is installed
        import jsonschema
        schema = json.load(open(os.path.join(ROOT, "conformance", "case.schema.json")))
        validator = jsonschema.Draft202012Validator(schema)
        for path, c in sorted(CASES.items()):
            for err in validator.iter_errors(c):
                sys.exit(f"{path}: {err.message}")
    except ImportError:
        pass
    groups = {}
    for path in CASES:
        groups[path.split("/")[0]] = groups.get(path.split("/")[0], 0) + 1
    print(f"wrote {len(CASES)} cases to {os.path.relpath(CORPUS, ROOT)}: " +
          ", ".join(f"{g} {n}" for g, n in sorted(groups.items())))


if __name__ == "__main__":
    main()

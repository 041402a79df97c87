#!/usr/bin/env python3
"""Generate the conformance corpus: conformance/corpus/**/*.json.

Three sources, one case format (conformance/README.md):

* hand-written cases below, translated in spirit from LLVM's
  clang/test/Driver/clang-offload-bundler*.c and from the behaviour of
  clang-offload-bundler 14.0.6, 16.0.6, 19.1.7 and 22.1.8 that the spec
  states in each rule's *LLVM releases* part (the malformed inputs of
  tests/data/malformed/*.bin are rebuilt from recipes or embedded as hex);
* parse-id cases from the "written" vectors of tests/data/llvm-id-vectors.json;
* compatible cases from its "match" vectors;
* text, object and ccob cases, one or more per rule of spec/text-bundle.md,
  spec/object-bundle.md and spec/ccob.md, with the differential fixtures of
  tests/text_bundle.rs, tests/object_bundle.rs and tests/ccob.rs rebuilt as
  recipes, and real LLVM outputs from conformance/fixtures/ (see its README;
  --rebuild-fixtures remakes them with the installed LLVM 14/16/19/22).

Expectations are the spec's. For the vector cases the spec verdict comes
from offload-kit's strict layer (`offload-kit conformance spec ...`) and was
reviewed; each LLVM release's recorded behaviour that differs from it (after
the release's ID spelling) becomes a `known_divergence` note. Notes of the
hand-written cases are written out below, each citing what documents it
within the repository (a spec rule or section, a file of tests/data) or the
LLVM source file that explains it.

Usage: cargo build --release && python3 tools/gen-conformance-corpus.py
       [--offload-kit target/release/offload-kit] [--rebuild-fixtures]

The output is deterministic; the directory is rewritten (stale files removed).
Only the Python standard library is used.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "conformance", "corpus")
# The releases of tools/llvm-releases (one per line, '#' comments).
ALL = [int(line) for line in open(os.path.join(ROOT, "tools", "llvm-releases")) if line.strip() and not line.startswith("#")]
# The releases whose clang-built fixtures conformance/fixtures/ holds.
FIXTURE_RELEASES = [14, 16, 19, 22]

HOST = "host-x86_64-unknown-linux-gnu"
HOST2 = "host-aarch64-unknown-linux-gnu"
GFX906 = "hip-amdgcn-amd-amdhsa--gfx906"
GFX908 = "hip-amdgcn-amd-amdhsa--gfx908"
GFX908X = "hip-amdgcn-amd-amdhsa--gfx908:xnack+"
GFX90AX = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
HIPV4_90AX = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
SM70 = "openmp-nvptx64-nvidia-cuda--sm_70"
OMP906 = "openmp-amdgcn-amd-amdhsa--gfx906"

LLVM_TEST = "clang/test/Driver/clang-offload-bundler.c"
# Citations stand alone: a spec chapter's rule or section whose *LLVM
# releases* part states what the releases were observed to do (the Debian
# builds 14.0.6, 16.0.6, 19.1.7 and 22.1.8, spec/README.md, Conventions), a
# file of tests/data, or the LLVM source file that explains a behaviour.
BIN = "spec/binary-bundle.md"
BID = "spec/bundle-id.md"
CLI = "spec/cli.md"
MALFORMED = "tests/data/malformed/"
BUNDLER_SRC = "clang/lib/Driver/OffloadBundler.cpp"

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


def note(releases, rule, outcome, text, profile=False, ref=None, adapters=None, exact=False):
    """A known divergence of `releases`. Hand-written notes name the releases
    of 14/16/19/22 they were first checked on; LLVM 13 and 15 join every
    note that names 14 (their bundlers match whole IDs as 14's does; the
    corpus run against llvm-13 and llvm-15 checks each note), and the text
    says so. `exact` notes list their releases as measured (the vectors of
    tests/data/llvm-id-vectors.json, and 13's or 15's own notes)."""
    n = {}
    if releases:
        rs = set(releases)
        if not exact and 14 in rs:
            added = sorted({13, 15} - rs)
            rs |= {13, 15}
            if added and "14" in text:
                text += " (" + " and ".join(map(str, added)) + ": as 14)"
        n["releases"] = sorted(rs)
    if adapters:
        n["adapters"] = list(adapters)
    n.update({"rule": rule, "outcome": outcome, "note": text})
    if profile:
        n["profile"] = True
    if ref:
        n["ref"] = ref
    return n


def case(path, title, rules, op, args=None, inputs=None, expect=None, notes=(), source=None, timeout=None, bugs=()):
    assert path not in CASES, path
    c = {"$schema": "../../case.schema.json" if path.count("/") == 1 else "../../../case.schema.json",
         "title": title}
    if source:
        c["source"] = source
    c["rules"] = list(dict.fromkeys(rules))
    if inputs:
        c["inputs"] = inputs
    c["op"] = op
    if args:
        c["args"] = args
    c["expect"] = expect
    if timeout:
        c["timeout_seconds"] = timeout
    if notes:
        c["known_divergence"] = list(notes)
    # `bugs` records the offload-kit bugs a case exposed when it was written.
    # Every one recorded so far is fixed (detect.rs OBJ-1 for non-ELF objects,
    # big-endian input_kind, OBJ-3 in Job::piece_for, empty IDs in 19/22
    # object listings, SHT_NOBITS payloads, lenient text detection), so none
    # is emitted as `known_bugs`: a listed bug whose case passes fails the run.
    # Set OPEN_BUGS to emit the records of a bug that is still open.
    open_bugs = [b for b in bugs if b.get("note") in OPEN_BUGS]
    if open_bugs:
        c["known_bugs"] = open_bugs
    CASES[path] = c


# Notes of recorded bugs that are still open (see `case`).
OPEN_BUGS = set()


def bug(adapters, text, ref="reported with the conformance corpus of issues 4 and 5"):
    """An offload-kit bug the case exposes: an expected failure of these adapters until it is fixed."""
    return {"adapters": list(adapters), "note": text, "ref": ref}


DROP_INS = ["offload-kit", "offload-kit-14", "offload-kit-16", "offload-kit-19"]


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
         source=f"{LLVM_TEST} (CK-BC round trip); {BIN} Writer")
    case("bundle/good-bin-bytes", "The bytes of good.bin (154 B, host ID with the empty environment field)",
         ["BIN-1", "BIN-11", "ID-4"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD, {"outputs": [hx(GOOD)]},
         [note([14, 16], "ID-4", {"outputs": [hx(GOOD14)]},
               "14 and 16 write the -targets text verbatim ('host-x86_64-unknown-linux-gnu', 153 B)",
               profile=True, ref=f"{BID} Written IDs")],
         source=f"{MALFORMED}good.bin (what 19 and 22 write); {BIN} Writer")
    case("bundle/three-entries", "Worked example: three entries, offsets 199/207/211",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906, GFX908X], "inputs": ["h", "d1", "d2"]},
         {"h": u("HOSTDATA"), "d1": u("DEV1"), "d2": u("DEVICE22")}, {"bundle": {}},
         source=f"{BIN} Writer (what 22 writes for these inputs)")
    case("bundle/host-not-first", "Entries keep -targets order; the host is not moved first",
         ["BIN-11", "BIN-12"], "bundle",
         {"targets": [GFX906, HOST, SM70], "inputs": ["a", "b", "c"]},
         {"a": u("DEVICE-A"), "b": u("HOST-B"), "c": u("OPENMP-C")}, {"bundle": {}},
         source=f"{LLVM_TEST} (CK-TEXTS-UNORDERED, binary variant); {BIN} BIN-11")
    for al in [1, 2, 3, 7, 16, 64, 4096]:
        case(f"bundle/align-{al}", f"-bundle-align={al}: every payload at the next multiple of {al}, zero padding, no trailing pad",
             ["BIN-11", "BIN-9"], "bundle",
             {"targets": [HOST, GFX906, GFX908X], "inputs": ["h", "d1", "d2"], "bundle_align": al},
             {"h": u("HOSTDATA"), "d1": u("DEV1"), "d2": u("DEVICE22")}, {"bundle": {}},
             source=f"{LLVM_TEST} (-bundle-align); {BIN} BIN-11")
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
    written14 = build([(HOST.encode(), b"HOSTDATA"), (GFX906.encode(), b"")], 16)[:152]
    for op, args, expect in (("list", {"inputs": ["in"]}, {"fail": "BIN-5"}),
                             ("unbundle", {"targets": [HOST], "inputs": ["in"]}, {"fail": "BIN-5", "no_outputs": True})):
        case(f"malformed/empty-last-entry-past-end-{op}",
             f"-{op} of the bundle 13-16 write for -bundle-align=16 and an empty last input (its offset past the end)",
             ["BIN-5", "BIN-11"], op, args, {"in": hx(written14)}, expect,
             [note(ALL, "BIN-5", "crash", "every release dies of SIGSEGV reading the bundle 13-16 write themselves "
                   "(the empty entry's offset 160 lies past the end of the 152-byte file); observed 2026-11-25",
                   ref=f"{BIN} BIN-11 (Writer, step 5)")],
             source="bundle/align-empty-last-entry (spec audit, issue 17 point 1)")
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
         [note(ALL, "BIN-11", "crash", "division by zero in alignTo: SIGFPE", ref=f"{BIN} BIN-11")])
    case("bundle/empty-inputs", "Empty inputs give zero-size entries placed at the end of the header",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["e1", "e2"]}, {"e1": u(""), "e2": u("")}, {"bundle": {}},
         source=f"{BIN} Writer")
    for t in ["gch", "ast"]:
        case(f"bundle/type-{t}", f"-type={t} writes the same binary format as bc",
             ["BIN-1", "BIN-11"], "bundle",
             {"type": t, "targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD, {"bundle": {}},
             source=f"{BIN} (the binary bundle of -type=bc, gch and ast)")
    case("bundle/hip-only", "A HIP-only bundle needs no host entry",
         ["CLI-3", "BIN-11"], "bundle",
         {"targets": [GFX906, GFX908], "inputs": ["a", "b"]}, {"a": u("GFX906"), "b": u("GFX908")}, {"bundle": {}},
         source=f"{CLI} CLI-3")
    case("bundle/openmp-without-host", "Bundling OpenMP code objects requires exactly one host target",
         ["CLI-3"], "bundle",
         {"targets": [SM70], "inputs": ["dev"]}, HD, {"fail": "CLI-3"},
         source=f"{LLVM_TEST} (CK-ERR: expecting exactly one host target but got 0)")
    case("bundle/two-hosts", "Two host targets are refused",
         ["CLI-3", "BIN-13"], "bundle",
         {"targets": [HOST, HOST2, GFX906], "inputs": ["host", "host", "dev"]}, HD, {"fail": "CLI-3"},
         source=f"{CLI} Check order, CLI-3")
    case("bundle/duplicate-targets", "The same target twice is refused",
         ["CLI-3", "BIN-8"], "bundle",
         {"targets": [HOST, GFX906, GFX906], "inputs": ["host", "dev", "dev"]}, HD, {"fail": "CLI-3"},
         source=f"{LLVM_TEST} (CK-ERR: Duplicate targets are not allowed)")
    case("bundle/ids-collapse-under-22", "Five-field IDs naming a processor are ambiguous (LLVM 22 writes both as hip-amdgcn-amd-amdhsa--)",
         ["ID-5", "BIN-8"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa-gfx908"], "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("GFX906"), "b": u("GFX908")}, {"fail": "ID-5"},
         [note([14, 16, 19], "ID-5", {"bundle": {}}, "14/16 write the IDs verbatim, 19 inserts the empty environment: both readable",
               profile=True, ref=f"{BID} Written IDs"),
          note([22], "BIN-8", "success",
               "LLVM 22 drops the processor of both targets, writes two entries under one ID and corrupts the header (data loss)",
               ref=f"{BID} Written IDs (22's data corruption)"),
          note([22], "BIN-8", {"fail": "BIN-8"},
               "the LLVM 22 profile reproduces the collapse and refuses to write the corrupt bundle", profile=True)])
    case("bundle/conflicting-target-ids", "gfx90a (xnack Any) and gfx90a:xnack+ in one bundle violate the composition rule",
         ["COMPOSE-1", "COMPAT-3"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx90a", GFX90AX], "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("ANY"), "b": u("XNACKON")}, {"fail": "COMPOSE-1"},
         [note([14], "COMPOSE-1", {"bundle": {}}, "14 has no composition check", profile=True, ref=f"{BID} COMPOSE-1")],
         source=f"{CLI} Check order")
    case("bundle/conflict-one-directional", "{gfx906:sramecc+:xnack+, gfx906:xnack+}: sramecc is Any in one entry only",
         ["COMPOSE-1"], "bundle",
         {"targets": [HOST, "hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"],
          "inputs": ["host", "a", "b"]},
         {"host": u("HOSTDATA"), "a": u("BOTH"), "b": u("XNACK")}, {"fail": "COMPOSE-1"},
         [note(ALL, "COMPOSE-1", {"bundle": {}},
               "getConflictTargetIDCombination only checks one direction (sorted set, first ID per processor kept)",
               profile=True, ref=f"{BID} COMPOSE-1 (getConflictTargetIDCombination, clang/lib/Basic/TargetID.cpp)")])
    case("bundle/inputs-targets-mismatch", "Bundling needs one input per target",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host"]}, HD, {"fail": "CLI-1"},
         source=f"{LLVM_TEST} (CK-ERR: number of input files and targets should match)")
    case("bundle/two-outputs", "Bundling writes exactly one output",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "outputs": 2}, HD,
         {"fail": "CLI-1"}, source=f"{CLI} Check order")
    case("bundle/no-output", "Bundling without an output is refused",
         ["CLI-1"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "outputs": 0}, HD,
         {"fail": "CLI-1"}, source=f"{CLI} Check order")
    case("bundle/no-targets", "Bundling without -targets is refused",
         ["CLI-1"], "bundle", {"targets": [], "inputs": ["host"]}, HD,
         {"fail": "CLI-1"}, source=f"{CLI} Check order")
    case("bundle/unknown-kind", "'cuda' is not an offload kind",
         ["ID-2"], "bundle", {"targets": [HOST, "cuda-nvptx64-nvidia-cuda--sm_70"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-2"}, source=f"{BID} Written IDs (unknown kind)")
    case("bundle/kind-case-sensitive", "'HIP' is not an offload kind (case-sensitive)",
         ["ID-2"], "bundle", {"targets": [HOST, "HIP-amdgcn-amd-amdhsa--gfx906"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-2"}, source=f"{BID} ID-2")
    case("bundle/unknown-arch", "'bogus' is not a known architecture",
         ["ID-3"], "bundle", {"targets": [HOST, "openmp-bogus-unknown-linux-gnu"], "inputs": ["host", "dev"]}, HD,
         {"fail": "ID-3"}, source=f"{BID} Written IDs (unknown triple)")
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
               profile=True, ref=f"{BID} Written IDs")])
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
         {"bundle": {}}, source=f"{BID} Written IDs (LLVM keeps the given order: the release spelling)")
    case("bundle/nvptx-environment", "A non-AMDHSA triple is written with four components (unknown environment)",
         ["ID-4"], "bundle", {"targets": [HOST, SM70], "inputs": ["host", "dev"]}, HD, {"bundle": {}},
         source=f"{BID} Written IDs")
    case("bundle/amdhsa-environment", "An AMDHSA triple is written with an empty environment",
         ["ID-4"], "bundle", {"targets": [HOST, "openmp-amdgcn-amd-amdhsa-gnu-gfx906"], "inputs": ["host", "dev"]},
         HD, {"bundle": {}}, source=f"{BID} Written IDs")
    case("bundle/missing-input-file", "A missing input fails and leaves no output",
         ["CLI-5"], "bundle", {"targets": [HOST, GFX906], "inputs": ["host", "nothere"]},
         {"host": u("HOSTDATA"), "nothere": {"missing": True}}, {"fail": "*", "no_outputs": True},
         [note([14, 16], "CLI-5", "failure", "14 and 16 create the output before reading the inputs (0-byte file left)",
               ref=f"{CLI} Check order")])
    case("bundle/invalid-type", "An unknown -type fails and leaves no output",
         ["CLI-5"], "bundle", {"type": "xyz", "targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD,
         {"fail": "*", "no_outputs": True},
         [note([14, 16], "CLI-5", "failure", "14 and 16 leave a 0-byte output", ref=f"{CLI} Check order")])
    case("bundle/negative-align", "-bundle-align=-1 is not an alignment",
         ["BIN-11"], "bundle",
         {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "bundle_align": 18446744073709551615}, HD,
         {"fail": "BIN-11"}, source=f"{CLI} Options (value invalid for uint argument)")


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
         {"outputs": [u("DEVDATA")]}, source=f"{CLI} CLI-3")
    case("unbundle/reverse-order", "Requests in another order than the entries",
         ["CLI-2"], "unbundle", {"targets": [GFX906, HOST], "inputs": ["fat"]}, ins,
         {"outputs": [u("DEVDATA"), u("HOSTDATA")]})
    four = {"fat": bundle([entry(W(SM70), "SM70"), entry(W(HIPV4_90AX), "GFX90A"), entry(W(HOST), "HOST"),
                           entry(W(GFX906), "GFX906")])}
    case("unbundle/three-of-four", "Three of four entries, in another order",
         ["CLI-2", "CLI-4"], "unbundle", {"targets": [GFX906, SM70, HOST], "inputs": ["fat"]}, four,
         {"outputs": [u("GFX906"), u("SM70"), u("HOST")]}, source=f"{BIN} Reader order")
    case("unbundle/all-four", "All four entries of the Reader order example bundle",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906, HIPV4_90AX, SM70], "inputs": ["fat"]}, four,
         {"outputs": [u("HOST"), u("GFX906"), u("GFX90A"), u("SM70")]}, source=f"{BIN} Reader order")
    miss = "hip-amdgcn-amd-amdhsa--gfx908"
    case("unbundle/missing-one", "A requested target that is not in the bundle",
         ["CLI-4"], "unbundle", {"targets": [HOST, GFX906, miss], "inputs": ["fat"]}, ins, {"fail": "CLI-4"},
         source=f"{LLVM_TEST} (Can't find bundles for); {CLI} CLI-4")
    case("unbundle/missing-leaves-no-output", "A failed unbundling writes none of its outputs",
         ["CLI-5", "CLI-4"], "unbundle", {"targets": [HOST, GFX906, miss], "inputs": ["fat"]}, ins,
         {"fail": "CLI-4", "no_outputs": True},
         [note(ALL, "CLI-5", {"fail": "CLI-4"}, "outputs found before the error are still written",
               ref=f"{CLI} CLI-4 (outputs already written stay on disk)")])
    case("unbundle/missing-two", "Two missing targets",
         ["CLI-4"], "unbundle",
         {"targets": [HOST, miss, "openmp-nvptx64-nvidia-cuda--sm_80"], "inputs": ["fat"]}, ins, {"fail": "CLI-4"},
         source=f"{CLI} CLI-4")
    case("unbundle/missing-three", "Three missing targets",
         ["CLI-4"], "unbundle",
         {"targets": [miss, "openmp-nvptx64-nvidia-cuda--sm_80", "hip-amdgcn-amd-amdhsa--gfx1030"], "inputs": ["fat"]},
         ins, {"fail": "CLI-4"}, source=f"{CLI} CLI-4")
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
               ref=f"{CLI} CLI-4 (14 only; LLVM docs)")])
    case("unbundle/host-absent", "The host is requested but the bundle has none",
         ["CLI-4"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]}, devonly, {"fail": "CLI-4"},
         source=f"{CLI} CLI-4")
    plain = {"plain": u("not a bundle at all\n")}
    case("unbundle/not-a-bundle", "An input without the magic holds none of the targets",
         ["CLI-4", "BIN-1"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["plain"]}, plain, {"fail": "CLI-4"},
         source=f"{CLI} CLI-4")
    case("unbundle/not-a-bundle-allow-missing", "A non-bundle with -allow-missing-bundles: the host output is the input",
         ["CLI-4", "BIN-1"], "unbundle",
         {"targets": [HOST, GFX906], "inputs": ["plain"], "allow_missing_bundles": True}, plain,
         {"outputs": [{"input": "plain"}, u("")]}, source=f"{CLI} CLI-4")
    case("unbundle/zero-size-entry", "A zero-size entry unbundles to an empty file",
         ["BIN-11", "CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]},
         {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), "")])}, {"outputs": [u("HOSTDATA"), u("")]},
         source=f"{BIN} Writer (zero-size entries)")
    case("unbundle/aligned-4096", "Payloads aligned to 4096",
         ["BIN-11", "BIN-9"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"]},
         {"fat": std_bundle(align=4096)}, {"outputs": [u("HOSTDATA"), u("DEVDATA")]})
    big = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), {"zeros": 65536})], align=4096)}
    case("unbundle/large-payload", "A 64 KiB payload (checked by SHA-256)",
         ["BIN-11", "CLI-2"], "unbundle", {"targets": [GFX906, HOST], "inputs": ["fat"]}, big,
         {"outputs": [{"sha256": hashlib.sha256(b"\0" * 65536).hexdigest()}, u("HOSTDATA")]})
    case("unbundle/two-inputs", "Unbundling takes one input",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat", "fat"]}, ins, {"fail": "CLI-2"},
         source=f"{CLI} Check order")
    case("unbundle/outputs-mismatch", "Unbundling needs one output per target",
         ["CLI-2"], "unbundle", {"targets": [HOST, GFX906], "inputs": ["fat"], "outputs": 1}, ins, {"fail": "CLI-2"},
         source=f"{CLI} Check order")
    case("unbundle/two-hosts-requested", "At most one host target when unbundling",
         ["CLI-3"], "unbundle", {"targets": [HOST, HOST2], "inputs": ["fat"]}, ins, {"fail": "CLI-3"},
         source=f"{CLI} Check order")
    case("unbundle/duplicate-requests", "The same target requested twice",
         ["CLI-3"], "unbundle", {"targets": [GFX906, GFX906], "inputs": ["fat"]}, ins, {"fail": "CLI-3"})
    # Matching (spec/bundle-id.md, Matching)
    hipent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(GFX906, "DEVDATA")])}
    case("unbundle/hipv4-request-hip-entry", "hip and hipv4 are compatible kinds",
         ["COMPAT-1"], "unbundle", {"targets": ["hipv4-amdgcn-amd-amdhsa--gfx906"], "inputs": ["fat"]}, hipent,
         {"outputs": [u("DEVDATA")]},
         [note([14, 16], "COMPAT-1", {"fail": "CLI-4"}, "14 and 16 treat hip and hipv4 as different kinds", profile=True,
               ref=f"{BID} Matching; Where the LLVM docs disagree")])
    ompent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(OMP906, "OMPDATA")])}
    case("unbundle/hip-openmp-compatible", "With -hip-openmp-compatible a hip request takes an openmp entry",
         ["COMPAT-1"], "unbundle",
         {"targets": [GFX906], "inputs": ["fat"], "hip_openmp_compatible": True}, ompent, {"outputs": [u("OMPDATA")]},
         [note([15], "COMPAT-1", {"fail": "CLI-4"}, "15 accepts -hip-openmp-compatible, but its plain unbundling "
               "compares whole IDs: only its archive path honours the option (AR-3)", profile=True, exact=True,
               ref=f"{BID} Matching; spec/archive.md AR-3")],
         source=f"{BID} Matching")
    case("unbundle/hip-openmp-not-requested", "Without the option hip and openmp are incompatible",
         ["COMPAT-1"], "unbundle", {"targets": [GFX906], "inputs": ["fat"]}, ompent, {"fail": "CLI-4"},
         source=f"{BID} Matching")
    anyent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), "ANY")])}
    case("unbundle/feature-any-satisfies", "An entry leaving xnack Any satisfies a request for xnack+",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx906:xnack+"], "inputs": ["fat"]}, anyent,
         {"outputs": [u("ANY")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{BID} Matching (14 compares strings)")])
    xent = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX90AX), "XNACKON")])}
    case("unbundle/feature-set-not-satisfied", "An entry with xnack+ does not satisfy a request leaving xnack Any",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a"], "inputs": ["fat"]}, xent,
         {"fail": "CLI-4"}, source=f"{BID} Matching")
    case("unbundle/feature-opposite", "xnack+ does not satisfy xnack-",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack-"], "inputs": ["fat"]}, xent,
         {"fail": "CLI-4"}, source=f"{BID} Matching")
    case("unbundle/feature-superset", "A request setting more features than the entry",
         ["COMPAT-3"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+"], "inputs": ["fat"]},
         xent, {"outputs": [u("XNACKON")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{BID} Matching")])
    case("unbundle/feature-order", "Feature order does not matter",
         ["COMPAT-3", "TID-4"], "unbundle", {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"], "inputs": ["fat"]},
         xent, {"outputs": [u("XNACKON")]},
         [note([14], "COMPAT-3", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{BID} Matching")])
    nv = {"fat": bundle([entry(W(HOST), "HOSTDATA"), entry(SM70, "SM70")])}
    case("unbundle/empty-environment-is-unknown", "openmp-nvptx64-nvidia-cuda--sm_70 satisfies ...-unknown-sm_70",
         ["COMPAT-2"], "unbundle", {"targets": ["openmp-nvptx64-nvidia-cuda-unknown-sm_70"], "inputs": ["fat"]}, nv,
         {"outputs": [u("SM70")]},
         [note([14], "COMPAT-2", {"fail": "CLI-4"}, "14 compares IDs as strings", profile=True, ref=f"{BID} Matching")])
    case("unbundle/vendor-differs", "amd and unknown vendors are different triples",
         ["COMPAT-2"], "unbundle", {"targets": ["hip-amdgcn-unknown-amdhsa--gfx906"], "inputs": ["fat"]}, hipent,
         {"fail": "CLI-4"}, source="tests/data/llvm-id-vectors.json")
    case("unbundle/one-entry-two-requests", "One entry compatible with two requests satisfies only one",
         ["CLI-4", "COMPAT-3"], "unbundle",
         {"targets": ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-"],
          "inputs": ["fat"]}, xent, {"fail": "CLI-4"}, source=f"{CLI} CLI-4")
    case("unbundle/conflicting-requests", "Requests gfx90a:xnack+ and gfx90a:xnack+:sramecc+ are not composable",
         ["COMPOSE-1"], "unbundle",
         {"targets": [GFX90AX, "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+"], "inputs": ["fat"]}, xent,
         {"fail": "COMPOSE-1"},
         [note([14], "COMPOSE-1", {"fail": "CLI-4"}, "14 has no composition check; the second request is simply missing",
               profile=True)], source=f"{CLI} Check order (conflicting targets, also when unbundling)")
    # Cross-version (spec/bundle-id.md, Matching): bundles as each release writes them, requested with the original spellings.
    req = [HOST, GFX906, SM70]
    pay = ["HOST", "HIP", "OMP"]
    for writer, ids, n in [
        (14, [HOST, GFX906, SM70], [note([19], "ID-4", {"fail": "CLI-4"},
                                         "19 looks for host-x86_64-unknown-linux-gnu- and cannot find the 14/16 spelling",
                                         profile=True, ref=f"{BID} Matching")]),
        (19, [HOST + "-", GFX906, SM70], [note([14, 16], "ID-4", {"fail": "CLI-4"},
                                               "14 and 16 compare the host ID as a string: -gnu vs -gnu-",
                                               profile=True, ref=f"{BID} Matching")]),
        (22, [HOST + "-", GFX906, "openmp-nvptx64-nvidia-cuda-unknown-sm_70"],
         [note([14, 16], "ID-4", {"fail": "CLI-4"}, "14 and 16 cannot match the 22 spellings of the host (and, for 14, of sm_70)",
               profile=True, ref=f"{BID} Matching")]),
    ]:
        case(f"unbundle/written-by-{writer}", f"A bundle as LLVM {writer} writes it, unbundled with the original -targets",
             ["ID-4", "COMPAT-2", "CLI-4"], "unbundle", {"targets": req, "inputs": ["fat"]},
             {"fat": bundle([entry(i, p) for i, p in zip(ids, pay)])}, {"outputs": [u(p) for p in pay]}, n,
             source=f"{BID} Matching (each release's spelling of the host and of sm_70)")


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
    return [note(ALL, what[0], "crash", what[1], ref=f"{BIN} {what[0]}")]


def nobundles(rule, why):
    return ([note(ALL, rule, {"list": []}, why + ": LLVM sees no bundles and lists nothing", profile=True,
                  ref=f"{BIN} {rule}")],
            [note(ALL, rule, {"fail": "CLI-4"}, why + ": LLVM sees no bundles (Can't find bundles)", profile=True,
                  ref=f"{BIN} {rule}")])


def malformed():
    src = f"{BIN} (the LLVM releases of the case's rules); {MALFORMED}"
    case("malformed/good-list", "good.bin: -list", ["BIN-1", "BIN-12"], "list", {"inputs": ["in"]},
         {"in": hx(GOOD)}, {"list": [HOST + "-", GFX906]}, source=src + "good.bin")
    case("malformed/good-unbundle", "good.bin: unbundle host and device", ["BIN-1", "CLI-2"], "unbundle",
         {"targets": [HOST, GFX906], "inputs": ["in"]}, {"in": hx(GOOD)}, {"outputs": [u("HOSTDATA"), u("DEVDATA")]},
         [note([14, 16], "ID-4", {"fail": "CLI-4"}, "14 and 16 compare the host ID as a string: -gnu vs -gnu-",
               profile=True, ref=f"{BID} Matching")], source=src + "good.bin")
    crash = "SIGSEGV: the header reader stops at the bad record after a valid one and an uninitialised iterator is used"
    pair("trunc153", "good.bin without its last byte (second payload past the end)", ["BIN-5"],
         good_recipe(truncate=153), "BIN-5", crash_notes(("BIN-5", crash)), crash_notes(("BIN-5", crash)), src + "trunc153.bin")
    ln, un = nobundles("BIN-5", "the first record's payload is outside the file")
    pair("trunc139", "good.bin cut after the header (no payloads)", ["BIN-5"], good_recipe(truncate=139), "BIN-5", ln, un, src)
    ln, un = nobundles("BIN-2", "the first record is incomplete")
    pair("trunc109", "good.bin cut inside the second ID", ["BIN-2"], good_recipe(truncate=109), "BIN-2",
         [note(ALL, "BIN-2", {"list": []}, "the first record's payload is outside the cut file: LLVM sees no bundles",
               profile=True, ref=f"{BIN} BIN-2")],
         [note(ALL, "BIN-2", {"fail": "CLI-4"}, "LLVM sees no bundles", profile=True, ref=f"{BIN} BIN-2")], src)
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
               profile=True, ref=f"{BIN} BIN-5")], source=src + "offsizewrap.bin")
    case("malformed/offsizewrap-unbundle", "offset + size of the second entry wraps past 2^64: unbundle", ["BIN-5"],
         "unbundle", {"targets": [GFX906], "inputs": ["in"]}, {"in": wrap}, {"fail": "BIN-5"},
         [note(ALL, "BIN-5", "crash", "LLVM copies heap memory into the output: 14 aborts, 16-22 exit 1 after the leak",
               ref=f"{BIN} BIN-5")], source=src + "offsizewrap.bin")
    # Non-conforming but readable: LLVM reads them leniently; the profile reproduces that.
    lenient = "LLVM's reader does not check this"

    def lenient_ref(rule):
        # An invalid entry ID inside a bundle is BIN-4's business.
        return f"{BIN} {rule if rule.startswith('BIN-') else 'BIN-4'}"

    def readable(name, title, rules, inp, rule, listing, outputs, targets=(GFX906,), extra_list=(), extra_unb=(),
                 source=None, why=lenient):
        case(f"malformed/{name}-list", f"{title}: -list", rules, "list", {"inputs": ["in"]}, {"in": inp},
             {"fail": rule}, [note(ALL, rule, {"list": listing}, why, profile=True, ref=lenient_ref(rule))] + list(extra_list),
             source=source)
        case(f"malformed/{name}-unbundle", f"{title}: unbundle", rules, "unbundle",
             {"targets": list(targets), "inputs": ["in"]}, {"in": inp}, {"fail": rule},
             [note(ALL, rule, {"outputs": outputs}, why, profile=True, ref=lenient_ref(rule))] + list(extra_unb),
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
    case("malformed/idlen0-list", "first entry ID of length 0 (idlen0.bin): -list", ["BIN-4"], "list",
         {"inputs": ["in"]}, {"in": inp}, {"fail": "BIN-4"},
         [note(ALL, "BIN-4", {"list": ["", GFX906]}, "-list prints an empty line for the empty ID", profile=True,
               ref=f"{BIN} BIN-4")], source=src + "idlen0.bin")
    case("malformed/idlen0-unbundle", "first entry ID of length 0 (idlen0.bin): unbundle", ["BIN-4"], "unbundle",
         {"targets": [GFX906], "inputs": ["in"]}, {"in": inp}, {"fail": "BIN-4"},
         [note([14, 16, 19], "BIN-4", {"outputs": [u("DEVDATA")]}, "the empty ID is skipped", profile=True,
               ref=f"{BIN} BIN-4"),
          note([22], "BIN-4", {"fail": "ID-1"}, "22: invalid bundle id read from the bundle", profile=True,
               ref=f"{BIN} BIN-4")], source=src + "idlen0.bin")


def listing():
    four = [SM70, HIPV4_90AX, HOST, GFX906]
    case("list/four-entries", "-list shows every ID (the Reader order example bundle; LLVM prints StringMap order)",
         ["BIN-12"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(t), t[:4]) for t in four])}, {"list": [W(t) for t in four]},
         source=f"{BIN} Reader order")
    three = [GFX906, HOST, "hip-amdgcn-amd-amdhsa--gfx908:xnack+"]
    case("list/three-entries", "-list of three entries (14/16 and 19/22 print different orders)",
         ["BIN-12"], "list", {"inputs": ["fat"]},
         {"fat": bundle([entry(W(t), "X") for t in three])}, {"list": [W(t) for t in three]},
         source=f"{BIN} Reader order (StringMap as in llvm/lib/Support/StringMap.cpp)")
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
# Fixtures: small objects and LLVM outputs, made once by real LLVM
# (--rebuild-fixtures) and kept in conformance/fixtures/ (see its README).
# ---------------------------------------------------------------------------

FIXTURES = os.path.join(ROOT, "conformance", "fixtures")
K_HIP = os.path.join(ROOT, "tests", "fixtures", "k.hip")
HOST_C = "int host_fn(void) { return 42; }\n"
HOST_OBJECTS = {  # fixture -> clang-22 --target
    "host-x86_64.o": "x86_64-unknown-linux-gnu",
    "host-i386.o": "i386-unknown-linux-gnu",
    "host-ppc64.o": "powerpc64-unknown-linux-gnu",
    "host-macho.o": "x86_64-apple-darwin",
    "host-coff.o": "x86_64-pc-windows-msvc",
}


def llvm_bin(r, tool):
    return f"/usr/lib/llvm-{r}/bin/{tool}"


# Inputs of the -compress goldens: name -> (type, targets, payloads).
def big_payload(seed):
    return "".join("  v_add_u32 v%d, v%d, s%d ; kernel %d line %d\n" % (i % 256, (i * seed) % 256, i % 102, seed, i)
                   for i in range(120))


GOLDEN_INPUTS = {
    "good": ("bc", ["host-x86_64-unknown-linux-gnu", GFX906], ["HOSTDATA", "DEVDATA"]),
    "big": ("bc", ["host-x86_64-unknown-linux-gnu", GFX906, GFX90AX], ["HOSTDATA", big_payload(7), big_payload(13)]),
    "text": ("s", ["host-x86_64-unknown-linux-gnu", GFX906], ["host line 1\nhost line 2\n", "dev no newline"]),
}
# Golden runs: name -> (input, release, extra options, environment).
GOLDEN_RUNS = {
    "good-22": ("good", 22, [], {}),
    "good-22-v2": ("good", 22, [], {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"}),
    "good-19": ("good", 19, [], {}),
    "big-22": ("big", 22, [], {}),
    "big-22-level-1": ("big", 22, ["-compression-level=1"], {}),
    "big-19-level-1": ("big", 19, ["-compression-level=1"], {}),
    "big-22-level-19": ("big", 22, ["-compression-level=19"], {}),
    "big-19": ("big", 19, [], {}),
    "big-19-level-19": ("big", 19, ["-compression-level=19"], {}),
    "text-22": ("text", 22, [], {}),
    "text-19": ("text", 19, [], {}),
}


def rebuild_fixtures():
    import tempfile
    os.makedirs(FIXTURES, exist_ok=True)
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "h.c")
        open(src, "w").write(HOST_C)
        for name, triple in HOST_OBJECTS.items():
            subprocess.run([llvm_bin(22, "clang"), "--target=" + triple, "-c", "h.c", "-o",
                            os.path.join(FIXTURES, name)], cwd=t, check=True)
        shutil.copy(K_HIP, os.path.join(t, "k.hip"))
        for r in FIXTURE_RELEASES:
            subprocess.run([llvm_bin(r, "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "--offload-arch=gfx906",
                            "-fgpu-rdc", "-c", "k.hip", "-o", os.path.join(FIXTURES, f"k-rdc-{r}.o")], cwd=t, check=True)
        for r in (19, 22):
            subprocess.run([llvm_bin(r, "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "--offload-arch=gfx906",
                            "--offload-compress", "-c", "k.hip", "-o", os.path.join(FIXTURES, f"k-compress-{r}.o")],
                           cwd=t, check=True)
    rebuild_goldens()



def clang_dir(name):
    """A fixed scratch directory for clang builds: clang derives the HIP
    CUID (and so the code object bytes) from the source path, so a random
    temporary directory would make the corpus differ on every run."""
    d = os.path.join(tempfile.gettempdir(), "offload-kit-corpus-" + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d

def locate_cases():
    """locate: where each code object of a host file is, as runtimes and
    ROCm's tools find them. Inputs: host objects from offload-kit's
    generator (valid, and one per rule a .hip_fatbin can break) and from
    clang; the expectation is the strict reader's listing (ID, offset, size)
    or the rule the generator broke (its sidecar)."""
    import tempfile
    ok = OK_BIN

    def listing(path):
        out = subprocess.run([ok, "list", path, "--json"], check=True, capture_output=True, text=True)
        return [{"id": e["id"], "offset": e["offset"], "size": e["size"]} for e in json.loads(out.stdout)["entries"]]

    def generated(t, kind, seed, rule=None):
        d = os.path.join(t, f"{kind}-{seed}-{rule}")
        argv = [ok, "generate", "--kind", kind, "--count", "1", "--seed", str(seed), "--out", d,
                "--max-size", "65536"]
        if rule:
            argv += ["--malformed", rule]
        subprocess.run(argv, check=True, capture_output=True)
        f = [n for n in os.listdir(d) if not n.endswith(".json")][0]
        side = json.load(open(os.path.join(d, f + ".json"))) if rule else None
        return os.path.join(d, f), side

    t = clang_dir("locate")
    if True:
        for seed in range(12):
            f, _ = generated(t, "fatbin", seed)
            case(f"locate/fatbin-{seed}", f"The code objects of a generated .hip_fatbin (offload-kit generate --kind fatbin --seed {seed})",
                 ["FAT-1", "FAT-2"], "locate", {"inputs": ["host"]}, {"host": b64(open(f, "rb").read())},
                 {"locate": listing(f)}, source="offload-kit generate (spec/object-bundle.md FAT-1)")
        rules = subprocess.run([ok, "generate", "--list-kinds"], check=True, capture_output=True, text=True).stdout
        fat_rules = [l.split("--malformed:")[1].split() for l in rules.splitlines()
                     if "--malformed:" in l and rules.splitlines()[rules.splitlines().index(l) - 1].startswith("fatbin")][0]
        for rule in fat_rules:
            f, side = generated(t, "fatbin", 100, rule)
            case(f"locate/fatbin-{rule.lower()}", f"A .hip_fatbin breaking {rule} at offset {side['offset']}: {side['description'].split(';')[0]}",
                 [rule], "locate", {"inputs": ["host"]}, {"host": b64(open(f, "rb").read())},
                 {"fail": rule}, source="offload-kit generate --malformed (sidecar)")
        shutil.copy(K_HIP, os.path.join(t, "k.hip"))
        for name, archs in (("two-archs", ["gfx906", "gfx90a"]), ("target-ids", ["gfx90a:xnack+", "gfx908:sramecc-:xnack-"])):
            out = os.path.join(t, name + ".o")
            subprocess.run([llvm_bin(22, "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "-c", "k.hip", "-o", out] +
                           [f"--offload-arch={a}" for a in archs], cwd=t, check=True)
            case(f"locate/clang-22-{name}", f"clang 22 HIP object for {', '.join(archs)}: the code objects of its .hip_fatbin",
                 ["FAT-1"], "locate", {"inputs": ["host"]}, {"host": b64(open(out, "rb").read())},
                 {"locate": listing(out)}, source="clang-22 -x hip --offload-arch=… -c k.hip")
    for r in (19, 22):
        f = os.path.join(FIXTURES, f"k-compress-{r}.o")
        case(f"locate/clang-{r}-compressed", f"clang {r} --offload-compress: a compressed bundle in .hip_fatbin (offsets inside the decompressed bundle)",
             ["FAT-3", "CCOB-9"], "locate", {"inputs": ["host"]}, {"host": b64(fixture(f"k-compress-{r}.o"))},
             {"locate": listing(f)}, source=f"conformance/fixtures/k-compress-{r}.o")
    f = os.path.join(FIXTURES, "k-rdc-22.o")
    case("locate/clang-22-rdc", "clang 22 -fgpu-rdc object: bundle sections, no .hip_fatbin",
         ["OBJ-4", "OBJ-9"], "locate", {"inputs": ["host"]}, {"host": b64(fixture("k-rdc-22.o"))},
         {"locate": listing(f)}, source="conformance/fixtures/k-rdc-22.o")


LOOKUP_REQUESTS = [
    "amdgcn-amd-amdhsa--gfx906",
    "amdgcn-amd-amdhsa--gfx906:xnack-",
    "amdgcn-amd-amdhsa--gfx908:xnack+",
    "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+",
    "amdgcn-amd-amdhsa--gfx1030",
    "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    "amdgcn-amd-amdhsa--gfx1100",
]


IMAGE_RULES = ("CO-2", "CO-3", "CO-4", "CO-5")


def image_breaks(co):
    """One broken copy of the ELF64 code object `co` per image rule
    (spec/code-object.md): (what was done, bytes)."""
    import struct
    u16 = lambda at: struct.unpack_from("<H", co, at)[0]
    u32 = lambda at: struct.unpack_from("<I", co, at)[0]
    u64 = lambda at: struct.unpack_from("<Q", co, at)[0]
    shoff, shnum = u64(40), u16(60)
    sections = [(i, shoff + 64 * i, u32(shoff + 64 * i + 4)) for i in range(shnum)]

    def put(fmt, at, v, b=None):
        b = bytearray(co if b is None else b)
        struct.pack_into(fmt, b, at, v)
        return bytes(b)

    data = next(h for i, h, ty in sections if ty not in (0, 8))
    strtab = next(h for i, h, ty in sections if ty == 3)
    last = u64(strtab + 24) + u64(strtab + 32) - 1
    unterminated = bytearray(co)
    unterminated[last] = ord("x")
    return {
        "CO-2": ("e_version 2", put("<I", 20, 2)),
        "CO-3": ("e_shoff past the end of the object", put("<Q", 40, len(co))),
        "CO-4": ("a section's contents moved past the end", put("<Q", data + 24, len(co) + 4096)),
        "CO-5": ("a string table without its final NUL", bytes(unterminated)),
    }


def lookup_cases():
    """lookup: the code object a GPU runtime picks for each GPU (as the HIP
    runtime asks comgr). The spec allows any entry compatible with the
    request asked as a hip target (COMPAT-1..3), none when no entry is; a
    malformed bundle must be refused."""
    import tempfile
    ok = OK_BIN

    def expect_for(path, requests=LOOKUP_REQUESTS):
        v = json.loads(subprocess.run([ok, "validate", "--json", path], capture_output=True, text=True).stdout)
        # A broken image (CO-2..CO-5) leaves the container readable: that
        # entry is no answer (below), the file is not refused.
        container = [x for x in v["violations"] if x["rule"] not in IMAGE_RULES]
        if container:
            first = min(container, key=lambda x: x["offset"] if x["offset"] is not None else 1 << 64)
            return {"fail": first["rule"]}, [first["rule"]]
        entries = json.loads(subprocess.run([ok, "list", path, "--json"], check=True, capture_output=True,
                                            text=True).stdout)["entries"]
        # An entry whose code object contradicts its ID (CO-1) is refused by
        # the loader on the GPUs its ID claims: no answer for them.
        report = json.loads(subprocess.run([ok, "inspect", "--json", path], capture_output=True,
                                           text=True).stdout)["files"][0]["report"]
        refused = {(e["offset"], e["size"]) for e in report["entries"] if e["breaks_co_1"] or e.get("broken_image")}
        broken = sorted({e["broken_image"]["rule"] for e in report["entries"] if e.get("broken_image")})
        out = []
        for r in requests:
            cands = []
            for e in entries:
                c = json.loads(subprocess.run([ok, "conformance", "spec", "compatible", e["id"], "hip-" + r],
                                              check=True, capture_output=True, text=True).stdout)
                if c["compatible"] and (e["offset"], e["size"]) not in refused:
                    cands.append([e["offset"], e["size"]])
            out.append({"request": r, "candidates": cands})
        co1 = any(e["breaks_co_1"] for e in report["entries"])
        return {"lookup": out}, ["COMPAT-1", "COMPAT-2", "COMPAT-3"] + (["CO-1"] if co1 else []) + broken

    with tempfile.TemporaryDirectory() as t:
        for seed in range(10):
            d = os.path.join(t, f"b{seed}")
            subprocess.run([ok, "generate", "--kind", "binary", "--count", "1", "--seed", str(seed), "--out", d,
                            "--target-ids", ",".join(["host-x86_64-unknown-linux-gnu-"] +
                                                    ["hipv4-" + r for r in LOOKUP_REQUESTS[1:]] +
                                                    ["hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a",
                                                     "openmp-amdgcn-amd-amdhsa--gfx1030"])],
                           check=True, capture_output=True)
            f = os.path.join(d, os.listdir(d)[0])
            expect, rules = expect_for(f)
            case(f"lookup/bundle-{seed}", f"The code object a HIP runtime picks per GPU in a generated bundle (seed {seed})",
                 rules, "lookup", {"inputs": ["fatbin"], "requests": LOOKUP_REQUESTS},
                 {"fatbin": b64(open(f, "rb").read())}, expect,
                 source="offload-kit generate --kind binary; spec/bundle-id.md COMPAT-1..3")
    # CO-1: clang-22's own gfx906 and gfx90a:xnack+ code objects bundled
    # under IDs that contradict them (a relabelled library, a build script
    # that swapped its inputs): the ID promises a GPU the loader refuses.
    t = clang_dir("co1")
    shutil.copy(K_HIP, os.path.join(t, "k.hip"))
    subprocess.run([llvm_bin(22, "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "-c", "k.hip", "-o", "k.o",
                    "--offload-arch=gfx906", "--offload-arch=gfx90a:xnack+"], cwd=t, check=True)
    for tid, name in (("gfx906", "gfx906.co"), ("gfx90a:xnack+", "gfx90a-xnack-on.co")):
        subprocess.run([ok, "extract", "k.o", "--id", "hipv4-amdgcn-amd-amdhsa--" + tid, "-o", name], cwd=t,
                       check=True)
    open(os.path.join(t, "host"), "wb").close()
    co1 = {
        "swapped": ("the gfx906 and gfx90a:xnack+ code objects swapped between their IDs",
                    [("gfx906", "gfx90a-xnack-on.co"), ("gfx90a:xnack+", "gfx906.co")]),
        "one-relabelled": ("a right gfx906 entry beside a gfx906 object labelled gfx90a:xnack+",
                           [("gfx906", "gfx906.co"), ("gfx90a:xnack+", "gfx906.co")]),
        "xnack-contradicted": ("the gfx90a:xnack+ object (xnack on) labelled gfx90a:xnack-, and the gfx906 one right",
                               [("gfx906", "gfx906.co"), ("gfx90a:xnack-", "gfx90a-xnack-on.co")]),
    }
    for name, (what, pairs) in co1.items():
        targets = ["host-x86_64-unknown-linux-gnu-"] + ["hipv4-amdgcn-amd-amdhsa--" + tid for tid, _ in pairs]
        out = os.path.join(t, name + ".bundle")
        subprocess.run([ok, "bundler", "-type=bc", "-bundle-align=4096", "-targets=" + ",".join(targets),
                        "-input=host"] + ["-input=" + f for _, f in pairs] + ["-output=" + out], cwd=t, check=True)
        requests = LOOKUP_REQUESTS + ["amdgcn-amd-amdhsa--gfx90a:xnack-", "amdgcn-amd-amdhsa--gfx90a:xnack+"]
        expect, rules = expect_for(out, requests)
        assert "CO-1" in rules, name
        case(f"lookup/co1-{name}", f"CO-1: {what} (clang 22 code objects)", rules, "lookup",
             {"inputs": ["fatbin"], "requests": requests}, {"fatbin": b64(open(out, "rb").read())}, expect,
             source="clang-22 -x hip --offload-arch=gfx906 --offload-arch=gfx90a:xnack+ -c k.hip; offload-kit bundler "
                    "-type=bc; spec/code-object.md CO-1")
    # CO-2..CO-5: clang-22's gfx906 code object with its ELF image broken
    # (what a loader maps), beside the right gfx90a:xnack+ one: the broken
    # entry is no answer, the other still is.
    co = open(os.path.join(t, "gfx906.co"), "rb").read()
    for rule, (what, broken) in image_breaks(co).items():
        name = "image-" + rule.lower()
        f = os.path.join(t, name + ".co")
        open(f, "wb").write(broken)
        out = os.path.join(t, name + ".bundle")
        subprocess.run([ok, "bundler", "-type=bc", "-bundle-align=4096",
                        "-targets=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx906,"
                        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
                        "-input=host", "-input=" + f, "-input=gfx90a-xnack-on.co", "-output=" + out],
                       cwd=t, check=True)
        requests = LOOKUP_REQUESTS + ["amdgcn-amd-amdhsa--gfx90a:xnack+"]
        expect, rules = expect_for(out, requests)
        assert rule in rules, (rule, rules)
        case(f"lookup/{name}", f"{rule}: clang 22's gfx906 code object with {what}, beside a right gfx90a:xnack+ one",
             rules, "lookup", {"inputs": ["fatbin"], "requests": requests}, {"fatbin": b64(open(out, "rb").read())},
             expect, source="clang-22 -x hip --offload-arch=gfx906 --offload-arch=gfx90a:xnack+ -c k.hip; the gfx906 "
                            f"object's ELF changed ({what}); offload-kit bundler -type=bc; spec/code-object.md {rule}")
    for name in ("two-targets", "any-before-specific", "zero-size-first", "offset-beyond-end", "size-beyond-end",
                 "offset-zero-header", "huge-count", "generic-entry", "kind-hcc"):
        f = os.path.join(ROOT, "fuzz", "findings", "comgr-5.2", name + ".bin")
        expect, rules = expect_for(f)
        case(f"lookup/comgr-{name}", f"comgr 5.2 finding reproducer {name}.bin (fuzz/findings/comgr-5.2/README.md)",
             rules, "lookup", {"inputs": ["fatbin"], "requests": LOOKUP_REQUESTS},
             {"fatbin": b64(open(f, "rb").read())}, expect, source=f"fuzz/findings/comgr-5.2/{name}.bin")


def rebuild_goldens():
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        goldens = {}
        for name, (inp, r, opts, env) in sorted(GOLDEN_RUNS.items()):
            ty, targets, payloads = GOLDEN_INPUTS[inp]
            files = []
            for i, p in enumerate(payloads):
                f = os.path.join(t, f"{inp}{i}")
                open(f, "w").write(p)
                files.append(f)
            out = os.path.join(t, name + ".out")
            e = {k: v for k, v in os.environ.items() if not k.startswith(("OFFLOAD_BUNDLER_", "COMPRESSED_BUNDLE"))}
            e.update(env)
            argv = [llvm_bin(r, "clang-offload-bundler"), f"-type={ty}", "-targets=" + ",".join(targets)] + \
                [f"-input={f}" for f in files] + [f"-output={out}", "-compress"] + opts
            subprocess.run(argv, check=True, env=e)
            goldens[name] = {"input": inp, "release": r, "options": opts, "env": env,
                             "hex": open(out, "rb").read().hex()}
        with open(os.path.join(FIXTURES, "compress-goldens.json"), "w") as f:
            f.write(json.dumps(goldens, indent=1, sort_keys=True) + "\n")


def fixture(name):
    return open(os.path.join(FIXTURES, name), "rb").read()


def b64(b):
    return {"base64": base64.b64encode(b).decode()}


def goldens():
    return json.load(open(os.path.join(FIXTURES, "compress-goldens.json")))


def elf_sections(b):
    """[(name, type, flags, offset, size)] of an ELF file (any class, either byte order), section 0 excluded."""
    is64 = b[4] == 2
    e = ">" if b[5] == 2 else "<"
    if is64:
        shoff, = struct.unpack_from(e + "Q", b, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", b, 0x3a)
    else:
        shoff, = struct.unpack_from(e + "I", b, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", b, 0x2e)
    hdrs = []
    for i in range(shnum):
        at = shoff + i * shentsize
        if is64:
            name, typ, flags, _, off, size = struct.unpack_from(e + "IIQQQQ", b, at)
        else:
            name, typ, flags, _, off, size = struct.unpack_from(e + "IIIIII", b, at)
        hdrs.append((name, typ, flags, off, size))
    stroff = hdrs[shstrndx][3]
    out = []
    for name, typ, flags, off, size in hdrs[1:]:
        end = b.index(b"\0", stroff + name)
        out.append((b[stroff + name:end].decode(), typ, flags, off, size))
    return out


def host_sections(b):
    """Section names of an object without its bundle sections (what OBJ-11 unbundles)."""
    return [n for n, *_ in elf_sections(b) if not n.startswith("__CLANG_OFFLOAD_BUNDLE__")]


def bundle_sections(b):
    """[(id, contents)] of the bundle sections, in section order."""
    return [(n[len("__CLANG_OFFLOAD_BUNDLE__"):], b[off:off + size]) for n, _, _, off, size in elf_sections(b)
            if n.startswith("__CLANG_OFFLOAD_BUNDLE__")]


# ---------------------------------------------------------------------------
# Text bundles (spec/text-bundle.md)
# ---------------------------------------------------------------------------

TXT = "spec/text-bundle.md"
TXT_TEST = "tests/text_bundle.rs"
COMMENT = {"i": "//", "ii": "//", "cui": "//", "hipi": "//", "d": "#", "ll": ";", "s": "#"}
GFX90A = "hip-amdgcn-amd-amdhsa--gfx90a"
HOST_CONTENT = "host line 1\nhost line 2\n"
DEV_CONTENT = "dev no newline"


def tline(c, kind, id_):
    """A START or END line: LF C SP __CLANG_OFFLOAD_BUNDLE____<kind>__ SP id LF."""
    return f"\n{c} __CLANG_OFFLOAD_BUNDLE____{kind}__ {id_}\n"


def tbytes(c, entries):
    """The bytes every release writes for [(id, content)] (TXT-2)."""
    return "".join(tline(c, "START", i) + p + tline(c, "END", i) for i, p in entries)


def text(ty, *parts, **kw):
    r = {"type": ty, "parts": list(parts)}
    r.update(kw)
    return {"text": r}


def tent(id_, payload=""):
    return {"entry": id_, "payload": payload if isinstance(payload, dict) else u(payload)}


def host_spelling(releases):
    """The host ID as these releases write it (13-16 verbatim, 19/22 with the trailing '-')."""
    return HOST if set(releases) <= {13, 14, 15, 16} else HOST + "-"


def good_text(ty="s"):
    return text(ty, tent(W(HOST), HOST_CONTENT), tent(GFX906, DEV_CONTENT))


def strict_unreachable(what, rule):
    """The native list never reaches the strict text reader's diagnostics for such a file."""
    return bug(["offload-kit-strict"], f"offload-kit list (and validate) of {what} reports 'no offload container "
               "recognised' (BIN-1): src/detect.rs::text_comment only recognises a text bundle that starts with "
               "LF + comment + START marker, so text::parse_strict, which reports this file under " + rule +
               " with its offset and line, is never reached from the command line")


def strict_undetected(rule, why):
    """The native list has no -type: it recognises a text bundle only by its first bytes."""
    return note(None, rule, {"fail": "BIN-1"},
                "the native list has no -type and recognises a text bundle by its first bytes "
                f"(LF + comment + START marker): {why}, so it reports 'no offload container recognised'",
                profile=True, adapters=["offload-kit-strict"], ref=f"{TXT} (Reading strictly); spec/ccob.md CCOB-1")


def text_cases():
    src = f"{TXT_TEST} (differential fixtures)"
    # TXT-1: the marker bytes of every type, written, listed and unbundled.
    for ty, c in COMMENT.items():
        hipi14 = [note([14], "TXT-1", {"fail": "*"}, "14 has no -type=hipi: 'hipi': invalid file type specified",
                       profile=True, ref=f"{TXT} TXT-1; spec/cli.md (options)")] if ty == "hipi" else []
        want = tbytes(c, [(GFX906, "gfx906 code\n"), (GFX90AX, "gfx90a code")])
        case(f"text/txt-1-bundle-{ty}", f"-type={ty} frames each entry with '{c}' comment lines (exact bytes)",
             ["TXT-1", "TXT-2"], "bundle", {"type": ty, "targets": [GFX906, GFX90AX], "inputs": ["a", "b"]},
             {"a": u("gfx906 code\n"), "b": u("gfx90a code")}, {"outputs": [u(want)]}, hipi14,
             source=f"{TXT} TXT-1, TXT-2; {TXT_TEST}::llvm14_write … llvm22_write")
        case(f"text/txt-1-list-{ty}", f"-list -type={ty} of a '{c}' text bundle", ["TXT-1", "TXT-13"], "list",
             {"type": ty, "inputs": ["in"]}, {"in": good_text(ty)}, {"list": [W(HOST), GFX906]}, hipi14,
             source=f"{TXT} TXT-1")
        case(f"text/txt-1-unbundle-{ty}", f"-unbundle -type={ty} of a '{c}' text bundle", ["TXT-1", "TXT-2"],
             "unbundle", {"type": ty, "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": good_text(ty)},
             {"outputs": [u(HOST_CONTENT), u(DEV_CONTENT)]}, hipi14, source=f"{TXT} TXT-1")
    case("text/txt-1-wrong-comment-list", "A '#' text bundle listed as -type=ll: no START line for ';'",
         ["TXT-1", "TXT-3"], "list", {"type": "ll", "inputs": ["in"]}, {"in": good_text("s")}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"list": []}, "LLVM searches for the ';' START marker only and finds no bundle",
               profile=True, ref=f"{TXT} TXT-1"),
          note(None, "TXT-1", {"list": [W(HOST), GFX906]},
               "the native list has no -type: it recognises the '#' bundle by its first bytes and lists it",
               profile=True, adapters=["offload-kit-strict"])])
    case("text/txt-1-wrong-comment-unbundle", "A '#' text bundle unbundled as -type=i: no START line for '//'",
         ["TXT-1", "TXT-3"], "unbundle", {"type": "i", "targets": [GFX906], "inputs": ["in"]},
         {"in": good_text("s")}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"fail": "CLI-4"}, "LLVM finds no '//' bundle: Can't find bundles for …", profile=True,
               ref=f"{TXT} TXT-1")])

    # TXT-2: the writer.
    c = "#"
    example = tbytes(c, [(HOST + "-", HOST_CONTENT), (GFX906, DEV_CONTENT)])
    assert len(example) == 304
    case("text/txt-2-example-s", "The chapter's example: host with a final newline, device without (304 bytes)",
         ["TXT-2", "ID-4"], "bundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["h", "d"]},
         {"h": u(HOST_CONTENT), "d": u(DEV_CONTENT)}, {"outputs": [u(example)]},
         [note([14, 16], "ID-4", {"outputs": [u(tbytes(c, [(HOST, HOST_CONTENT), (GFX906, DEV_CONTENT)]))]},
               "14 and 16 write the host ID verbatim, without the trailing '-' (302 bytes)", profile=True,
               ref=f"{TXT} (Layout, example); spec/bundle-id.md")], source=f"{TXT} (Layout)")
    contents = [("newline-and-none", b"line 1\nline 2\n", b"no final newline"),
                ("empty-and-newline", b"", b"\n"),
                ("blank-lines-and-empty", b"\n\n", b""),
                ("cr-nul-ff", b"a\r\nb\r\n\0\xff", b"\0")]
    for name, a, b in contents:
        wb = (tline(c, "START", GFX906).encode() + a + tline(c, "END", GFX906).encode() +
              tline(c, "START", GFX90AX).encode() + b + tline(c, "END", GFX90AX).encode())
        ins = {"a": hx(a), "b": hx(b)}
        case(f"text/txt-2-contents-{name}", f"Contents are written verbatim: {name.replace('-', ' ')}",
             ["TXT-2"], "bundle", {"type": "s", "targets": [GFX906, GFX90AX], "inputs": ["a", "b"]}, ins,
             {"outputs": [hx(wb)]}, source=f"{TXT} TXT-2; {TXT_TEST}::diff_write")
        rt = {"in": text("s", tent(GFX906, ins["a"]), tent(GFX90AX, ins["b"])), **ins}
        case(f"text/txt-2-round-trip-{name}", f"Contents come back byte for byte: {name.replace('-', ' ')}",
             ["TXT-2", "TXT-13"], "unbundle", {"type": "s", "targets": [GFX906, GFX90AX], "inputs": ["in"]}, rt,
             {"outputs": [{"input": "a"}, {"input": "b"}]}, source=f"{TXT} TXT-2")
    case("text/txt-2-host-not-moved", "Entries keep -targets order; the host is not moved first",
         ["TXT-2", "TXT-13"], "bundle", {"type": "ll", "targets": [GFX906, HOST, GFX90AX], "inputs": ["a", "b", "c"]},
         {"a": u("; dev 1\n"), "b": u("; host\n"), "c": u("; dev 2\n")}, {"bundle": {}},
         source=f"{LLVM_TEST} (CK-TEXTS-UNORDERED)")

    # TXT-3: where the first bundle starts.
    noln = text("s", tent(GFX906, "d1"), tent(W(HOST), "h"), skip=1)
    case("text/txt-3-no-leading-newline-list", "The first START line has no leading LF: LLVM never sees it",
         ["TXT-3"], "list", {"type": "s", "inputs": ["in"]}, {"in": noln}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"list": [W(HOST)]}, "LLVM searches for LF + START marker: the first bundle is not listed",
               profile=True, ref=f"{TXT} TXT-3"),
          ], source=src + " no-leading-newline",
         bugs=[strict_unreachable("a text bundle whose first START line lacks its LF", "TXT-3")])
    case("text/txt-3-no-leading-newline-unbundle", "The first START line has no leading LF: its bundle is not found",
         ["TXT-3"], "unbundle", {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": noln}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"fail": "CLI-4"}, "LLVM does not see the first bundle: Can't find bundles for …",
               profile=True, ref=f"{TXT} TXT-3")], source=src + " no-leading-newline")
    before = text("s", u("junk\n"), tent(W(HOST), HOST_CONTENT), tent(GFX906, DEV_CONTENT))
    case("text/txt-3-text-before-list", "Text before the first START line", ["TXT-3"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": before}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"list": [W(HOST), GFX906]}, "LLVM skips text before the first START marker",
               profile=True, ref=f"{TXT} TXT-3"),
          ], source=src + " text-before",
         bugs=[strict_unreachable("a text bundle with text before its first START line", "TXT-3")])
    case("text/txt-3-text-before-unbundle", "Text before the first START line: unbundle", ["TXT-3"], "unbundle",
         {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": before}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"outputs": [u(HOST_CONTENT), u(DEV_CONTENT)]},
               "LLVM skips text before the first START marker", profile=True, ref=f"{TXT} TXT-3")],
         source=src + " text-before")
    case("text/txt-3-empty-list", "An empty file is not a text bundle", ["TXT-3"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": u("")}, {"fail": "TXT-3"},
         [note(ALL, "TXT-3", {"list": []}, "LLVM lists nothing", profile=True, ref=f"{TXT} TXT-3"),
          strict_undetected("TXT-3", "the file is empty")], source=src + " empty")
    plain = {"plain": u("int main() { return 0; }\n")}
    case("text/txt-3-not-a-bundle-unbundle", "A file without START marker holds none of the targets",
         ["TXT-3", "CLI-4"], "unbundle", {"type": "i", "targets": [HOST, GFX906], "inputs": ["plain"]}, plain,
         {"fail": "CLI-4"}, source=src + " not-a-bundle")
    case("text/txt-3-not-a-bundle-allow-missing", "A file without START marker with -allow-missing-bundles: the host output is the input",
         ["TXT-3", "CLI-4"], "unbundle",
         {"type": "i", "targets": [HOST, GFX906], "inputs": ["plain"], "allow_missing_bundles": True}, plain,
         {"outputs": [{"input": "plain"}, u("")]}, source=f"{TXT} TXT-3; spec/cli.md CLI-4")

    # TXT-4: the START line ends with LF.
    nonl = text("s", tent(W(HOST), HOST_CONTENT), tent(GFX906, DEV_CONTENT),
                u("\n# __CLANG_OFFLOAD_BUNDLE____START__ " + GFX90A))
    case("text/txt-4-start-without-newline-list", "The last START line has no LF (end of file)", ["TXT-4"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": nonl}, {"fail": "TXT-4"},
         [note(ALL, "TXT-4", {"list": [W(HOST), GFX906]}, "LLVM finds no bundle where the ID has no LF; the ones before are read",
               profile=True, ref=f"{TXT} TXT-4")], source=src + " start-without-newline")
    case("text/txt-4-start-without-newline-unbundle", "The last START line has no LF: unbundling the bundles before it",
         ["TXT-4"], "unbundle", {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": nonl}, {"fail": "TXT-4"},
         [note(ALL, "TXT-4", {"outputs": [u(DEV_CONTENT)]}, "LLVM reads the bundles before the broken START line",
               profile=True, ref=f"{TXT} TXT-4")], source=src + " start-without-newline")
    case("text/txt-4-bundle-lf-in-target", "A target holding an LF must be refused (its START line would end early)",
         ["TXT-4"], "bundle", {"type": "s", "targets": [HOST + "\nfoo", GFX906], "inputs": ["h", "d"]},
         {"h": u(HOST_CONTENT), "d": u(DEV_CONTENT)}, {"fail": "TXT-4"},
         [note(ALL, "TXT-4", {"bundle": {}}, "no release checks targets for LF: the file reads back with 'foo' opening the "
               "host content (silent corruption); the profiles write the same bytes", profile=True,
               ref=f"{TXT} TXT-4; {TXT_TEST}::diff_write")])

    # TXT-5: IDs.
    for name, bad, rule in [("empty-id", "", "TXT-5"), ("bogus-id", "bogus", "ID-1")]:
        inp = text("s", tent(bad, "A"), tent(W(HOST), "h"))
        case(f"text/txt-5-{name}-list", f"A START line with the ID {bad!r}", ["TXT-5", rule], "list",
             {"type": "s", "inputs": ["in"]}, {"in": inp}, {"fail": rule},
             [note(ALL, rule, {"list": [bad, W(HOST)]}, "LLVM lists IDs without checking them", profile=True,
                   ref=f"{TXT} TXT-5")], source=src + " " + name)
        n = [note([14, 16, 19], rule, {"outputs": [u("h")]}, "14-19 skip the entry: its ID matches no target",
                  profile=True, ref=f"{TXT} TXT-5")]
        if rule != "ID-1":
            n.append(note([22], rule, {"fail": "ID-1"},
                          "22 refuses the whole file once it reads that START line: invalid bundle id read from the bundle",
                          profile=True, ref=f"{TXT} TXT-5"))
        case(f"text/txt-5-{name}-unbundle", f"A START line with the ID {bad!r}: unbundling another entry",
             ["TXT-5", rule], "unbundle", {"type": "s", "targets": [HOST], "inputs": ["in"]}, {"in": inp},
             {"fail": rule}, n, source=src + " " + name)
    five = text("s", tent(W(HOST), "h"), tent("hip-amdgcn-amd-amdhsa-gfx906", "d"))
    case("text/txt-5-five-field-id-list", "clang 14/16 text artifacts carry five-field device IDs (ID-5)",
         ["TXT-5", "ID-5"], "list", {"type": "s", "inputs": ["in"]}, {"in": five}, {"fail": "ID-5"},
         [note(ALL, "ID-5", {"list": [W(HOST), "hip-amdgcn-amd-amdhsa-gfx906"]}, "LLVM lists IDs without checking them",
               profile=True, ref=f"{TXT} TXT-5; {TXT_TEST}::clang14_artifacts")])

    # TXT-6: CR.
    crlf = text("s", tent(W(HOST), HOST_CONTENT), tent(GFX906, DEV_CONTENT), crlf=True)
    case("text/txt-6-crlf-list", "A text bundle converted to CR LF: the IDs keep the CR", ["TXT-6"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": crlf}, {"fail": "TXT-6"},
         [note([14, 16], "TXT-6", {"list": [HOST + "\r", GFX906 + "\r"]}, "LLVM keeps the CR in each ID", profile=True,
               ref=f"{TXT} TXT-6"),
          note([19, 22], "TXT-6", {"list": [HOST + "-\r", GFX906 + "\r"]}, "LLVM keeps the CR in each ID", profile=True,
               ref=f"{TXT} TXT-6"),
          ], source=src + " crlf",
         bugs=[strict_unreachable("a text bundle converted to CR LF", "TXT-6")])
    case("text/txt-6-crlf-unbundle-host", "CR LF: the host requested", ["TXT-6"], "unbundle",
         {"type": "s", "targets": [HOST], "inputs": ["in"]}, {"in": crlf}, {"fail": "TXT-6"},
         [note([14, 19], "TXT-6", {"fail": "CLI-4"}, "14 compares strings and 19 its own spelling: the ID with CR is not found",
               profile=True, ref=f"{TXT} TXT-6"),
          note([16, 22], "TXT-6", {"outputs": [u("host line 1\r\nhost line 2\r\n\r")]},
               "16 and 22 parse the ID leniently and find it; the content keeps the CRs and gains a trailing CR",
               profile=True, ref=f"{TXT} TXT-6")], source=src + " crlf")
    case("text/txt-6-bundle-cr-in-target", "A writer must refuse a target ending with CR", ["TXT-6"], "bundle",
         {"type": "s", "targets": [HOST, GFX906 + "\r"], "inputs": ["h", "d"]},
         {"h": u(HOST_CONTENT), "d": u(DEV_CONTENT)}, {"fail": "TXT-6"},
         [note(ALL, "TXT-6", {"bundle": {}}, "no release checks targets for CR: the CR is written into both marker "
               "lines; the profiles write the same bytes", profile=True, ref=f"{TXT} TXT-6")])
    case("text/txt-6-crlf-unbundle-device", "CR LF: a device requested ('gfx906\\r' is no processor)", ["TXT-6"],
         "unbundle", {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": crlf}, {"fail": "TXT-6"},
         [note(ALL, "TXT-6", {"fail": "CLI-4"}, "the device ID read with its CR matches no request", profile=True,
               ref=f"{TXT} TXT-6")], source=src + " crlf")

    # TXT-7: START without END.
    first = text("s", {"start": W(HOST)}, u("hello\n"))
    case("text/txt-7-only-start-list", "A single START line without END (text_start_no_end.s)", ["TXT-7"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": first}, {"fail": "TXT-7"},
         [note(ALL, "TXT-7", {"list": [W(HOST)]},
               "-list prints the ID, its END search wraps to offset 0 and the second pass ends: exit 0",
               profile=True, ref=f"{TXT} TXT-7; tests/data/malformed/text_start_no_end.s")],
         source=src + " start-without-end-first")
    last = text("s", tent(W(HOST), HOST_CONTENT), tent(GFX906, DEV_CONTENT), {"start": GFX90A}, u("no end\n"))
    case("text/txt-7-last-start-list", "A complete bundle, then a START line without END: LLVM lists forever",
         ["TXT-7"], "list", {"type": "s", "inputs": ["in"]}, {"in": last}, {"fail": "TXT-7"},
         [note(ALL, "TXT-7", "timeout",
               "finding, never golden: the END search of -list returns npos, npos + 1 wraps to 0 and every pass "
               "meets the START line without END again: it prints IDs forever (killed by the time limit)",
               ref=f"{TXT} TXT-7")], source=src + " start-without-end-last", timeout=3)
    case("text/txt-7-requested-unbundle", "The bundle without END is requested: LLVM copies memory past the input",
         ["TXT-7"], "unbundle", {"type": "s", "targets": [GFX90A], "inputs": ["in"]}, {"in": last},
         {"fail": "TXT-7", "no_outputs": True},
         [note(ALL, "TXT-7", "crash",
               "finding, never golden: the content length is npos - ReadChars; heap memory past the input is written "
               "to the output, then 'LLVM ERROR: IO failure on output stream: Bad address' (14: SIGABRT, 16+: exit 1)",
               ref=f"{TXT} TXT-7")], source=src + " start-without-end-last")
    skip = text("s", {"start": GFX90A}, u("no end\n"), tent(W(HOST), "h"))
    case("text/txt-7-skipped-unbundle", "A bundle without END that is not requested is skipped", ["TXT-7"],
         "unbundle", {"type": "s", "targets": [HOST], "inputs": ["in"]}, {"in": skip}, {"fail": "TXT-7"},
         [note(ALL, "TXT-7", {"outputs": [u("h")]}, "a skipped bundle is not read, so its missing END does no harm",
               profile=True, ref=f"{TXT} TXT-7")], source=src + " start-without-end-skippable")

    # TXT-8: END lines.
    other = text("s", {"start": W(HOST)}, u("h"), {"end": GFX90A}, {"start": GFX906}, u("d"), {"end": W(HOST)})
    case("text/txt-8-end-names-other-id-list", "END lines naming another bundle's ID", ["TXT-8"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": other}, {"fail": "TXT-8"},
         [note(ALL, "TXT-8", {"list": [W(HOST), GFX906]}, "LLVM never reads the ID of an END line", profile=True,
               ref=f"{TXT} TXT-8")], source=src + " end-names-other-id")
    case("text/txt-8-end-names-other-id-unbundle", "END lines naming another bundle's ID: unbundle", ["TXT-8"],
         "unbundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": other}, {"fail": "TXT-8"},
         [note(ALL, "TXT-8", {"outputs": [u("h"), u("d")]}, "LLVM never reads the ID of an END line", profile=True,
               ref=f"{TXT} TXT-8")], source=src + " end-names-other-id")
    endnl = text("s", tent(W(HOST), HOST_CONTENT), {"start": GFX906}, u(DEV_CONTENT),
                 u("\n# __CLANG_OFFLOAD_BUNDLE____END__ " + GFX906))
    case("text/txt-8-end-without-newline-list", "The last END line has no LF", ["TXT-8"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": endnl}, {"fail": "TXT-8"},
         [note(ALL, "TXT-8", {"list": [W(HOST), GFX906]}, "LLVM accepts an END line without LF", profile=True,
               ref=f"{TXT} TXT-8")], source=src + " end-without-newline")
    case("text/txt-8-end-without-newline-unbundle", "The last END line has no LF: unbundle", ["TXT-8"], "unbundle",
         {"type": "s", "targets": [GFX906, HOST], "inputs": ["in"]},
         {"in": endnl}, {"fail": "TXT-8"},
         [note(ALL, "TXT-8", {"outputs": [u(DEV_CONTENT), u(HOST_CONTENT)]}, "LLVM accepts an END line without LF",
               profile=True, ref=f"{TXT} TXT-8")], source=src + " end-without-newline")

    # TXT-9: START marker inside a content.
    nested = text("s", {"start": GFX906}, u("d1"), tent(W(HOST), "inner"), u("d2"), {"end": GFX906})
    case("text/txt-9-nested-start-list", "A content holding a whole bundle: -list", ["TXT-9"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": nested}, {"fail": "TXT-9"},
         [note(ALL, "TXT-9", {"list": [GFX906]}, "-list reads the outer bundle to its first END marker", profile=True,
               ref=f"{TXT} TXT-9")], source=src + " nested-start")
    n9 = []
    for rs in ([14, 16], [19, 22]):
        n9.append(note(rs, "TXT-9", {"outputs": [u("d1" + tline(c, "START", host_spelling(rs)) + "inner")]},
                       "the outer content runs to the inner END marker", profile=True, ref=f"{TXT} TXT-9"))
    case("text/txt-9-nested-start-unbundle-outer", "A content holding a whole bundle: the outer bundle requested",
         ["TXT-9"], "unbundle", {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": nested},
         {"fail": "TXT-9"}, n9, source=src + " nested-start")
    case("text/txt-9-nested-start-unbundle-inner", "A content holding a whole bundle: the inner bundle requested",
         ["TXT-9"], "unbundle", {"type": "s", "targets": [HOST], "inputs": ["in"]}, {"in": nested}, {"fail": "TXT-9"},
         [note(ALL, "TXT-9", {"outputs": [u("inner")]},
               "skipping the outer bundle leaves the read position after its START line: the inner one is found",
               profile=True, ref=f"{TXT} TXT-9")], source=src + " nested-start")
    case("text/txt-9-nested-start-unbundle-both", "A content holding a whole bundle: both requested", ["TXT-9"],
         "unbundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": nested}, {"fail": "TXT-9"},
         [note(ALL, "TXT-9", {"fail": "CLI-4"}, "the outer bundle is read first and swallows the inner one: Can't find bundles for the host",
               profile=True, ref=f"{TXT} TXT-9")], source=src + " nested-start")
    case("text/txt-9-bundle-start-marker-in-content", "A writer must refuse a content holding a START marker",
         ["TXT-9"], "bundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["h", "d"]},
         {"h": u("x" + tline(c, "START", GFX90A) + "y"), "d": u(DEV_CONTENT)}, {"fail": "TXT-9"},
         [note(ALL, "TXT-9", {"bundle": {}}, "LLVM writes the content verbatim; the profiles write the same bytes",
               profile=True, ref=f"{TXT} TXT-9, TXT-2")])

    # TXT-10: END marker inside a content.
    # the host content is "a" + END line + "b": what a writer makes of such a content (TXT-2)
    own = text("s", {"start": W(HOST)}, u("a"), {"end": W(HOST)}, u("b"), {"end": W(HOST)}, tent(GFX906, "d"))
    case("text/txt-10-own-end-in-content-list", "A content holding its own END line: -list", ["TXT-10"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": own}, {"fail": "TXT-10"},
         [note(ALL, "TXT-10", {"list": [W(HOST), GFX906]}, "the content ends at the first END marker; the rest is "
               "skipped as text between bundles", profile=True, ref=f"{TXT} TXT-10")], source=src + " own-end-in-content")
    case("text/txt-10-own-end-in-content-unbundle", "A content holding its own END line: unbundle", ["TXT-10"],
         "unbundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": own}, {"fail": "TXT-10"},
         [note(ALL, "TXT-10", {"outputs": [u("a"), u("d")]}, "the content is cut at the first END marker (silent truncation)",
               profile=True, ref=f"{TXT} TXT-10")], source=src + " own-end-in-content")
    case("text/txt-10-bundle-end-marker-in-content", "A writer must refuse a content holding an END marker",
         ["TXT-10"], "bundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["h", "d"]},
         {"h": u("x\n# __CLANG_OFFLOAD_BUNDLE____END__ y\nz"), "d": u(DEV_CONTENT)}, {"fail": "TXT-10"},
         [note(ALL, "TXT-10", {"bundle": {}}, "LLVM writes the content verbatim (it cannot be read back); the profiles "
               "write the same bytes", profile=True, ref=f"{TXT} TXT-10; {TXT_TEST}::diff_write")])

    # TXT-11: what follows an END line.
    noblank = text("s", tent(W(HOST), "h1"), u("# __CLANG_OFFLOAD_BUNDLE____START__ " + GFX906 + "\n"), u("d1"),
                   {"end": GFX906})
    case("text/txt-11-no-blank-line-list", "A START line right after an END line (no blank line)", ["TXT-11"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": noblank}, {"fail": "TXT-11"},
         [note(ALL, "TXT-11", {"list": [W(HOST)]}, "after reading a bundle LLVM searches from past its END line's LF: "
               "the next START marker, which needs that LF, is not found", profile=True, ref=f"{TXT} TXT-11")],
         source=src + " no-blank-line")
    case("text/txt-11-no-blank-line-unbundle-second", "No blank line: the second bundle alone is found", ["TXT-11"],
         "unbundle", {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": noblank}, {"fail": "TXT-11"},
         [note(ALL, "TXT-11", {"outputs": [u("d1")]}, "the skipped first bundle leaves the read position after its "
               "START line, so the END line's LF + START marker is found", profile=True, ref=f"{TXT} TXT-11")],
         source=src + " no-blank-line")
    case("text/txt-11-no-blank-line-unbundle-both", "No blank line: both requested", ["TXT-11"], "unbundle",
         {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": noblank}, {"fail": "TXT-11"},
         [note(ALL, "TXT-11", {"fail": "CLI-4"}, "reading the first bundle hides the second: Can't find bundles for …",
               profile=True, ref=f"{TXT} TXT-11")], source=src + " no-blank-line")
    between = text("s", tent(W(HOST), "h"), u("gap\n"), tent(GFX906, "d"), u("tail"))
    case("text/txt-11-text-between-list", "Text between bundles and after the last one", ["TXT-11"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": between}, {"fail": "TXT-11"},
         [note(ALL, "TXT-11", {"list": [W(HOST), GFX906]}, "LLVM skips text between and after bundles", profile=True,
               ref=f"{TXT} TXT-11")], source=src + " text-between-and-after")
    case("text/txt-11-text-between-unbundle", "Text between bundles and after the last one: unbundle", ["TXT-11"],
         "unbundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["in"]}, {"in": between}, {"fail": "TXT-11"},
         [note(ALL, "TXT-11", {"outputs": [u("h"), u("d")]}, "LLVM skips text between and after bundles", profile=True,
               ref=f"{TXT} TXT-11")], source=src + " text-between-and-after")

    # TXT-12: duplicate IDs.
    dup = text("s", tent(GFX906, "first"), tent(W(HOST), "h"), tent(GFX906, "second"))
    case("text/txt-12-duplicate-ids-list", "Two bundles with the same ID: -list", ["TXT-12"], "list",
         {"type": "s", "inputs": ["in"]}, {"in": dup}, {"fail": "TXT-12"},
         [note(ALL, "TXT-12", {"list": [GFX906, W(HOST), GFX906]}, "LLVM lists both", profile=True,
               ref=f"{TXT} TXT-12")], source=src + " duplicate-ids")
    case("text/txt-12-duplicate-ids-unbundle", "Two bundles with the same ID: unbundle", ["TXT-12"], "unbundle",
         {"type": "s", "targets": [GFX906], "inputs": ["in"]}, {"in": dup}, {"fail": "TXT-12"},
         [note(ALL, "TXT-12", {"outputs": [u("first")]}, "the first wins: the target leaves the worklist when matched "
               "(binary bundles: the last, BIN-8)", profile=True, ref=f"{TXT} TXT-12")], source=src + " duplicate-ids")
    case("text/txt-12-bundle-duplicate-targets", "Bundling the same target twice", ["TXT-12", "CLI-3"], "bundle",
         {"type": "s", "targets": [HOST, GFX906, GFX906], "inputs": ["h", "d", "d"]},
         {"h": u(HOST_CONTENT), "d": u(DEV_CONTENT)}, {"fail": "CLI-3"}, source=f"{TXT} TXT-12; spec/cli.md CLI-3")

    # TXT-13: file order.
    order = [GFX90AX, HOST, GFX906, SM70]
    fo = text("ll", *[tent(W(t), "; " + t + "\n") for t in order])
    case("text/txt-13-list-file-order", "-list of a text bundle is in file order (not StringMap order)",
         ["TXT-13"], "list", {"type": "ll", "inputs": ["in"]}, {"in": fo}, {"list": [W(t) for t in order]},
         source=f"{TXT} TXT-13")
    case("text/txt-13-unbundle-any-order", "Unbundling requests in another order than the file", ["TXT-13"],
         "unbundle", {"type": "ll", "targets": [SM70, GFX906, HOST, GFX90AX], "inputs": ["in"]}, {"in": fo},
         {"outputs": [u("; " + t + "\n") for t in [SM70, GFX906, HOST, GFX90AX]]}, source=f"{TXT} TXT-13")


# ---------------------------------------------------------------------------
# Object-file bundles and .hip_fatbin (spec/object-bundle.md)
# ---------------------------------------------------------------------------

OBJ = "spec/object-bundle.md"
OBJ_TEST = "tests/object_bundle.rs"
SHF_ALLOC, SHF_EXCLUDE = 0x2, 0x80000000
SHT_NOBITS = 8
HOST_PC = "host-x86_64-pc-linux-gnu"
MARK = {"hex": "00"}


def elf(host, *sections, **kw):
    r = {"host": host, "sections": list(sections)}
    r.update(kw)
    return {"elf": r}


def bsec(id_, data, **kw):
    s = {"bundle": id_, "data": data if isinstance(data, dict) else u(data)}
    s.update(kw)
    return s


def fat(*entries, host="host-x86_64.o", **kw):
    """A fat object: the host fixture plus a bundle section per (id, contents); MARK is the host marker."""
    return elf(b64(fixture(host)), *[bsec(i, p) for i, p in entries], **kw)


def elf_fact(host, *bundles):
    """The sections of a fat object: the host's, then {"bundle": id, "payload": …} per entry."""
    return {"elf": {"sections": host_sections(fixture(host)) +
                    [{"bundle": i, "payload": p} for i, p in bundles]}}


def elf_fact_13(host, *bundles):
    """elf_fact as LLVM 13 writes it: its llvm-objcopy puts the host's
    section headers in file-offset order (ties in index order), then the
    bundle sections (spec/README.md, LLVM 13 and 15)."""
    by_offset = [n for n, _, _, off, _ in sorted(elf_sections(fixture(host)), key=lambda x: x[3])
                 if not n.startswith("__CLANG_OFFLOAD_BUNDLE__")]
    return {"elf": {"sections": by_offset + [{"bundle": i, "payload": p} for i, p in bundles]}}


SECTION_ORDER_13 = ("13's llvm-objcopy writes the section headers in file-offset order: the host's sections move "
                    "(.strtab after .rela.eh_frame, .symtab after .eh_frame); the bundle sections follow in -targets order")


def host_only(host="host-x86_64.o"):
    return {"elf": {"sections": host_sections(fixture(host))}}


LLVM_O_LIST_ONLY = ("clang-offload-bundler -type=o reads only __CLANG_OFFLOAD_BUNDLE__ sections; "
                    ".hip_fatbin is read by the HIP runtime, so -list prints nothing")


def object_cases():
    hostobj = {"host": b64(fixture("host-x86_64.o"))}
    devs = {"d1": u("GFX906 CODE OBJECT"), "d2": u("GFX90A CODE OBJECT")}
    # OBJ-10: writing.
    for name, host, title in [("x86_64", "host-x86_64.o", "ELF64 little-endian"),
                              ("i386", "host-i386.o", "ELF32 (i386)"),
                              ("ppc64", "host-ppc64.o", "ELF64 big-endian (powerpc64)")]:
        case(f"object/obj-10-bundle-{name}", f"-type=o with an {title} host: bundle sections appended in -targets order",
             ["OBJ-10", "OBJ-8", "OBJ-1"], "bundle",
             {"type": "o", "targets": [HOST, GFX906, GFX90AX], "inputs": ["host", "d1", "d2"]},
             {"host": b64(fixture(host)), **devs},
             {"outputs": [elf_fact(host, (W(HOST), MARK), (W(GFX906), {"input": "d1"}),
                                   (W(GFX90AX), {"input": "d2"}))]},
             [note([13], "OBJ-10", {"outputs": [elf_fact_13(host, (W(HOST), MARK), (W(GFX906), {"input": "d1"}),
                                                            (W(GFX90AX), {"input": "d2"}))]},
                   SECTION_ORDER_13, profile=True, ref="spec/README.md (LLVM 13 and 15)")],
             source=f"{OBJ} OBJ-10; {OBJ_TEST}::llvm_reads_our_fat_objects_like_its_own")
    case("object/obj-10-bundle-device-first", "-type=o keeps -targets order: the host section is not moved first",
         ["OBJ-10", "OBJ-9"], "bundle", {"type": "o", "targets": [GFX906, HOST], "inputs": ["d1", "host"]},
         {**hostobj, **devs},
         {"outputs": [elf_fact("host-x86_64.o", (W(GFX906), {"input": "d1"}), (W(HOST), MARK))]},
         [note([13], "OBJ-10", {"outputs": [elf_fact_13("host-x86_64.o", (W(GFX906), {"input": "d1"}), (W(HOST), MARK))]},
               SECTION_ORDER_13, profile=True, ref="spec/README.md (LLVM 13 and 15)")],
         source=f"{OBJ} OBJ-10")
    case("object/obj-10-compress-is-ignored", "-compress is ignored for object files (19, 22)", ["OBJ-10", "CCOB-8"],
         "compress", {"type": "o", "targets": [HOST, GFX906], "inputs": ["host", "d1"]}, {**hostobj, **devs},
         {"outputs": [elf_fact("host-x86_64.o", (W(HOST), MARK), (W(GFX906), {"input": "d1"}))]},
         source=f"{OBJ} OBJ-10")
    case("object/obj-10-host-not-an-object", "-type=o with a host input that is no object file writes a binary bundle",
         ["OBJ-1", "BIN-11"], "bundle", {"type": "o", "targets": [HOST, GFX906], "inputs": ["host", "dev"]}, HD,
         {"bundle": {}}, source=f"{OBJ} OBJ-1 (handler choice)")
    # OBJ-11: the host entry.
    f2 = fat((W(HOST), MARK), (W(GFX906), "GFX906 CODE OBJECT"))
    n1416 = [note([14, 16], "OBJ-11", {"outputs": [{"input": "fat"}]},
                  "14 and 16 write the whole fat object, bundle sections included", profile=True,
                  ref=f"{OBJ} OBJ-11")]
    case("object/obj-11-unbundle-host", "The host entry unbundles to the object without its bundle sections",
         ["OBJ-11", "OBJ-6"], "unbundle", {"type": "o", "targets": [HOST], "inputs": ["fat"]}, {"fat": f2},
         {"outputs": [host_only()]}, n1416, source=f"{OBJ} OBJ-11")
    case("object/obj-11-unbundle-device-and-host", "Device and host from one fat object", ["OBJ-11", "OBJ-9"],
         "unbundle", {"type": "o", "targets": [GFX906, HOST], "inputs": ["fat"]}, {"fat": f2},
         {"outputs": [u("GFX906 CODE OBJECT"), host_only()]},
         [note([14, 16], "OBJ-11", {"outputs": [u("GFX906 CODE OBJECT"), {"input": "fat"}]},
               "14 and 16 write the whole fat object for the host", profile=True, ref=f"{OBJ} OBJ-11")],
         source=f"{OBJ} OBJ-11")
    case("object/obj-11-unbundle-host-ppc64", "The host of a big-endian fat object", ["OBJ-11", "OBJ-1"], "unbundle",
         {"type": "o", "targets": [HOST, GFX906], "inputs": ["fat"]},
         {"fat": fat((W(HOST), MARK), (W(GFX906), "GFX906"), host="host-ppc64.o")},
         {"outputs": [host_only("host-ppc64.o"), u("GFX906")]},
         [note([14, 16], "OBJ-11", {"outputs": [{"input": "fat"}, u("GFX906")]},
               "14 and 16 write the whole fat object for the host", profile=True, ref=f"{OBJ} OBJ-11")],
         source=f"{OBJ} OBJ-11")
    # Real fat objects written by clang -fgpu-rdc -c.
    for r in FIXTURE_RELEASES:
        b = fixture(f"k-rdc-{r}.o")
        ids = [i for i, _ in bundle_sections(b)]
        dev = dict(bundle_sections(b))
        devid = [i for i in ids if not i.startswith("host-")][0]
        valid = r >= 19
        inp = {"fat": b64(b)}
        srcr = f"conformance/fixtures/k-rdc-{r}.o (clang-{r} -fgpu-rdc -c k.hip); {OBJ} (Differential evidence)"
        if valid:
            case(f"object/obj-9-list-clang-{r}", f"-list -type=o of the fat object clang {r} writes", ["OBJ-9", "OBJ-4"],
                 "list", {"type": "o", "inputs": ["fat"]}, inp, {"list": ids}, source=srcr)
        else:
            case(f"object/obj-9-list-clang-{r}", f"-list -type=o of the fat object clang {r} writes (five-field device ID)",
                 ["OBJ-9", "OBJ-4", "ID-5"], "list", {"type": "o", "inputs": ["fat"]}, inp, {"fail": "ID-5"},
                 [note(ALL, "ID-5", {"list": ids}, f"clang {r} writes '{devid}', which names a processor where the "
                       "environment goes; no release checks IDs when listing", profile=True, ref=f"{OBJ} OBJ-4")],
                 source=srcr)
        devb64 = {"base64": base64.b64encode(dev[devid]).decode()}
        want = [host_only_of(b), devb64]
        if valid:
            n = [note([14, 16], "OBJ-11", {"fail": "CLI-4"}, f"14 and 16 compare the host ID as a string: "
                      f"'{HOST_PC}' does not match the '{HOST_PC}-' clang {r} writes", profile=True,
                      ref=f"{BID} Matching; {OBJ} OBJ-11")]
        else:
            n = [note([14, 22], "ID-5", {"fail": "CLI-4"}, f"'{devid}' does not match the request: 14 compares "
                      "strings, 22 takes gfx906 for the environment and drops it", profile=True,
                      ref=f"{OBJ} OBJ-4; spec/bundle-id.md"),
                 note([16], "ID-5", {"outputs": [{"input": "fat"}, devb64]}, f"16 matches '{devid}' to the request "
                      "and writes the whole fat object for the host (OBJ-11)", profile=True,
                      ref=f"{OBJ} OBJ-4, OBJ-11"),
                 note([19], "ID-5", {"fail": "CLI-4"}, f"19 respells the requested host as '{HOST_PC}-', which does "
                      f"not match the '{HOST_PC}' clang {r} writes", profile=True, ref=f"{OBJ} OBJ-11")]
        case(f"object/obj-11-unbundle-clang-{r}", f"Unbundle host and gfx906 from the fat object clang {r} writes",
             ["OBJ-11", "OBJ-9"] + ([] if valid else ["ID-5"]), "unbundle",
             {"type": "o", "targets": [HOST_PC, GFX906], "inputs": ["fat"]}, inp,
             {"outputs": want} if valid else {"fail": "ID-5"}, n, source=srcr)
    case("object/obj-9-list-section-order", "-list -type=o prints section order (not StringMap order)",
         ["OBJ-9"], "list", {"type": "o", "inputs": ["fat"]},
         {"fat": fat((W(GFX90AX), "A"), (W(HOST), MARK), (W(GFX906), "B"), (W(SM70), "C"))},
         {"list": [W(GFX90AX), W(HOST), W(GFX906), W(SM70)]}, source=f"{OBJ} OBJ-9")
    anyx = fat((W(HOST), MARK), (GFX906, "ANY"), (GFX906 + ":xnack+", "XNACK"))
    case("object/obj-9-first-compatible-section", "A request takes the first compatible section in section order",
         ["OBJ-9", "COMPAT-3"], "unbundle", {"type": "o", "targets": [GFX906 + ":xnack+"], "inputs": ["fat"]},
         {"fat": anyx}, {"outputs": [u("ANY")]},
         [note([14], "COMPAT-3", {"outputs": [u("XNACK")]}, "14 compares IDs as strings: only the exact one matches",
               profile=True, ref=f"{OBJ} OBJ-9; {BID} Matching")], source=f"{OBJ} OBJ-9")
    # OBJ-1: other object formats; ELF32 and big-endian.
    for fmt, fx in [("macho", "host-macho.o"), ("coff", "host-coff.o")]:
        inp = {"in": b64(fixture(fx))}
        case(f"object/obj-1-list-{fmt}", f"-list -type=o of a {fmt} object: not an ELF file", ["OBJ-1"], "list",
             {"type": "o", "inputs": ["in"]}, inp, {"fail": "OBJ-1"},
             [note(ALL, "OBJ-1", {"list": []}, f"LLVM opens the {fmt} object with its object-file handler and finds no "
                   "bundle section", ref=f"{OBJ} OBJ-1")] +
             ([note(None, "OBJ-1", {"list": []}, "the native list reads COFF objects and PE images for their fat "
                    "binary sections (spec/object-bundle.md FAT-1, Windows hosts); this object has none",
                    profile=True, adapters=["offload-kit-strict"], ref=f"{OBJ} FAT-1")] if fmt == "coff" else []),
             source=f"conformance/fixtures/{fx}",
             bugs=[bug(["offload-kit-strict"], f"offload-kit list of a {fmt} object reports 'no offload container "
                       "recognised' (BIN-1): src/detect.rs::detect knows only ELF among object formats, while OBJ-1 "
                       "says other object formats are recognised and rejected under OBJ-1 naming the format")])
        case(f"object/obj-1-unbundle-{fmt}", f"-unbundle -type=o of a {fmt} object", ["OBJ-1"], "unbundle",
             {"type": "o", "targets": [GFX906], "inputs": ["in"]}, inp, {"fail": "OBJ-1"},
             [note(ALL, "OBJ-1", {"fail": "CLI-4"}, f"LLVM finds no bundle section in the {fmt} object",
                   ref=f"{OBJ} OBJ-1")], source=f"conformance/fixtures/{fx}")
    for name, fx in [("elf32", "host-i386.o"), ("ppc64", "host-ppc64.o")]:
        case(f"object/obj-1-list-{name}", f"-list -type=o of a fat object with an {name} host", ["OBJ-1", "OBJ-9"],
             "list", {"type": "o", "inputs": ["fat"]}, {"fat": fat((W(HOST), MARK), (W(GFX906), "D"), host=fx)},
             {"list": [W(HOST), W(GFX906)]}, source=f"{OBJ} OBJ-1",
             bugs=[bug(["offload-kit-strict"], "offload-kit list of any big-endian ELF file fails with OB-1 'neither an "
                       "offload binary (magic 10 FF 10 AD), an ELF file nor an archive': "
                       "src/offload_binary/llvm.rs input_kind reads e_type as the single byte at offset 16, which is "
                       "0 in a big-endian file (commit b5806dd); detect::list's ELF branch then fails in "
                       "offload_binary::list_with")] if name == "ppc64" else [])
    # OBJ-2: headers.
    shoff = fat((W(HOST), MARK), (W(GFX906), "D"), patch=[{"at": 0x28, "u64": 0xffffff}])
    case("object/obj-2-shoff-past-end-list", "e_shoff points past the end of the file", ["OBJ-2"], "list",
         {"type": "o", "inputs": ["fat"]}, {"fat": shoff}, {"fail": "OBJ-2"},
         [note(ALL, "OBJ-2", {"list": []}, "createBinary fails, so LLVM falls back to the binary-bundle handler: "
               "not a bundle, nothing listed", ref=f"{OBJ} OBJ-2")], source=f"{OBJ} OBJ-2")
    case("object/obj-2-shoff-past-end-unbundle", "e_shoff points past the end of the file: unbundle", ["OBJ-2"],
         "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": shoff}, {"fail": "OBJ-2"},
         [note(ALL, "OBJ-2", {"fail": "CLI-4"}, "LLVM falls back to the binary-bundle handler: Can't find bundles",
               ref=f"{OBJ} OBJ-2")], source=f"{OBJ} OBJ-2")
    badname = fat((W(HOST), MARK), (W(GFX906), "D"))
    badname["elf"]["sections"][1]["sh_name"] = 0x7fffff
    case("object/obj-2-bad-sh-name-list", "A section name offset past the end of the name table", ["OBJ-2"], "list",
         {"type": "o", "inputs": ["fat"]}, {"fat": badname}, {"fail": "OBJ-2"}, source=f"{OBJ} OBJ-2")
    case("object/obj-2-truncated-list", "A fat object cut inside its section header table", ["OBJ-2"], "list",
         {"type": "o", "inputs": ["fat"]},
         {"fat": fat((W(HOST), MARK), (W(GFX906), "D"), truncate=len(fixture("host-x86_64.o")))},
         {"fail": "OBJ-2"},
         [note(ALL, "OBJ-2", {"list": []}, "createBinary fails, so LLVM falls back to the binary-bundle handler: "
               "not a bundle, nothing listed", ref=f"{OBJ} OBJ-2")], source=f"{OBJ} OBJ-2")
    # OBJ-3: contents out of range.
    past = fat((W(HOST), MARK), (W(GFX906), "D"))
    past["elf"]["sections"][1]["size"] = 0x100000
    case("object/obj-3-contents-past-end-list", "A bundle section whose contents run past the end of the file",
         ["OBJ-3"], "list", {"type": "o", "inputs": ["fat"]}, {"fat": past}, {"fail": "OBJ-3"},
         [note(ALL, "OBJ-3", {"list": [W(HOST), W(GFX906)]}, "listing reads names only; contents are checked lazily",
               profile=True, ref=f"{OBJ} OBJ-3")], source=f"{OBJ} OBJ-3")
    case("object/obj-3-contents-past-end-unbundle", "A bundle section whose contents run past the end: unbundle",
         ["OBJ-3"], "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": past},
         {"fail": "OBJ-3"}, source=f"{OBJ} OBJ-3",
         bugs=[bug(DROP_INS, "the drop-in plans the section's byte range without checking it against the file "
                   "(src/bundler.rs Job::piece_for; object::llvm_payload has the OBJ-3 check) and then fails with "
                   "'input changed while reading', no rule; LLVM says 'The end of the file was unexpectedly "
                   "encountered'")])
    # OBJ-4: the ID in the section name.
    skipped_1922 = ("19 and 22 do not take a section named exactly __CLANG_OFFLOAD_BUNDLE__ for a bundle section "
                    "(observed; a one-character ID is listed): the empty entry is skipped")
    for name, bad, rule in [("empty-id", "", "OBJ-4"), ("bogus-id", "bogus", "ID-1")]:
        f = fat((bad, "X"), (W(HOST), MARK), (W(GFX906), "D"))
        if bad:
            nl = [note(ALL, rule, {"list": [bad, W(HOST), W(GFX906)]}, "no release checks IDs when listing",
                       profile=True, ref=f"{OBJ} OBJ-4")]
            bl = []
        else:
            nl = [note([14, 16], rule, {"list": [bad, W(HOST), W(GFX906)]}, "no release checks IDs when listing: "
                       "14 and 16 list an empty line", profile=True, ref=f"{OBJ} OBJ-4"),
                  note([19, 22], rule, {"list": [W(HOST), W(GFX906)]}, skipped_1922, profile=True,
                       ref=f"{OBJ} OBJ-4")]
            bl = [bug(["offload-kit-19", "offload-kit"], "the 19 and 22 profiles list the section named exactly "
                      "__CLANG_OFFLOAD_BUNDLE__ as an entry with an empty ID (src/bundle/object.rs scan / "
                      "llvm_list: 'identical in 14, 16, 19 and 22'); LLVM 19 and 22 skip it. spec/object-bundle.md "
                      "OBJ-4 ('An empty ID lists as an empty line') is wrong for 19 and 22")]
        case(f"object/obj-4-{name}-list", f"A bundle section named with the ID {bad!r}", ["OBJ-4", rule], "list",
             {"type": "o", "inputs": ["fat"]}, {"fat": f}, {"fail": rule}, nl, source=f"{OBJ} OBJ-4", bugs=bl)
        n = [note([14, 16, 19], rule, {"outputs": [u("D")]}, "the entry matches no target and is skipped",
                  profile=True, ref=f"{OBJ} OBJ-4")]
        bu = []
        if rule != "ID-1":
            n.append(note([22], rule, {"outputs": [u("D")]}, skipped_1922 + ", so 22 does not refuse its ID",
                          profile=True, ref=f"{OBJ} OBJ-4"))
            bu = [bug(["offload-kit"], "the 22 profile reads the section named exactly __CLANG_OFFLOAD_BUNDLE__ "
                      "as an entry and refuses the file ('invalid bundle id read from the bundle'); LLVM 22 skips "
                      "the section and unbundles gfx906")]
        case(f"object/obj-4-{name}-unbundle", f"A bundle section named with the ID {bad!r}: unbundle another entry",
             ["OBJ-4", rule], "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": f},
             {"fail": rule}, n, source=f"{OBJ} OBJ-4", bugs=bu)
    # OBJ-5: duplicates.
    dup = fat((W(HOST), MARK), (W(GFX906), "FIRST"), (W(GFX906), "SECOND"))
    case("object/obj-5-duplicate-ids-list", "Two bundle sections with the same ID", ["OBJ-5"], "list",
         {"type": "o", "inputs": ["fat"]}, {"fat": dup}, {"fail": "OBJ-5"},
         [note(ALL, "OBJ-5", {"list": [W(HOST), W(GFX906), W(GFX906)]}, "LLVM lists both", profile=True,
               ref=f"{OBJ} OBJ-5")], source=f"{OBJ} OBJ-5")
    case("object/obj-5-duplicate-ids-unbundle", "Two bundle sections with the same ID: unbundle", ["OBJ-5"],
         "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": dup}, {"fail": "OBJ-5"},
         [note(ALL, "OBJ-5", {"outputs": [u("FIRST")]}, "the first section in section order wins", profile=True,
               ref=f"{OBJ} OBJ-5")], source=f"{OBJ} OBJ-5")
    # OBJ-6: the host entry.
    nohost = fat((W(GFX906), "D"))
    case("object/obj-6-no-host-list", "A fat object without a host section", ["OBJ-6"], "list",
         {"type": "o", "inputs": ["fat"]}, {"fat": nohost}, {"fail": "OBJ-6"},
         [note(ALL, "OBJ-6", {"list": [W(GFX906)]}, "LLVM lists the sections it finds", profile=True,
               ref=f"{OBJ} OBJ-6")], source=f"{OBJ} OBJ-6")
    case("object/obj-6-no-host-unbundle", "A fat object without a host section: unbundle the device", ["OBJ-6"],
         "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": nohost}, {"fail": "OBJ-6"},
         [note(ALL, "OBJ-6", {"outputs": [u("D")]}, "LLVM does not look for the host when it is not requested",
               profile=True, ref=f"{OBJ} OBJ-6")], source=f"{OBJ} OBJ-6")
    notmark = fat((W(HOST), "HOSTDATA"), (W(GFX906), "D"))
    case("object/obj-6-host-not-marker-unbundle", "A host section holding more than the 0x00 marker", ["OBJ-6"],
         "unbundle", {"type": "o", "targets": [HOST], "inputs": ["fat"]}, {"fat": notmark}, {"fail": "OBJ-6"},
         [note(ALL, "OBJ-6", {"outputs": [u("HOSTDATA")]}, "LLVM recognises the host object by the marker, not by the "
               "ID: this host section is unbundled as plain contents", profile=True, ref=f"{OBJ} OBJ-6, OBJ-7")],
         source=f"{OBJ} OBJ-6")
    case("object/obj-6-two-hosts-list", "Two host sections", ["OBJ-6"], "list", {"type": "o", "inputs": ["fat"]},
         {"fat": fat((W(HOST), MARK), (W(HOST2), MARK), (W(GFX906), "D"))}, {"fail": "OBJ-6"},
         [note(ALL, "OBJ-6", {"list": [W(HOST), W(HOST2), W(GFX906)]}, "LLVM lists the sections it finds",
               profile=True, ref=f"{OBJ} OBJ-6")], source=f"{OBJ} OBJ-6")
    case("object/obj-6-bundle-without-host", "-type=o with an object input and no host target", ["OBJ-6"], "bundle",
         {"type": "o", "targets": [GFX906, GFX90AX], "inputs": ["host", "d2"]}, {**hostobj, **devs},
         {"fail": "OBJ-6", "no_outputs": True},
         [note(ALL, "OBJ-6", "crash", "finding, never golden: SIGSEGV with an empty output",
               ref=f"{OBJ} OBJ-6")], source=f"{OBJ} OBJ-6")
    # OBJ-7: a device section holding the host marker.
    nul = fat((W(HOST), MARK), (W(GFX906), MARK))
    case("object/obj-7-device-nul-unbundle", "A device section holding exactly 0x00 (the host marker)", ["OBJ-7"],
         "unbundle", {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": nul}, {"fail": "OBJ-7"},
         [note([14, 16], "OBJ-7", {"outputs": [{"input": "fat"}]}, "the marker stands for the host object: 14 and 16 "
               "write the whole fat object", profile=True, ref=f"{OBJ} OBJ-7"),
          note([19, 22], "OBJ-7", {"outputs": [host_only()]}, "the marker stands for the host object: 19 and 22 write "
               "the object without its bundle sections", profile=True, ref=f"{OBJ} OBJ-7")],
         source=f"{OBJ} OBJ-7; tests/data/malformed/nul1_device_payload.bin")
    case("object/obj-7-bundle-device-nul", "A device input of exactly one 0x00 byte must be refused", ["OBJ-7"],
         "bundle", {"type": "o", "targets": [HOST, GFX906], "inputs": ["host", "nul"]}, {**hostobj, "nul": MARK},
         {"fail": "OBJ-7", "no_outputs": True},
         [note([14, 15, 16, 19, 22], "OBJ-7", {"outputs": [elf_fact("host-x86_64.o", (W(HOST), MARK), (W(GFX906), MARK))]},
               "LLVM writes it; the device entry can then never be unbundled", ref=f"{OBJ} OBJ-7", exact=True),
          note([13], "OBJ-7", {"outputs": [elf_fact_13("host-x86_64.o", (W(HOST), MARK), (W(GFX906), MARK))]},
               "13 writes it (sections in its file-offset order); the device entry can then never be unbundled",
               ref=f"{OBJ} OBJ-7; spec/README.md (LLVM 13 and 15)")],
         source=f"{OBJ} OBJ-7")
    # OBJ-8: section type and flags.
    alloc = fat((W(HOST), MARK), (W(GFX906), "D"))
    alloc["elf"]["sections"][1]["flags"] = SHF_ALLOC | SHF_EXCLUDE
    case("object/obj-8-alloc-flag-list", "A bundle section flagged SHF_ALLOC", ["OBJ-8"], "list",
         {"type": "o", "inputs": ["fat"]}, {"fat": alloc}, {"fail": "OBJ-8"},
         [note(ALL, "OBJ-8", {"list": [W(HOST), W(GFX906)]}, "LLVM reads any type and flags", profile=True,
               ref=f"{OBJ} OBJ-8")], source=f"{OBJ} OBJ-8")
    case("object/obj-8-alloc-flag-unbundle", "A bundle section flagged SHF_ALLOC: unbundle", ["OBJ-8"], "unbundle",
         {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": alloc}, {"fail": "OBJ-8"},
         [note(ALL, "OBJ-8", {"outputs": [u("D")]}, "LLVM reads any type and flags", profile=True,
               ref=f"{OBJ} OBJ-8")], source=f"{OBJ} OBJ-8")
    nobits = fat((W(HOST), MARK), (W(GFX906), "NOBITS DATA"))
    nobits["elf"]["sections"][1]["type"] = SHT_NOBITS
    case("object/obj-8-nobits-unbundle", "A bundle section of type SHT_NOBITS", ["OBJ-8"], "unbundle",
         {"type": "o", "targets": [GFX906], "inputs": ["fat"]}, {"fat": nobits}, {"fail": "OBJ-8"},
         [note(ALL, "OBJ-8", {"outputs": [u("")]}, "an SHT_NOBITS section reads as empty", profile=True,
               ref=f"{OBJ} OBJ-8")], source=f"{OBJ} OBJ-8",
         bugs=[bug(DROP_INS, "the drop-in unbundles the file bytes at sh_offset/sh_size of an SHT_NOBITS bundle "
                   "section (src/bundler.rs Job::llvm_entries turns object entries into binary::Entry and drops "
                   "sh_type; object::Entry::payload reads NOBITS as empty); every release writes an empty file")])

    # FAT-1 … FAT-4: .hip_fatbin, read by the native list (LLVM's -type=o does not look at it).
    def hipfat(data, **kw):
        s = {"name": ".hip_fatbin", "data": data, "flags": SHF_ALLOC, "align": 4096}
        s.update(kw)
        return elf(b64(fixture("host-x86_64.o")), s)

    def llvm_none(rule):
        return [note(ALL, rule, {"list": []}, LLVM_O_LIST_ONLY, profile=True, ref=f"{OBJ} FAT-1")]

    b0 = build([(HOST.encode() + b"-", b"HOSTDATA"), (GFX906.encode(), b"DEVDATA")])
    b1 = build([(HOST.encode() + b"-", b""), (GFX908.encode(), b"GFX908 DATA")])
    pad = lambda b: b + b"\0" * (-len(b) % 4096)
    ids0, ids1 = [HOST + "-", GFX906], [HOST + "-", GFX908]
    case("object/fat-1-two-bundles-list", "Two bundles in .hip_fatbin, the second at 4096", ["FAT-1", "FAT-2", "FAT-4"],
         "list", {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(pad(b0) + b1))}, {"list": ids0 + ids1},
         llvm_none("FAT-1"), source=f"{OBJ} (Layout of .hip_fatbin); {OBJ_TEST}::fat_1_bundles_at_multiples_of_4096")
    magic = build([(HOST.encode() + b"-", b""), (GFX906.encode(), b"xx__CLANG_OFFLOAD_BUNDLE__yyCCOBzz" * 3)])
    case("object/fat-1-magic-in-payload-list", "A payload holding both magics does not split the section",
         ["FAT-1"], "list", {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(pad(magic) + b1))},
         {"list": ids0 + ids1}, llvm_none("FAT-1"), source=f"{OBJ} FAT-1 (llvm-objdump splits by magic)")
    case("object/fat-1-junk-at-4096-list", "No bundle magic at the next multiple of 4096", ["FAT-1"], "list",
         {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(pad(b0) + b"NOT A BUNDLE"))}, {"fail": "FAT-1"},
         llvm_none("FAT-1"), source=f"{OBJ} FAT-1")
    bad_pad = bytearray(pad(b0))
    bad_pad[len(b0) + 5] = 1
    case("object/fat-2-nonzero-padding-list", "A non-zero byte in the padding after a bundle", ["FAT-2"], "list",
         {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(bytes(bad_pad) + b1))}, {"fail": "FAT-2"},
         llvm_none("FAT-2"), source=f"{OBJ} FAT-2")
    good = bundle([entry(HOST + "-", "HOSTDATA"), entry(GFX906, "DEVDATA")])
    for v in (2, 3):
        case(f"object/fat-3-ccob-v{v}-list", f"A compressed bundle (v{v}) in .hip_fatbin", ["FAT-3", "CCOB-4"], "list",
             {"type": "o", "inputs": ["obj"]}, {"obj": hipfat({"ccob": {"content": good, "version": v}})},
             {"list": ids0}, llvm_none("FAT-3"), source=f"{OBJ} FAT-3")
    case("object/fat-3-ccob-v1-list", "A version 1 compressed bundle (no total size) in .hip_fatbin", ["FAT-3"],
         "list", {"type": "o", "inputs": ["obj"]}, {"obj": hipfat({"ccob": {"content": good, "version": 1}})},
         {"fail": "FAT-3"}, llvm_none("FAT-3"), source=f"{OBJ} FAT-3")
    case("object/fat-3-ccob-size-past-section-list", "A compressed bundle whose total size runs past the section",
         ["FAT-3"], "list", {"type": "o", "inputs": ["obj"]},
         {"obj": hipfat({"ccob": {"content": good, "version": 3, "total_size": 100000}})}, {"fail": "FAT-3"},
         llvm_none("FAT-3"), source=f"{OBJ} FAT-3")
    for r, host_id in [(19, "host-x86_64-unknown-linux--"), (22, HOST + "-")]:
        case(f"object/fat-3-clang-{r}-offload-compress-list",
             f"The .hip_fatbin clang {r} --offload-compress writes (CCOB v{2 if r == 19 else 3})", ["FAT-3", "FAT-4"],
             "list", {"type": "o", "inputs": ["obj"]}, {"obj": b64(fixture(f"k-compress-{r}.o"))},
             {"list": [host_id, "hipv4-amdgcn-amd-amdhsa--gfx906"]}, llvm_none("FAT-3"),
             source=f"conformance/fixtures/k-compress-{r}.o")
    case("object/fat-4-align-1-list", ".hip_fatbin with alignment 1", ["FAT-4"], "list",
         {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(b0), align=1)}, {"fail": "FAT-4"},
         llvm_none("FAT-4"), source=f"{OBJ} FAT-4")
    case("object/fat-4-nobits-list", ".hip_fatbin of type SHT_NOBITS", ["FAT-4"], "list",
         {"type": "o", "inputs": ["obj"]}, {"obj": hipfat(hx(b0), type=SHT_NOBITS)}, {"fail": "FAT-4"},
         llvm_none("FAT-4"), source=f"{OBJ} FAT-4")


def host_only_of(b):
    return {"elf": {"sections": host_sections(b)}}


# ---------------------------------------------------------------------------
# Compressed bundles (spec/ccob.md)
# ---------------------------------------------------------------------------

CCOB = "spec/ccob.md"
CCOB_TEST = "tests/ccob.rs"
NO_CCOB_1416 = "14 and 16 have no compressed bundles: a CCOB file is not a bundle"
V3_ON_19 = ("19 reads a v3 header as a v2 one and takes the 64-bit size fields for compressed data: "
            "'Unknown frame descriptor' (zstd) or 'zlib error: Z_DATA_ERROR'")


def ccob(content, **kw):
    r = {"content": content}
    r.update(kw)
    return {"ccob": r}


UB22_TEXT = ("undefined behaviour, never golden: getHeaderSize(0) reaches llvm_unreachable "
             "(clang/lib/Driver/OffloadBundler.cpp, 22), which a release build does not check; Debian's 22.1.8 "
             "says 'header size too small' below 17,778 bytes and from there on takes the header as read: 'Size "
             "before decompression: 0 bytes', 'Hashes match: No', and the decoded data is no bundle")
UB22_VERSION0 = {
    "list": note([22], "CCOB-2", {"list": []}, UB22_TEXT + ": -list prints nothing and exits 0 (observed 2026-11-25)",
                 ref="spec/ccob.md CCOB-2"),
    "unbundle": note([22], "CCOB-2", {"fail": "CLI-4"}, UB22_TEXT + ": -unbundle fails 'Can't find bundles' "
                     "(observed 2026-11-25)", ref="spec/ccob.md CCOB-2"),
}


def plain_notes(op):
    """14 and 16 on a compressed input: no bundles."""
    if op in ("list", "decompress"):
        o = {"list": []}
    else:
        o = {"fail": "CLI-4"}
    return note([14, 16], "CCOB-1", o, NO_CCOB_1416, profile=True, ref=f"{CCOB} (What each release does)")


def ccob_cases():
    src = f"{CCOB}; {CCOB_TEST}::llvm_crafted_blobs_match_drop_in"
    good = std_bundle()  # host and gfx906, IDs as the release writes them
    ids = [W(HOST), W(GFX906)]
    outs = [u("HOSTDATA"), u("DEVDATA")]
    unb = {"targets": [HOST, GFX906], "inputs": ["blob"]}
    g = goldens()

    # CLI-6: a zlib bundle of 270 MiB (a few hundred KB compressed). A
    # streaming reader lists it; LLVM 19/22 hold it whole; the drop-in
    # profiles stop at the 256 MiB memory budget instead.
    big = ccob(bundle([entry(W(HOST), "HOSTDATA"), entry(W(GFX906), {"zeros": 270 << 20})]),
               version=2, method="zlib")
    case("ccob/cli-6-over-budget-list", "-list of a compressed bundle that decodes to 270 MiB", ["CLI-6"],
         "list", {"inputs": ["blob"]}, {"blob": big}, {"list": ids},
         [plain_notes("list"),
          note(None, "CLI-6", {"fail": "CLI-6"},
               "the drop-in would hold the whole decoded bundle as 19 and 22 do: past the 256 MiB memory "
               "budget it stops instead", profile=True, adapters=["offload-kit", "offload-kit-19"])],
         source="spec/cli.md CLI-6")

    # v1/v2/v3 x zlib/zstd: decompress (native: the bundle; clang-offload-bundler: -list) and unbundle.
    for v in (1, 2, 3):
        for m in ("zlib", "zstd"):
            blob = ccob(good, version=v, method=m)
            n = [plain_notes("decompress")]
            nu = [plain_notes("unbundle")]
            if v == 3:
                n.append(note([19], "CCOB-2", {"fail": "CCOB-5"}, V3_ON_19, profile=True,
                              ref=f"{CCOB} CCOB-5, (What each release does)"))
                nu.append(note([19], "CCOB-2", {"fail": "CCOB-5"}, V3_ON_19, profile=True,
                               ref=f"{CCOB} CCOB-5"))
            case(f"ccob/decompress-v{v}-{m}", f"Decompress a version {v} {m} compressed bundle",
                 ["CCOB-1", "CCOB-2", "CCOB-3", "CCOB-9"] + (["CCOB-4"] if v > 1 else []), "decompress",
                 {"inputs": ["blob"]}, {"blob": blob, "bundle": good}, {"outputs": [{"input": "bundle"}]}, n,
                 source=src)
            case(f"ccob/unbundle-v{v}-{m}", f"Unbundle a version {v} {m} compressed bundle",
                 ["CCOB-1", "CCOB-2", "CCOB-3", "CCOB-9"], "unbundle", unb, {"blob": blob}, {"outputs": outs}, nu,
                 source=src)
    case("ccob/list-v3-zstd", "-list of a compressed bundle lists the bundle inside", ["CCOB-1", "CCOB-9", "BIN-12"],
         "list", {"inputs": ["blob"]}, {"blob": ccob(good)}, {"list": ids},
         [plain_notes("list"), note([19], "CCOB-2", {"fail": "CCOB-5"}, V3_ON_19, profile=True, ref=f"{CCOB} CCOB-5")],
         source=src)
    case("ccob/list-v2-zstd", "-list of a version 2 compressed bundle", ["CCOB-1", "CCOB-9", "BIN-12"], "list",
         {"inputs": ["blob"]}, {"blob": ccob(good, version=2)}, {"list": ids}, [plain_notes("list")], source=src)
    for v in (1, 2, 3):
        case(f"ccob/verify-v{v}", f"verify accepts a good version {v} blob", ["CCOB-4", "CCOB-6", "CCOB-7"], "verify",
             {"inputs": ["blob"]}, {"blob": ccob(good, version=v, method="zlib" if v == 1 else "zstd")},
             {"outputs": []}, source=f"{CCOB} (Native commands)")

    # CCOB-1: the magic.
    case("ccob/ccob-1-decompress-uncompressed", "decompress needs a compressed bundle", ["CCOB-1"], "decompress",
         {"inputs": ["blob"]}, {"blob": good}, {"fail": "CCOB-1"},
         [note(ALL, "CCOB-1", {"list": ids}, "clang-offload-bundler has no decompress: the -list standing in for it "
               "reads an uncompressed bundle as it is", profile=True, ref=f"{CCOB} CCOB-1")], source=f"{CCOB} CCOB-1")
    lower = ccob(good, version=2, patch=[{"at": 0, "hex": "63636f62"}])
    case("ccob/ccob-1-lowercase-magic-list", "'ccob' is not the magic", ["CCOB-1", "BIN-1"], "list",
         {"inputs": ["blob"]}, {"blob": lower}, {"fail": "BIN-1"},
         [note(ALL, "BIN-1", {"list": []}, "not a bundle: LLVM lists nothing", profile=True, ref=f"{CCOB} CCOB-1")],
         source=f"{CCOB} CCOB-1")
    case("ccob/ccob-1-lowercase-magic-unbundle", "'ccob' is not the magic: unbundle", ["CCOB-1", "BIN-1"], "unbundle",
         unb, {"blob": lower}, {"fail": "BIN-1"},
         [note(ALL, "BIN-1", {"fail": "CLI-4"}, "not a bundle: Can't find bundles", profile=True,
               ref=f"{CCOB} CCOB-1")], source=f"{CCOB} CCOB-1")

    # CCOB-2: version and header.
    for cut in (5, 14, 16, 23, 31):
        n = [plain_notes("list")]
        if cut < 20:
            n.append(note([19], "CCOB-2", {"list": []}, "19 does not recognise CCOB followed by fewer than 16 bytes: "
                          "not a bundle", profile=True, ref=f"{CCOB} CCOB-1, CCOB-2"))
        if cut < 8:
            n.append(note([22], "CCOB-2", {"list": []}, "22 does not recognise fewer than 8 bytes as a compressed "
                          "bundle: not a bundle", profile=True, ref=f"{CCOB} CCOB-1"))
        if cut >= 24:
            n.append(note([19], "CCOB-2", {"fail": "CCOB-5"}, "19 reads the v3 header as a v2 one (24 bytes) and "
                          "decodes nothing", profile=True, ref=f"{CCOB} CCOB-2"))
        case(f"ccob/ccob-2-header-cut-to-{cut}-list", f"A version 3 header cut to {cut} bytes", ["CCOB-2"], "list",
             {"inputs": ["blob"]}, {"blob": ccob(good, truncate=cut)}, {"fail": "CCOB-2"}, n,
             source=f"{CCOB} CCOB-2; {CCOB_TEST}::ccob_2_truncated_header_every_length")
    case("ccob/ccob-2-version-0-v1-blob-unbundle", "Version 0 (a v1 blob relabelled)", ["CCOB-2"], "unbundle", unb,
         {"blob": ccob(good, version=1, version_field=0)}, {"fail": "CCOB-2"},
         [plain_notes("unbundle"),
          note([19], "CCOB-2", {"outputs": outs}, "19 reads a total size only for versions >= 2: version 0 is read as "
               "version 1", profile=True, ref=f"{CCOB} CCOB-2")], source=f"{CCOB} CCOB-2")
    case("ccob/ccob-2-version-0-v3-blob-unbundle", "Version 0 (a v3 blob relabelled: ccob_v3_ver0.bin)", ["CCOB-2"],
         "unbundle", unb, {"blob": ccob(good, version=3, version_field=0)}, {"fail": "CCOB-2"},
         [plain_notes("unbundle"),
          note([19], "CCOB-2", {"fail": "CCOB-5"}, "19 reads version 0 as version 1: the v3 size fields become "
               "compressed data and decoding fails", profile=True, ref=f"{CCOB} CCOB-2")],
         source=f"{CCOB} CCOB-2; tests/data/malformed/ccob_v3_ver0.bin")
    # Version 0 from 17,778 bytes on (spec audit point 12): the trailing
    # zeros only make the file long; no release reads past the frame.
    long0 = {"concat": [ccob(good, version=3, version_field=0), {"zeros": 18000}]}
    for op, args in (("list", {"inputs": ["blob"]}), ("unbundle", unb)):
        case(f"ccob/ccob-2-version-0-long-{op}", f"Version 0, a file of 17,778 bytes or more (-{op})", ["CCOB-2"],
             op, args, {"blob": long0}, {"fail": "CCOB-2"},
             [plain_notes(op), UB22_VERSION0[op],
              note([19], "CCOB-2", {"fail": "CCOB-5"}, "19 reads version 0 as version 1: the v3 size fields become "
                   "compressed data and decoding fails", profile=True, ref=f"{CCOB} CCOB-2")],
             source=f"{CCOB} CCOB-2 (spec audit, issue 17 point 12)")
    for ver in (4, 65535):
        case(f"ccob/ccob-2-version-{ver}-v2-blob-unbundle", f"Version {ver} (a v2 blob relabelled)", ["CCOB-2"],
             "unbundle", unb, {"blob": ccob(good, version=2, version_field=ver)}, {"fail": "CCOB-2"},
             [plain_notes("unbundle"),
              note([19], "CCOB-2", {"outputs": outs}, "19 reads every version >= 3 as version 2", profile=True,
                   ref=f"{CCOB} CCOB-2")], source=f"{CCOB} CCOB-2")
    case("ccob/ccob-2-version-big-endian-list", "A header written in big-endian order (version reads 768)",
         ["CCOB-2"], "list", {"inputs": ["blob"]},
         {"blob": ccob(good, version=3, patch=[{"at": 4, "hex": "00030001"}])}, {"fail": "CCOB-2"},
         [plain_notes("list"),
          note([19], "CCOB-2", {"fail": "CCOB-3"}, "19 reads version 768 as version 2 and then method 256: "
               "Unknown compressing method", profile=True, ref=f"{CCOB} CCOB-2 (Byte order)")],
         source=f"{CCOB} (Byte order)")

    # CCOB-3: the method.
    case("ccob/ccob-3-method-2-unbundle", "Method 2 is neither zlib nor zstd", ["CCOB-3"], "unbundle", unb,
         {"blob": ccob(good, version=2, method_field=2)}, {"fail": "CCOB-3"}, [plain_notes("unbundle")],
         source=f"{CCOB} CCOB-3")
    case("ccob/ccob-3-method-2-list", "Method 2 is neither zlib nor zstd: -list", ["CCOB-3"], "list",
         {"inputs": ["blob"]}, {"blob": ccob(good, version=2, method_field=2)}, {"fail": "CCOB-3"},
         [plain_notes("list")], source=f"{CCOB} CCOB-3")
    case("ccob/ccob-3-zstd-data-declared-zlib-unbundle", "zstd data declared as zlib: a decoding failure",
         ["CCOB-3", "CCOB-5"], "unbundle", unb, {"blob": ccob(good, version=2, method="zstd", method_field=0)},
         {"fail": "CCOB-5"}, [plain_notes("unbundle")], source=f"{CCOB} CCOB-3")
    case("ccob/ccob-3-zlib-data-declared-zstd-unbundle", "zlib data declared as zstd: a decoding failure",
         ["CCOB-3", "CCOB-5"], "unbundle", unb, {"blob": ccob(good, version=2, method="zlib", method_field=1)},
         {"fail": "CCOB-5"}, [plain_notes("unbundle")], source=f"{CCOB} CCOB-3")

    # CCOB-4: the total size bounds the blob.
    ignored = "19 and 22 ignore the total size: the compressed data is everything after the header"
    for name, size in [("0", 0), ("10", 10), ("100000", 100000)]:
        case(f"ccob/ccob-4-total-size-{name}-unbundle", f"Total size {name} (v2)", ["CCOB-4"], "unbundle", unb,
             {"blob": ccob(good, version=2, total_size=size)}, {"fail": "CCOB-4"},
             [plain_notes("unbundle"), note([19, 22], "CCOB-4", {"outputs": outs}, ignored, profile=True,
                                            ref=f"{CCOB} CCOB-4")], source=f"{CCOB} CCOB-4")
    case("ccob/ccob-4-total-size-100000-verify", "verify: a total size past the end of the file", ["CCOB-4"], "verify",
         {"inputs": ["blob"]}, {"blob": ccob(good, version=3, total_size=100000)}, {"fail": "CCOB-4"},
         source=f"{CCOB} CCOB-4")
    for m, n19_22 in [("zstd", {"fail": "CCOB-5"}), ("zlib", {"outputs": outs})]:
        why = ("zstd: 'Src size is incorrect' (the data region is not one frame)" if m == "zstd" else
               "zlib: uncompress stops at the end of the stream and the rest is silently ignored")
        case(f"ccob/ccob-4-trailing-junk-{m}-unbundle", f"Bytes after a {m} blob that are not another blob", ["CCOB-4"],
             "unbundle", unb, {"blob": ccob(good, version=2, method=m, append=u("JUNK"))}, {"fail": "CCOB-4"},
             [plain_notes("unbundle"), note([19, 22], "CCOB-4", n19_22, why, profile=True, ref=f"{CCOB} CCOB-4")],
             source=f"{CCOB} CCOB-4; {CCOB_TEST}::ccob_4_bytes_after_the_blob")
    case("ccob/ccob-4-trailing-junk-verify", "verify: bytes after the blob that are not another blob", ["CCOB-4"],
         "verify", {"inputs": ["blob"]}, {"blob": ccob(good, append=u("JUNK"))}, {"fail": "CCOB-4"},
         source=f"{CCOB} CCOB-4")
    second = bundle([entry(W(GFX908), "GFX908 DATA")])
    two = {"concat": [ccob(good, version=2), ccob(second, version=2)]}
    case("ccob/ccob-4-two-blobs-list", "Two blobs back to back, each bounded by its total size", ["CCOB-4"], "list",
         {"inputs": ["blob"]}, {"blob": two}, {"list": ids + [W(GFX908)]},
         [plain_notes("list"),
          note([19, 22], "CCOB-4", {"fail": "CCOB-5"}, "19 and 22 decompress everything after the first header as one "
               "zstd frame: 'Src size is incorrect'", profile=True, ref=f"{CCOB} CCOB-4 (llvm#88827)")],
         source=f"{CCOB} (Several blobs in a row)")
    case("ccob/ccob-4-two-blobs-verify", "verify: two good blobs back to back", ["CCOB-4"], "verify",
         {"inputs": ["blob"]}, {"blob": two}, {"outputs": []}, source=f"{CCOB} (Native commands)")
    case("ccob/ccob-4-two-blobs-decompress", "decompress takes one blob", ["CCOB-4"], "decompress",
         {"inputs": ["blob"]}, {"blob": two, "bundle": good}, {"fail": "*"},
         [plain_notes("decompress"),
          note([19, 22], "CCOB-4", {"fail": "CCOB-5"}, "19 and 22 decompress everything after the first header as one "
               "zstd frame: 'Src size is incorrect'", profile=True, ref=f"{CCOB} CCOB-4")],
         source=f"{CCOB} (Native commands: convert one at a time)")

    # CCOB-5: the stream.
    case("ccob/ccob-5-zstd-cut-short-unbundle", "zstd data cut short by one byte (total size adjusted)", ["CCOB-5"],
         "unbundle", unb, {"blob": ccob(good, version=2, trim_data=1)}, {"fail": "CCOB-5"},
         [plain_notes("unbundle")], source=f"{CCOB} CCOB-5")
    case("ccob/ccob-5-zlib-no-adler-unbundle", "zlib data without its Adler-32 trailer", ["CCOB-5"], "unbundle", unb,
         {"blob": ccob(good, version=2, method="zlib", trim_data=4)},
         {"fail": "CCOB-5"}, [plain_notes("unbundle")], source=f"{CCOB} CCOB-5")
    case("ccob/ccob-5-header-only-zstd-list", "A v2 zstd blob of 24 bytes: a header and no stream", ["CCOB-5"],
         "list", {"inputs": ["blob"]}, {"blob": ccob(good, version=2, trim_data=1000)}, {"fail": "CCOB-5"},
         [plain_notes("list"),
          note([19, 22], "CCOB-5", {"list": []}, "ZSTD_decompress of no data returns 0 bytes: an empty input, "
               "nothing listed", profile=True, ref=f"{CCOB} CCOB-5")], source=f"{CCOB} CCOB-5")
    case("ccob/ccob-5-header-only-zlib-list", "A v2 zlib blob of 24 bytes: a header and no stream", ["CCOB-5"],
         "list", {"inputs": ["blob"]}, {"blob": ccob(good, version=2, method="zlib", trim_data=1000)},
         {"fail": "CCOB-5"}, [plain_notes("list")], source=f"{CCOB} CCOB-5")
    sil = fixture_malformed("ccob_v3_silent_corruption.bin")
    case("ccob/ccob-5-silent-corruption-unbundle", "A flipped zstd byte that still decodes (ccob_v3_silent_corruption.bin)",
         ["CCOB-5", "CCOB-7"], "unbundle", unb, {"blob": hx(sil)}, {"fail": "CCOB-7"},
         [plain_notes("unbundle"),
          note([19], "CCOB-5", {"fail": "CCOB-5"}, V3_ON_19, profile=True, ref=f"{CCOB} CCOB-5"),
          note([22], "CCOB-7", {"outputs": [u("HOSTDATA"), u("DEVDANA")]}, "22 never checks the hash: exit 0 with "
               "'DEVDANA' for 'DEVDATA'; the 22 profile writes the same and warns (CCOB-7)", profile=True,
               ref=f"{CCOB} CCOB-5, CCOB-7")],
         source="tests/data/malformed/ccob_v3_silent_corruption.bin")
    case("ccob/ccob-5-silent-corruption-verify", "verify finds the corruption a zstd frame cannot", ["CCOB-5", "CCOB-7"],
         "verify", {"inputs": ["blob"]}, {"blob": hx(sil)}, {"fail": "CCOB-7"},
         source="tests/data/malformed/ccob_v3_silent_corruption.bin")
    dmg = fixture_malformed("ccob_v2_damaged_payload.bin")
    case("ccob/ccob-5-damaged-payload-list", "Damage in the last zstd block, after the bundle header: -list",
         ["CCOB-5"], "list", {"inputs": ["blob"]}, {"blob": hx(dmg)}, {"fail": "CCOB-5"},
         [plain_notes("list"),
          note(None, "CCOB-5", {"list": [W(HOST), W(GFX906)]},
               "the drop-in's -list decodes only as far as the bundle header when LLVM's outcome is otherwise known "
               "(one zstd frame, bounded by its block headers): damage inside a later block is not seen, where 19 and "
               "22 decompress everything and fail with 'Data corruption detected'; unbundling and the native commands "
               "decode everything and fail", profile=True, adapters=["offload-kit", "offload-kit-19"],
               ref=f"{CCOB} (Listing a compressed bundle)")],
         source="tests/data/malformed/ccob_v2_damaged_payload.bin")
    case("ccob/ccob-5-damaged-payload-unbundle", "Damage in the last zstd block, after the bundle header: -unbundle",
         ["CCOB-5"], "unbundle", unb, {"blob": hx(dmg)}, {"fail": "CCOB-5"}, [plain_notes("unbundle")],
         source="tests/data/malformed/ccob_v2_damaged_payload.bin")

    # CCOB-6: the uncompressed size.
    for m in ("zstd", "zlib"):
        case(f"ccob/ccob-6-claim-one-short-{m}-unbundle", f"Uncompressed size one byte short ({m})", ["CCOB-6"],
             "unbundle", unb, {"blob": ccob(good, version=2, method=m, uncompressed_size_delta=-1)},
             {"fail": "CCOB-6"}, [plain_notes("unbundle")], source=f"{CCOB} CCOB-6")
        case(f"ccob/ccob-6-claim-larger-{m}-unbundle", f"Uncompressed size 100 bytes too large ({m})", ["CCOB-6"],
             "unbundle", unb, {"blob": ccob(good, version=2, method=m, uncompressed_size_delta=100)},
             {"fail": "CCOB-6"},
             [plain_notes("unbundle"),
              note([19, 22], "CCOB-6", {"outputs": outs}, "a larger claim only sizes the buffer, which is truncated to "
                   "what was decoded", profile=True, ref=f"{CCOB} CCOB-6")], source=f"{CCOB} CCOB-6")
    case("ccob/ccob-6-claim-0-zlib-unbundle", "Uncompressed size 0 (zlib)", ["CCOB-6"], "unbundle", unb,
         {"blob": ccob(good, version=2, method="zlib", uncompressed_size=0)}, {"fail": "CCOB-6"},
         [plain_notes("unbundle"),
          note([19, 22], "CCOB-6", {"fail": "CCOB-5"}, "uncompress into no space reports Z_DATA_ERROR",
               profile=True, ref=f"{CCOB} CCOB-6")], source=f"{CCOB} CCOB-6")
    case("ccob/ccob-6-claim-2pow40-unbundle", "Uncompressed size 2^40 (ccob_v3_usize_2pow40.bin)", ["CCOB-6"], "unbundle", unb,
         {"blob": ccob(good, version=3, uncompressed_size=2**40)}, {"fail": "CCOB-6", "no_outputs": True},
         [plain_notes("unbundle"),
          note([19], "CCOB-2", {"fail": "CCOB-5"}, V3_ON_19, profile=True, ref=f"{CCOB} CCOB-5"),
          note([22], "CCOB-6", "crash", "finding, never golden: 22 allocates the claim before decoding: 'LLVM ERROR: "
               "out of memory', SIGABRT", ref=f"{CCOB} CCOB-6")],
         source="tests/data/malformed/ccob_v3_usize_2pow40.bin")
    case("ccob/ccob-6-claim-2pow40-verify", "verify: uncompressed size 2^40 costs nothing", ["CCOB-6"], "verify",
         {"inputs": ["blob"]}, {"blob": ccob(good, version=3, uncompressed_size=2**40)}, {"fail": "CCOB-6"},
         source=f"{CCOB} CCOB-6")

    # CCOB-7: the hash.
    badhash = ccob(good, version=2, hash="0000000000000000")
    unchecked = "19 and 22 never check the hash (only -verbose prints 'Hashes match: No'); the profiles warn (CCOB-7)"
    case("ccob/ccob-7-hash-mismatch-unbundle", "A wrong hash", ["CCOB-7"], "unbundle", unb, {"blob": badhash},
         {"fail": "CCOB-7"},
         [plain_notes("unbundle"), note([19, 22], "CCOB-7", {"outputs": outs}, unchecked, profile=True,
                                        ref=f"{CCOB} CCOB-7")], source=f"{CCOB} CCOB-7")
    case("ccob/ccob-7-hash-mismatch-list", "A wrong hash: -list", ["CCOB-7"], "list", {"inputs": ["blob"]},
         {"blob": badhash}, {"fail": "CCOB-7"},
         [plain_notes("list"), note([19, 22], "CCOB-7", {"list": ids}, unchecked, profile=True,
                                    ref=f"{CCOB} CCOB-7")], source=f"{CCOB} CCOB-7")
    case("ccob/ccob-7-hash-mismatch-decompress", "A wrong hash: decompress", ["CCOB-7"], "decompress",
         {"inputs": ["blob"]}, {"blob": badhash, "bundle": good}, {"fail": "CCOB-7"},
         [plain_notes("decompress"), note([19, 22], "CCOB-7", {"list": ids}, unchecked, profile=True,
                                          ref=f"{CCOB} CCOB-7")], source=f"{CCOB} CCOB-7")
    case("ccob/ccob-7-hash-mismatch-verify", "A wrong hash: verify", ["CCOB-7"], "verify", {"inputs": ["blob"]},
         {"blob": badhash}, {"fail": "CCOB-7"}, source=f"{CCOB} CCOB-7")

    # CCOB-8: the writer, byte for byte.
    def golden_case(name, title, gold22, gold19, inputs_name, args_extra=None, notes19=None):
        ty, targets, payloads = GOLDEN_INPUTS[inputs_name]
        names = [f"p{i}" for i in range(len(payloads))]
        args = {"type": ty, "targets": targets, "inputs": names}
        args.update(args_extra or {})
        n = [note([19], "CCOB-8", {"outputs": [{"hex": g[gold19]["hex"]}]}, notes19 or
                  "19 always writes version 2 (COMPRESSED_BUNDLE_FORMAT_VERSION is ignored); the same zstd frame",
                  profile=True, ref=f"{CCOB} CCOB-8")] if gold19 else []
        case(f"ccob/{name}", title, ["CCOB-8"] + (["CCOB-9"] if ty != "bc" else []), "compress", args,
             {n_: u(p) for n_, p in zip(names, payloads)}, {"outputs": [{"hex": g[gold22]["hex"]}]}, n,
             source=f"conformance/fixtures/compress-goldens.json ({gold22}" + (f", {gold19})" if gold19 else ")"))

    golden_case("ccob-8-compress-good", "-compress of good.bin: LLVM 22's bytes (ccob_v3_small.bin)", "good-22",
                "good-19", "good")
    golden_case("ccob-8-compress-format-version-2", "Version 2 on request: LLVM 19's bytes (ccob_v2_small.bin)",
                "good-22-v2", None, "good", {"format_version": 2})
    golden_case("ccob-8-compress-big", "-compress of a 12 KB bundle, level 3", "big-22", "big-19", "big")
    golden_case("ccob-8-compress-level-1", "-compression-level=1", "big-22-level-1", "big-19-level-1", "big",
                {"compression_level": 1})
    golden_case("ccob-8-compress-level-19", "-compression-level=19", "big-22-level-19", "big-19-level-19", "big",
                {"compression_level": 19})
    golden_case("ccob-8-compress-text", "-compress of a text bundle (-type=s)", "text-22", "text-19", "text")
    for v in (1, 2, 3):
        for m in ("zlib", "zstd"):
            args = {"targets": [HOST, GFX906], "inputs": ["host", "dev"], "format_version": v}
            if m == "zlib":
                args["method"] = "zlib"
            n = []
            if m == "zstd" and v == 1:
                n = [note([22], "CCOB-8", {"compressed": {"version": 3, "method": "zstd"}},
                          "22 warns 'Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: 1. Valid values are 2 or 3.' "
                          "and writes version 3", profile=True, ref=f"{CCOB} CCOB-8"),
                     note([19], "CCOB-8", {"compressed": {"version": 2, "method": "zstd"}},
                          "19 always writes version 2", profile=True, ref=f"{CCOB} CCOB-8")]
            elif m == "zstd" and v == 3:
                n = [note([19], "CCOB-8", {"compressed": {"version": 2, "method": "zstd"}},
                          "19 always writes version 2", profile=True, ref=f"{CCOB} CCOB-8")]
            case(f"ccob/ccob-8-compress-v{v}-{m}", f"Write version {v} with {m}", ["CCOB-8"], "compress", args, HD,
                 {"compressed": {"version": v, "method": m, "bundle": {}}}, n, source=f"{CCOB} CCOB-8")

    # CCOB-9: the content is a bundle.
    # An ELF host object (clang 22, -fgpu-rdc: bundle sections) is a
    # container but no bundle: what `compress` of a host object makes.
    for name, content in [("not-a-bundle", u("just some bytes, not a bundle\n")), ("empty", u("")),
                          ("elf-host", b64(fixture("k-rdc-22.o")))]:
        blob = ccob(content, version=2)
        case(f"ccob/ccob-9-{name}-list", f"A compressed bundle holding {name.replace('-', ' ')}", ["CCOB-9"], "list",
             {"inputs": ["blob"]}, {"blob": blob}, {"fail": "CCOB-9"},
             [plain_notes("list"), note([19, 22], "CCOB-9", {"list": []}, "19 and 22 hand the bytes to the -type "
                                        "handler, which finds no bundle", profile=True, ref=f"{CCOB} CCOB-9")],
             source=f"{CCOB} CCOB-9")
        case(f"ccob/ccob-9-{name}-unbundle", f"A compressed bundle holding {name.replace('-', ' ')}: unbundle",
             ["CCOB-9"], "unbundle", unb, {"blob": blob}, {"fail": "CCOB-9"},
             [plain_notes("unbundle"), note([19, 22], "CCOB-9", {"fail": "CLI-4"},
                                            "the -type handler finds no bundle: Can't find bundles", profile=True,
                                            ref=f"{CCOB} CCOB-9")], source=f"{CCOB} CCOB-9")
    txt = ccob(good_text("s"), version=2)
    case("ccob/ccob-9-text-bundle-list", "A compressed text bundle, listed with -type=s", ["CCOB-9", "TXT-13"], "list",
         {"type": "s", "inputs": ["blob"]}, {"blob": txt}, {"list": [W(HOST), GFX906]}, [plain_notes("list")],
         source=f"{CCOB} CCOB-9")
    case("ccob/ccob-9-text-bundle-unbundle", "A compressed text bundle, unbundled with -type=s", ["CCOB-9", "TXT-2"],
         "unbundle", {"type": "s", "targets": [HOST, GFX906], "inputs": ["blob"]}, {"blob": txt},
         {"outputs": [u(HOST_CONTENT), u(DEV_CONTENT)]}, [plain_notes("unbundle")], source=f"{CCOB} CCOB-9")
    case("ccob/ccob-9-text-bundle-decompress", "Decompress a compressed text bundle", ["CCOB-9"], "decompress",
         {"type": "s", "inputs": ["blob"]}, {"blob": txt, "bundle": good_text("s")}, {"outputs": [{"input": "bundle"}]},
         [plain_notes("decompress")], source=f"{CCOB} CCOB-9")


def fixture_malformed(name):
    return open(os.path.join(ROOT, "tests", "data", "malformed", name), "rb").read()


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
                   ref="tests/data/llvm-id-vectors.json (written)", exact=True)
              for (nr, _, txt), (obs, rs) in merged.items()]
        rules = sorted({rule} | ({"ID-4"} if "id" in expect else set()))
        case(f"parse-id/{slug(t, n)}", f"The ID written for -targets entry {t!r} (with {','.join(targets)})",
             rules, "parse-id", {"targets": targets, "id": t}, None, expect, kd,
             source="tests/data/llvm-id-vectors.json (written); " + BID + " Written IDs")

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
                if r in (13, 14) and ho:
                    continue  # 13 and 14 have no -hip-openmp-compatible: the case is n/a there
                rs = rules_of(got["error"])
                if "fail" in expect and expect["fail"] in rs:
                    continue
                obs = {"fail": rs[0] if rs else "*"}
                text = "LLVM %s refuses: " + got["error"]
            key = (json.dumps(obs, sort_keys=True), text)
            notes.setdefault(key, (obs, []))[1].append(r)
        kd = [note(rs, rule, obs, text % "/".join(map(str, rs)), profile=True,
                   ref="tests/data/llvm-id-vectors.json (match)", exact=True)
              for (_, text), (obs, rs) in notes.items()]
        args = {"entry": e, "request": rq}
        if ho:
            args["hip_openmp_compatible"] = True
        case(f"compatible/{slug(e + '__' + rq + ('__hipomp' if ho else ''), n)}",
             f"Does entry {e!r} satisfy request {rq!r}{' (-hip-openmp-compatible)' if ho else ''}?",
             [rule], "compatible", args, None, expect, kd,
             source="tests/data/llvm-id-vectors.json (match); " + BID + " Matching")

# ---------------------------------------------------------------------------
# Offload binaries (spec/offload-binary.md): packaging, extraction, objdump
# ---------------------------------------------------------------------------

OB = "spec/offload-binary.md"
OB_TEST = "tests/offload_binary.rs"
PK_RELEASES = [16, 19, 22]
OK_BIN = None  # set by main: the offload-kit binary used for golden packagings
DEV = "DEVICECODE\n"
NV = "nvptx64-nvidia-cuda"
AMD = "amdgcn-amd-amdhsa"
SHT_LLVM_OFFLOADING = 0x6FFF4C0B
PK_DROP_INS = ["offload-kit", "offload-kit-16", "offload-kit-19"]


def okpack(release, images, files):
    """The bytes offload-kit's packager writes for release (checked against
    the real packagers by the matrix: they are byte-identical)."""
    with tempfile.TemporaryDirectory() as t:
        for name, data in files.items():
            open(os.path.join(t, name), "wb").write(data)
        r = subprocess.run([OK_BIN, "packager", f"--llvm-version={release}", "-o", "out"] +
                           [f"--image={i}" for i in images], cwd=t, capture_output=True)
        assert r.returncode == 0, r.stderr
        return open(os.path.join(t, "out"), "rb").read()


def pk(images, release=22, files=None):
    """A packaged binary, as bytes; images name the files dev.o (DEV) and nv.o."""
    files = files or {"dev.o": DEV.encode(), "nv.o": b"NVCODE\n"}
    return okpack(release, images, files)


def patch(b, at, raw):
    b = bytearray(b)
    b[at:at + len(raw)] = raw
    return bytes(b)


def u64(v):
    return v.to_bytes(8, "little")


def u16(v):
    return v.to_bytes(2, "little")


IMG_HIP = f"triple={AMD},arch=gfx906,kind=hip"
IMG_OMP_NV = f"triple={NV},arch=sm_70,kind=openmp"
IMG_OMP_AMD = f"triple={AMD},arch=gfx90a,kind=openmp"


def pkg_case(path, title, rules, images, expect, notes=(), files=("dev.o",), source=None):
    """package: images reference the inputs by {input:NAME}."""
    inputs = {"dev.o": u(DEV), "nv.o": u("NVCODE\n")}
    inputs = {k: v for k, v in inputs.items() if k in files}
    case(path, title, rules, "package", {"inputs": list(files), "images": images}, inputs, expect,
         notes, source=source or f"{OB} {rules[0]}")


def release_bytes(images, files=("dev.o",), releases=PK_RELEASES):
    """{release: bytes} of packaging images (with {input:NAME} → NAME)."""
    real = [i.replace("{input:", "").replace("}", "") for i in images]
    return {r: pk(real, r) for r in releases}


def packaging():
    hip = [f"file={{input:dev.o}},{IMG_HIP}"]
    b = release_bytes(hip)
    pkg_case("package/hip-gfx906-bytes",
             "Package one HIP image: the worked example's layout, byte for byte (22: offload kind 4, arch first)",
             ["OB-17", "OB-18", "OB-13", "OB-12", "OB-1", "OB-2", "OB-6"], hip, {"outputs": [hx(b[22])]},
             [note([19], "OB-13", {"outputs": [hx(b[19])]},
                   "19 writes HIP as offload kind 3 (22 renumbered it to 4)", profile=True, ref=f"{OB} OB-13"),
              note([16], "OB-18", {"outputs": [hx(b[16])]},
                   "16 writes HIP as 3 and the string entries triple first (its map order)", profile=True,
                   ref=f"{OB} OB-18")])
    two = [f"file={{input:nv.o}},{IMG_OMP_NV}", f"file={{input:dev.o}},{IMG_OMP_AMD}"]
    b = release_bytes(two, files=("dev.o", "nv.o"))
    assert b[19] == b[22], "openmp packagings of 19 and 22 agree"
    pkg_case("package/openmp-two-images",
             "Two OpenMP images: two binaries back to back, each padded to 8 (OB-5, OB-15)",
             ["OB-17", "OB-15", "OB-5", "OB-4"], two, {"outputs": [hx(b[22])]},
             [note([16], "OB-18", {"outputs": [hx(b[16])]},
                   "16 writes the string entries triple first (its map order)", profile=True, ref=f"{OB} OB-18")],
             files=("dev.o", "nv.o"))
    extra = [f"file={{input:dev.o}},{IMG_HIP},feature=+xnack,feature=-sramecc"]
    b = release_bytes(extra)
    pkg_case("package/repeated-key-joined",
             "A repeated key is one string joined with ',' (OB-18); keys are unique (OB-11)",
             ["OB-18", "OB-11", "OB-8"], extra, {"outputs": [hx(b[22])]},
             [note([19], "OB-13", {"outputs": [hx(b[19])]}, "19 writes HIP as offload kind 3", profile=True),
              note([16], "OB-18", {"outputs": [hx(b[16])]}, "16: HIP is 3, triple first", profile=True)])
    pkg_case("package/no-image", "No --image: an empty output file", ["OB-17"], [], {"outputs": [{"size": 0}]},
             files=())
    notrip = [f"file={{input:dev.o}},arch=gfx906,kind=openmp"]
    b = release_bytes(notrip, releases=[22])
    pkg_case("package/missing-triple", "An image without a triple: 22 packages it, 16 and 19 require one",
             ["OB-22"], notrip, {"outputs": [hx(b[22])]},
             [note([16, 19], "OB-22", {"fail": "OB-22", "no_outputs": True},
                   "16 and 19: 'file' and 'triple' are required image arguments", profile=True, ref=f"{OB} OB-22")])
    pkg_case("package/missing-file-key", "An image without a file key is refused, no output",
             ["OB-22"], [f"{IMG_HIP}"], {"fail": "OB-22", "no_outputs": True}, files=())
    pkg_case("package/file-not-on-disk", "An image file that does not exist: error, no output",
             ["OB-22"], [f"file=does-not-exist.o,{IMG_HIP}"], {"fail": "OB-22", "no_outputs": True}, files=())
    two_files = [f"file={{input:dev.o}},file={{input:nv.o}},{IMG_OMP_AMD}"]
    real = [f"file=dev.o,file=nv.o,{IMG_OMP_AMD}"]
    b22 = pk(real, 22)
    pkg_case("package/comma-joined-files", "file=a,file=b packages one binary per file (19, 22); 16 opens 'a,b'",
             ["OB-22", "OB-15"], two_files, {"outputs": [hx(b22)]},
             [note([16], "OB-22", {"fail": "OB-22", "no_outputs": True},
                   "16 opens the joined value 'a,b' as one path: No such file or directory", profile=True,
                   ref=f"{OB} OB-22")], files=("dev.o", "nv.o"))


def unpk_case(path, title, rules, inp, images, outs, expect, notes=(), timeout=None, bugs=()):
    case(path, title, rules, "unpackage", {"inputs": ["pk"], "images": images, **({"output_files": outs} if outs else {})},
         {"pk": inp}, expect, notes, source=f"{OB} {rules[0]}", timeout=timeout, bugs=bugs)


def stem_name(triple, arch, i, kind="o"):
    return f"in0-pk-{triple}-{arch}.{i}.{kind}"


def extraction():
    b16 = pk([f"file=dev.o,{IMG_HIP}"], 16)
    b22 = pk([f"file=dev.o,{IMG_HIP}"], 22)
    unpk_case("unpackage/kind-hip-4", "kind=hip selects offload kind 4 under 22; 16 and 19 read 4 as another kind",
              ["OB-23", "OB-13"], hx(b22), ["kind=hip,file=out.o"], ["out.o"], {"outputs": [u(DEV)]},
              [note([16, 19], "OB-13", {"outputs": [{"absent": True}]},
                    "16 and 19 number HIP 3: kind=hip matches nothing in a 22 binary", profile=True,
                    ref=f"{OB} OB-13")])
    unpk_case("unpackage/kind-hip-3", "kind=hip under 16 and 19 selects offload kind 3; 22 reads 3 as another kind",
              ["OB-23", "OB-13"], hx(b16), ["kind=hip,file=out.o"], ["out.o"], {"outputs": [{"absent": True}]},
              [note([16, 19], "OB-13", {"outputs": [u(DEV)]},
                    "16 and 19 number HIP 3, so kind=hip matches their own binaries", profile=True,
                    ref=f"{OB} OB-13")])
    two = pk([f"file=nv.o,{IMG_OMP_NV}", f"file=dev.o,{IMG_OMP_AMD}"], 22)
    n0, n1 = stem_name(AMD, "gfx90a", 0), stem_name(AMD, "gfx90a", 1)
    unpk_case("unpackage/generated-name-index", "Without file=, the name is <stem>-<triple>-<arch>.<i>.<kind>; "
              "i counts this filter's matches (19, 22) or all images (16)",
              ["OB-23", "OB-15"], hx(two), [f"triple={AMD}"], [n0, n1], {"outputs": [u(DEV), {"absent": True}]},
              [note([16], "OB-23", {"outputs": [{"absent": True}, u(DEV)]},
                    "16 numbers generated names by the index among all images of the input", profile=True,
                    ref=f"{OB} OB-23")])
    unpk_case("unpackage/triple-and-arch", "Every filter key must equal the image's string",
              ["OB-23"], hx(two), [f"triple={NV},arch=sm_70,file=a.o", f"triple={NV},arch=gfx90a,file=b.o"],
              ["a.o", "b.o"], {"outputs": [u("NVCODE\n"), {"absent": True}]})
    noarch = pk(["file=dev.o,triple=x86_64-unknown-linux-gnu,kind=openmp"], 22)
    unpk_case("unpackage/empty-arch-matches-missing", "arch= (empty) matches an image without arch",
              ["OB-23"], hx(noarch), ["arch=,file=x.o"], ["x.o"], {"outputs": [u(DEV)]})
    unpk_case("unpackage/no-image-filter", "Without --image nothing is extracted, exit 0",
              ["OB-23"], hx(two), [], [stem_name(AMD, "gfx90a", 0)], {"outputs": [{"absent": True}]})
    unpk_case("unpackage/not-a-binary", "An input that holds no offload binary: nothing extracted, exit 0",
              ["OB-23", "OB-1"], u("this is not an offload binary\n"), [f"triple={AMD},file=x.o"], ["x.o"],
              {"outputs": [{"absent": True}]})
    both = pk([f"file=nv.o,{IMG_OMP_NV}", f"file=dev.o,{IMG_OMP_AMD}"], 22)
    unpk_case("unpackage/last-match-wins", "Several matches of one filter with file=: the last one is written",
              ["OB-23"], hx(both), ["kind=openmp,file=all.o"], ["all.o"], {"outputs": [u(DEV)]})
    # Malformed inputs: the read fails as a whole; nothing is written.
    good = pk([f"file=dev.o,{IMG_HIP}"], 22)
    for name, rule, title, llvm in [
        ("imgsize_big.pk", "OB-9", "image size 10000 runs past the binary",
         [note(PK_RELEASES, "OB-9", "crash",
               "LLVM copies 10000 bytes of heap into the output (memory disclosure): finding, never golden",
               ref=f"{OB} What each release does")]),
        ("keyoff_big.pk", "OB-8", "a key offset of 10000",
         [note(PK_RELEASES, "OB-8", "any",
               "LLVM reads the key from memory it does not own (16 was seen to die of SIGSEGV): finding, never golden",
               ref=f"{OB} What each release does")]),
        ("nstr_huge.pk", "OB-7", "2^40 string entries",
         [note(PK_RELEASES, "OB-7", "crash", "LLVM reads the string entries out of bounds: SIGSEGV, finding",
               ref=f"{OB} What each release does")]),
        ("unterminated.pk", "OB-8", "a value without NUL",
         [note(PK_RELEASES, "OB-8", "success",
               "16, 19 and 22 accept it: the value runs into the image up to the end of the binary",
               profile=True, ref=f"{OB} OB-8")]),
    ]:
        stem = name[:-3]
        mf = b64(fixture_malformed(name))
        unpk_case(f"unpackage/malformed-{stem}", f"Extraction from {name}: {title}", [rule, "OB-23"], mf,
                  ["file=x.o"], ["x.o"], {"fail": rule, "no_outputs": True}, llvm)
        case(f"objdump/malformed-{stem}", f"llvm-objdump --offloading of {name}: {title}", [rule], "objdump-offloading",
             {"inputs": ["pk"]}, {"pk": mf}, {"fail": rule}, llvm + (
                 [note(PK_RELEASES, rule, "success", "the release prints the image fine (OB-9 only matters when "
                       "copying)", profile=True, ref=f"{OB} What each release does")] if stem == "imgsize_big" else []),
             source=f"{OB} {rule}")
    # Crafted layouts (offsets of the worked example: entry at 32, string
    # entries at 72, strings at 104, image at 144, size 160).
    bad = [
        ("bad-magic", "OB-1", patch(good, 0, b"\x10\xff\x10\xae"), None, "not an object file / nothing extracted"),
        ("version-0", "OB-2", patch(good, 4, b"\0\0\0\0"), None, ""),
        ("cut-header", "OB-3", good[:20], None, ""),
        ("size-10000", "OB-4", patch(good, 8, u64(10000)), None, ""),
        ("size-157-trailing", "OB-5", patch(good, 8, u64(157)), None, ""),
        ("entry-offset-10000", "OB-6", patch(good, 16, u64(10000)), None, ""),
        ("string-offset-10000", "OB-7", patch(good, 40, u64(10000)), None, ""),
        ("image-offset-10000", "OB-9", patch(good, 56, u64(10000)), None, ""),
        ("trailing-junk", "OB-15", good + b"JUNKJUNK", None, ""),
        ("image-over-strings", "OB-10", patch(good, 56, u64(104)), "accepted", ""),
        ("duplicate-key", "OB-11", patch(good, 88, good[72:80]), "accepted", ""),
        ("image-kind-99", "OB-12", patch(good, 32, u16(99)), "accepted", ""),
        ("offload-kind-99", "OB-13", patch(good, 34, u16(99)), "accepted", ""),
        ("flags-1", "OB-14", patch(good, 36, b"\x01\0\0\0"), "accepted", ""),
        ("nonzero-padding", "OB-16", patch(good, 158, b"\x5a"), "accepted", ""),
        ("version-3", "OB-19", patch(good, 4, b"\x03\0\0\0"), None, ""),
    ]
    for stem, rule, data, llvm, _ in bad:
        notes = []
        if stem == "version-3":
            notes.append(note(PK_RELEASES, "OB-19", {"fail": "OB-2"},
                              "16, 19 and 22 read version 1 only: version 3 is Invalid data (OB-2)",
                              profile=True, ref=f"{OB} OB-19"))
        if stem == "bad-magic":
            notes.append(note(None, "OB-1", {"fail": "BIN-1"},
                              "the native list detects the container: bytes that start no known container are "
                              "'no offload container' (BIN-1)", profile=True, adapters=["offload-kit-strict"]))
        if llvm == "accepted":
            notes.append(note(PK_RELEASES, rule, "success", f"16, 19 and 22 do not check {rule}: the binary is read",
                              profile=True, ref=f"{OB} {rule}"))
        case(f"objdump/{stem}", f"llvm-objdump --offloading of a binary with {stem.replace('-', ' ')}", [rule],
             "objdump-offloading", {"inputs": ["pk"]}, {"pk": hx(data)}, {"fail": rule}, notes,
             source=f"{OB} {rule}")
    ctrl = pk(["file=dev.o,triple=amdgcn-amd-amdhsa,arch=gfx906\n\x01\x1b[31m,kind=hip"], 22)
    case("objdump/control-characters", "llvm-objdump --offloading of a binary whose arch holds a newline, "
         "a control byte and a terminal escape", ["OB-25"], "objdump-offloading", {"inputs": ["pk"]},
         {"pk": hx(ctrl)}, {"fail": "OB-25"},
         [note(PK_RELEASES, "OB-25", "success",
               "16, 19 and 22 accept any byte but NUL in strings and print them raw", profile=True,
               ref=f"{OB} OB-25")],
         source=f"{OB} OB-25")
    case("objdump/good", "llvm-objdump --offloading of a well-formed binary", ["OB-1", "OB-17"],
         "objdump-offloading", {"inputs": ["pk"]}, {"pk": hx(good)}, {"outputs": []}, source=f"{OB} OB-17")
    host = b64(fixture("host-x86_64.o"))
    case("objdump/elf-section", "An ELF object with a SHT_LLVM_OFFLOADING section holding two binaries",
         ["OB-20", "OB-15"], "objdump-offloading", {"inputs": ["o"]},
         {"o": elf(host, {"name": ".llvm.offloading", "data": hx(two), "type": SHT_LLVM_OFFLOADING,
                          "flags": SHF_EXCLUDE, "align": 8})}, {"outputs": []}, source=f"{OB} OB-20")
    case("objdump/elf-section-progbits", "A .llvm.offloading section of type PROGBITS is an error (releases skip it)",
         ["OB-20"], "objdump-offloading", {"inputs": ["o"]},
         {"o": elf(host, {"name": ".llvm.offloading", "data": hx(two), "flags": SHF_EXCLUDE, "align": 8})},
         {"fail": "OB-20"},
         [note(PK_RELEASES, "OB-20", "success", "every release selects sections by type and skips it silently",
               profile=True, ref=f"{OB} OB-20")], source=f"{OB} OB-20")
    arch = b"!<arch>\n" + b"pk.bin/         0           0     0     644     " + b"99999     " + b"`\n" + good
    case("objdump/archive-member-cut", "An archive whose member claims more bytes than the archive holds",
         ["OB-21"], "objdump-offloading", {"inputs": ["a"]}, {"a": hx(arch)}, {"fail": "OB-21"},
         [note(PK_RELEASES, "OB-21", "failure",
               "the releases read the member as far as it goes and report Invalid data", profile=True,
               ref=f"{OB} OB-21")], source=f"{OB} OB-21")
    okarch = b"!<arch>\n" + b"pk.bin/         0           0     0     644     " + \
        str(len(good)).ljust(10).encode() + b"`\n" + good
    unpk_case("unpackage/archive-member", "Extraction reads the binaries of each archive member",
              ["OB-21", "OB-23"], hx(okarch), [f"triple={AMD},file=x.o"], ["x.o"], {"outputs": [u(DEV)]})



# ---------------------------------------------------------------------------
# Heterogeneous device archives (spec/archive.md)
# ---------------------------------------------------------------------------

AR_SPEC = "spec/archive.md"


def ar_gnu(members, symbols=None):
    """LLVM writeArchive K_GNU, deterministic: members [(name bytes, data bytes)];
    symbols: per member None (not symbolic) or the list of its archive symbols."""
    table = bytearray()
    placed = {}
    headers = []
    for name, data in members:
        if len(name) >= 16 or b"/" in name:
            if name not in placed:
                placed[name] = len(table)
                table += name + b"/\n"
            h = b"/" + str(placed[name]).encode().ljust(15)
        else:
            h = (name + b"/").ljust(16)
        h += b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8) + str(len(data)).encode().ljust(10) + b"`\n"
        headers.append(h)
    strmember = b""
    if table:
        pad = len(table) % 2
        strmember = b"//".ljust(48) + str(len(table) + pad).encode().ljust(10) + b"`\n" + bytes(table) + b"\n" * pad
    out = bytearray(b"!<arch>\n")
    symbols = symbols or [None] * len(members)
    if any(s is not None for s in symbols):
        names = b"".join(n + b"\0" for s in symbols if s for n in s) or b"\0\0\0"
        count = sum(len(s) for s in symbols if s)
        raw = 4 + 4 * count + len(names)
        size = raw + raw % 2
        out += b"/".ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"0".ljust(8) + str(size).encode().ljust(10) + b"`\n"
        out += struct.pack(">I", count)
        at = 8 + 60 + size + len(strmember)
        for (name, data), h, sy in zip(members, headers, symbols):
            for _ in (sy or []):
                out += struct.pack(">I", at)
            at += len(h) + len(data) + len(data) % 2
        out += names + b"\0" * (raw % 2)
    out += strmember
    for (name, data), h in zip(members, headers):
        out += h + data + b"\n" * (len(data) % 2)
    return bytes(out)


def ar_name(member, id_, tid):
    stem, ext = member.rsplit(b".", 1) if b"." in member else (member, None)
    ext = b"." + ext if ext is not None else b""
    if "gfx" in tid:
        ext = b".bc"
    elif "sm_" in tid:
        ext = b".cubin"
    return (stem + b"-" + id_.encode() + stem + ext).replace(b":", b"_")


def ar_name_13(member, id_):
    """AR-4 as LLVM 13 writes it: stem, '-', the ID; no second stem, no extension."""
    stem = member.rsplit(b".", 1)[0] if b"." in member else member
    return (stem + b"-" + id_.encode()).replace(b":", b"_")


NAMES_13 = "13 names an output member stem-ID only: no second stem, no .bc/.cubin or member extension"


def archive_cases():
    ua = lambda targets, **kw: dict({"type": "a", "targets": targets, "inputs": ["lib"]}, **kw)
    one = lambda id_, p: build([(id_.encode(), p)])
    # AR-1
    case("archive/ar-1-not-an-archive", "-type=a on a bundle that is not an archive", ["AR-1"], "unbundle",
         ua([GFX906]), {"lib": hx(GOOD14)}, {"fail": "AR-1"}, source=f"{AR_SPEC} AR-1")
    good = ar_gnu([(b"a.o", one(GFX906, b"DEV"))])
    case("archive/ar-1-truncated-member", "An archive whose member data runs past its end", ["AR-1"], "unbundle",
         ua([GFX906]), {"lib": hx(good[:-4])}, {"fail": "AR-1"},
         [note([14, 16, 19, 22], "AR-1", {"fail": "AR-6"},
               "the member walk stops at the bad member and its error is never checked (release builds): with no "
               "member before it, no target finds a code object", ref=f"{AR_SPEC} AR-1")],
         source=f"{AR_SPEC} AR-1")
    # AR-2
    lib = ar_gnu([(b"x.o", one(GFX906, b"ONE")), (b"plain.txt", b"just text"), (b"y.o", one(GFX906, b"TWO"))])
    want = ar_gnu([(ar_name(b"x.o", GFX906, "gfx906"), b"ONE"), (ar_name(b"y.o", GFX906, "gfx906"), b"TWO")])
    want13 = ar_gnu([(ar_name_13(b"x.o", GFX906), b"ONE"), (ar_name_13(b"y.o", GFX906), b"TWO")])
    case("archive/ar-2-plain-members-skipped", "Members in archive order; a member that is no bundle is skipped",
         ["AR-2", "AR-4", "AR-5"], "unbundle", ua([GFX906]), {"lib": hx(lib)}, {"outputs": [hx(want)]},
         [note([13], "AR-4", {"outputs": [hx(want13)]}, NAMES_13, profile=True, ref=f"{AR_SPEC} AR-4")],
         source=f"{AR_SPEC} AR-2")
    # The native `offload-kit list` (offload-kit-strict) lists what each
    # member holds and reads the archive strictly (spec/archive.md, Native
    # commands), where -list prints nothing.
    native = lambda outcome, rule="AR-2": note(
        None, rule, outcome, "the native list shows the bundle entries of every member (and checks the archive, "
        "OB-21 = AR-1); -list -type=a/o prints nothing", profile=True, adapters=["offload-kit-strict"],
        ref=f"{AR_SPEC} (Native commands)")
    case("archive/ar-2-list-prints-nothing", "-list -type=a of an archive prints nothing", ["AR-2"], "list",
         {"type": "a", "inputs": ["lib"]}, {"lib": hx(lib)}, {"list": []},
         [native({"list": [GFX906, GFX906]})], source=f"{AR_SPEC} AR-2")
    case("archive/ar-2-list-type-o-prints-nothing", "-list -type=o of an archive of bundles prints nothing",
         ["AR-2"], "list", {"type": "o", "inputs": ["lib"]}, {"lib": hx(lib)}, {"list": []},
         [native({"list": [GFX906, GFX906]})], source=f"{AR_SPEC} AR-2")
    case("archive/ar-2-list-truncated-prints-nothing", "-list -type=a does not read the archive: a cut one lists nothing",
         ["AR-2"], "list", {"type": "a", "inputs": ["lib"]}, {"lib": hx(lib[:-5])}, {"list": []},
         [native({"fail": "OB-21"}, "OB-21")], source=f"{AR_SPEC} AR-2")
    # AR-3
    GFX90AXM = "hip-amdgcn-amd-amdhsa--gfx90a:xnack-"
    lib = ar_gnu([(b"m1.o", one(GFX90A, b"ANY")), (b"m2.o", one(GFX90AX, b"XNACK"))])
    o0 = ar_gnu([(ar_name(b"m1.o", GFX90A, "gfx90a"), b"ANY"), (ar_name(b"m2.o", GFX90AX, "gfx90a:xnack+"), b"XNACK")])
    o1 = ar_gnu([(ar_name(b"m1.o", GFX90A, "gfx90a"), b"ANY")])
    case("archive/ar-3-every-compatible-target", "An entry leaving xnack Any goes to the xnack+ and the xnack- archive",
         ["AR-3", "COMPAT-3"], "unbundle", ua([GFX90AX, GFX90AXM]), {"lib": hx(lib)},
         {"outputs": [hx(o0), hx(o1)]},
         [note([14], "AR-3", {"fail": "AR-6"},
               "14's archive rule compares target IDs as strings: gfx90a does not satisfy gfx90a:xnack-",
               profile=True, ref=f"{AR_SPEC} AR-3")], source=f"{AR_SPEC} AR-3")
    lib = ar_gnu([(b"o.o", one("openmp-amdgcn-amd-amdhsa--gfx906", b"OMP"))])
    case("archive/ar-3-hip-openmp-compatible", "-hip-openmp-compatible: a hip request takes an openmp entry",
         ["AR-3", "COMPAT-1"], "unbundle", ua([GFX906], hip_openmp_compatible=True), {"lib": hx(lib)},
         {"outputs": [hx(ar_gnu([(ar_name(b"o.o", "openmp-amdgcn-amd-amdhsa--gfx906", "gfx906"), b"OMP")]))]},
         source=f"{AR_SPEC} AR-3")
    # AR-4
    lib = ar_gnu([(b"f1.o", one(SM70, b"CUBIN")), (b"f2.xyz", one(GFX90AX, b"BC"))])
    case("archive/ar-4-member-names", "Output names: stem, '-', the ID, stem, .cubin/.bc, ':' as '_'",
         ["AR-4"], "unbundle", ua([SM70, GFX90AX]), {"lib": hx(lib)},
         {"outputs": [hx(ar_gnu([(b"f1-openmp-nvptx64-nvidia-cuda--sm_70f1.cubin", b"CUBIN")])),
                      hx(ar_gnu([(b"f2-hip-amdgcn-amd-amdhsa--gfx90a_xnack+f2.bc", b"BC")]))]},
         [note([13], "AR-4", {"outputs": [hx(ar_gnu([(ar_name_13(b"f1.o", SM70), b"CUBIN")])),
                                          hx(ar_gnu([(ar_name_13(b"f2.xyz", GFX90AX), b"BC")]))]},
               NAMES_13, profile=True, ref=f"{AR_SPEC} AR-4")],
         source=f"{AR_SPEC} AR-4")
    # AR-5: an ELF payload: its global symbol goes to the symbol table.
    obj = fixture("host-x86_64.o")
    lib = ar_gnu([(b"k.o", one(GFX906, obj))])
    case("archive/ar-5-symbol-table", "The output archive lists the global symbols of ELF members",
         ["AR-5", "OB-24"], "unbundle", ua([GFX906]), {"lib": hx(lib)},
         {"outputs": [hx(ar_gnu([(ar_name(b"k.o", GFX906, "gfx906"), obj)], [[b"host_fn"]]))]},
         [note([13], "AR-4", {"outputs": [hx(ar_gnu([(ar_name_13(b"k.o", GFX906), obj)], [[b"host_fn"]]))]},
               NAMES_13, profile=True, ref=f"{AR_SPEC} AR-4")],
         source=f"{AR_SPEC} AR-5")
    # AR-6
    lib = ar_gnu([(b"a.o", one(GFX906, b"DEV"))])
    case("archive/ar-6-missing-target", "A target without a compatible code object fails the run",
         ["AR-6"], "unbundle", ua([GFX906, "hip-amdgcn-amd-amdhsa--gfx908"]), {"lib": hx(lib)}, {"fail": "AR-6"},
         source=f"{AR_SPEC} AR-6")
    case("archive/ar-6-allow-missing", "-allow-missing-bundles: an empty archive for a missing target",
         ["AR-6"], "unbundle", ua(["hip-amdgcn-amd-amdhsa--gfx908", GFX906], allow_missing_bundles=True),
         {"lib": hx(lib)}, {"outputs": [u("!<arch>\n"), hx(ar_gnu([(ar_name(b"a.o", GFX906, "gfx906"), b"DEV")]))]},
         [note([13], "AR-6", {"outputs": [{"absent": True}, hx(ar_gnu([(ar_name_13(b"a.o", GFX906), b"DEV")]))]},
               "13 writes no archive for a missing target under -allow-missing-bundles (and names members stem-ID)",
               profile=True, ref=f"{AR_SPEC} AR-6")],
         source=f"{AR_SPEC} AR-6")
    # AR-7
    conf = build([(GFX90A.encode(), b"A"), (GFX90AX.encode(), b"BB")])
    lib = ar_gnu([(b"conf.o", conf)])
    case("archive/ar-7-conflicting-target-ids", "-check-input-archive: gfx90a and gfx90a:xnack+ in one member",
         ["AR-7"], "unbundle", ua([GFX90AX], check_input_archive=True), {"lib": hx(lib)}, {"fail": "AR-7"},
         source=f"{AR_SPEC} AR-7")
    ok1 = build([(b"hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+", b"A"), (b"hip-amdgcn-amd-amdhsa--gfx906:xnack+", b"BB")])
    lib = ar_gnu([(b"ok1.o", ok1)])
    want = ar_gnu([(ar_name(b"ok1.o", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", "gfx906:xnack+"), b"BB")])
    case("archive/ar-7-one-directional", "The conflict check is one-directional: sramecc+:xnack+ then xnack+ passes",
         ["AR-7"], "unbundle", ua(["hip-amdgcn-amd-amdhsa--gfx906:xnack+"], check_input_archive=True),
         {"lib": hx(lib)}, {"outputs": [hx(want)]}, source=f"{AR_SPEC} AR-7")


def target_id_of(target):
    """The target ID part of a -targets= value, as LLVM 16+'s
    OffloadTargetInfo takes it: from the name after the last '-' before the
    first ':'."""
    head = target.split(":", 1)[0]
    return target[head.rfind("-") + 1:]


def fails_format_check(tid):
    """parseTargetIDWithFormatCheckingOnly (clang/lib/Basic/TargetID.cpp)
    returns std::nullopt: empty processor, a feature without '+'/'-', a
    repeated feature."""
    if ":" not in tid:
        return False
    proc_, *features = tid.split(":")
    if not proc_:
        return True
    names = []
    for f in features:
        if not f or f[-1] not in "+-" or f[:-1] in names:
            return True
        names.append(f[:-1])
    return False


def conflict_check_ub():
    """Every bundling and unbundling of LLVM 16, 19 and 22 runs
    getConflictTargetIDCombination over the requested targets, which
    dereferences the empty std::optional the format-only parser returns for a
    malformed target ID: undefined behaviour. Debian's 16.0.6, 19.1.7 and
    22.1.8 builds die of SIGSEGV there; other builds went on (the outcomes
    recorded in tests/data/llvm-id-vectors.json). Both are documented."""
    for c in CASES.values():
        args = c.get("args") or {}
        targets = list(args.get("targets") or [])
        if c["op"] == "compatible" and "request" in args:
            targets.append(args["request"])
        if c["op"] not in ("bundle", "unbundle", "compatible", "parse-id"):
            continue
        bad = [t for t in targets if fails_format_check(target_id_of(t))]
        if not bad:
            continue
        rule = (c.get("expect") or {}).get("fail") or "TID-1"
        c.setdefault("known_divergence", []).append(note(
            (16, 19, 22), rule, "crash",
            f"undefined behaviour: getConflictTargetIDCombination dereferences the empty result of "
            f"parseTargetIDWithFormatCheckingOnly for '{target_id_of(bad[0])}' (SIGSEGV on Debian's "
            f"16.0.6, 19.1.7 and 22.1.8 builds; the offload-kit profiles report the violation instead)",
            ref="clang/lib/Basic/TargetID.cpp, clang/tools/clang-offload-bundler/ClangOffloadBundler.cpp (16, 19, 22)"))


def hostile_cases():
    """hostile: the <= 50-byte CCOBs whose zstd frame header claims 2^35
    content bytes (issue 16, item 1; tests/hostile.rs ccob-v*-fcs-2pow35).
    The spec's answer is the stream error; no release may allocate the claim."""
    frame = "28b52ffdc050000000000800000023030041"
    blobs = {1: "43434f4201000100ffffffff5a5a5a5a5a5a5a5a" + frame,
             2: "43434f42020001002a000000ffffffff5a5a5a5a5a5a5a5a" + frame,
             3: "43434f4203000100320000000000000000000000080000005a5a5a5a5a5a5a5a" + frame}
    for v, blob in blobs.items():
        for op in ("list", "unbundle"):
            args = {"inputs": ["blob"]}
            expect = {"fail": "CCOB-5"}
            if op == "unbundle":
                args = {"targets": [HOST], "inputs": ["blob"]}
                expect = {"fail": "CCOB-5", "no_outputs": True}
            notes = [note([14, 16], "CCOB-1", {"list": []} if op == "list" else {"fail": "CLI-4"},
                          "14 and 16 have no compressed bundles: a CCOB file is not a bundle", profile=True,
                          ref=f"{CCOB} (What each release does)")]
            if v == 3:
                notes.append(note([22], "CCOB-6", "crash",
                                  "finding, never golden: 22 sizes its buffer by the frame's content-size claim (2^35) "
                                  "before decoding: 'LLVM ERROR: out of memory', SIGABRT under the runner's address-space "
                                  "limit; offload-kit's 22 profile decodes into a buffer that grows with the output and "
                                  "reports the stream error", ref=f"{CCOB} CCOB-6"))
            case(f"hostile/ccob-v{v}-frame-claims-2pow35-{op}",
                 f"CCOB v{v} of 48 bytes or less whose zstd frame header claims 2^35 content bytes: -{op}",
                 ["CCOB-5"], op, args, {"blob": {"hex": blob}}, expect, notes,
                 source=f"issue 16 (hostile-input hardening), item 1; tests/hostile.rs ccob-v{v}-fcs-2pow35")


URI = "spec/uri.md"


def uri_cases():
    """extract-uri: the bytes a code object URI names (spec/uri.md), as
    roc-obj-extract and `offload-kit extract URI` read them. The input is
    256 bytes 00..ff, so every slice shows where it was taken from; one
    case extracts a code object of a clang-22 HIP object by the URI its
    listing gives."""
    data = bytes(range(256))
    inp = {"file": hx(data)}
    want = {"outputs": [hx(data[16:48])]}

    def uri_case(name, title, rules, uri, expect, file_name=None, inputs=None, source=None):
        args = {"inputs": ["file"], "uri": uri}
        if file_name:
            args["file_name"] = file_name
        case(f"extract-uri/{name}", title, rules, "extract-uri", args, inputs or inp, expect,
             source=source or f"{URI} " + rules[0])

    def fails(rule):
        return {"fail": rule, "no_outputs": True}

    uri_case("decimal-range", "offset=16&size=32 in decimal", ["URI-3"], "file://{path}#offset=16&size=32", want)
    uri_case("hex-range", "offset and size as hex literals (0x10, 0x20)", ["URI-3"], "file://{path}#offset=0x10&size=0x20", want)
    uri_case("octal-range", "offset and size as octal literals (020, 040)", ["URI-3"], "file://{path}#offset=020&size=040", want)
    uri_case("question-mark", "'?' opens the range specifier as '#' does", ["URI-3"], "file://{path}?offset=16&size=32", want)
    uri_case("whole-file", "No range specifier: the whole file", ["URI-1", "URI-4"], "file://{path}",
             {"outputs": [hx(data)]})
    for name, fname, title in (("space-in-path", "my lib.so", "a space"),
                               ("amp-hash-in-path", "a&b#c.so", "'&' and '#'"),
                               ("quote-in-path", "it's.so", "a single quote"),
                               ("percent-in-path", "100%.so", "'%'"),
                               ("comma-in-path", "lib,v2.so", "a comma")):
        uri_case(name, f"A path holding {title}, percent-encoded", ["URI-2"], "file://{path}#offset=16&size=32",
                 want, file_name=fname)
    uri_case("raw-comma-in-path", "A path holding a literal (unencoded) comma: only '#' and '?' end the path",
             ["URI-2"], "file://{raw_path}#offset=16&size=32", want, file_name="lib,v3.so")
    uri_case("bad-escape", "A '%' not followed by two hex digits", ["URI-2"], "file://{path}%zz#offset=0&size=1",
             fails("URI-2"))
    uri_case("range-past-end", "offset + size past the end of the file", ["URI-4"],
             "file://{path}#offset=250&size=16", fails("URI-4"))
    uri_case("range-overflows", "offset + size overflows 64 bits", ["URI-4"],
             "file://{path}#offset=18446744073709551615&size=2", fails("URI-4"))
    uri_case("number-too-big", "An offset of 2^64 does not fit in 64 bits", ["URI-3"],
             "file://{path}#offset=18446744073709551616&size=1", fails("URI-3"))
    uri_case("bad-octal", "'08' is no octal literal", ["URI-3"], "file://{path}#offset=08&size=1", fails("URI-3"))
    uri_case("size-missing", "offset without size", ["URI-3"], "file://{path}#offset=16", fails("URI-3"))
    uri_case("size-first", "size before offset", ["URI-3"], "file://{path}#size=32&offset=16", fails("URI-3"))
    uri_case("unknown-scheme", "A scheme other than file:// and memory://", ["URI-1"], "http://{path}#offset=0&size=1",
             fails("URI-1"))
    # A real code object: clang-22's HIP object, its first code object by the URI `list --uri` prints.
    t = clang_dir("uri")
    if True:
        shutil.copy(K_HIP, os.path.join(t, "k.hip"))
        out = os.path.join(t, "k.o")
        subprocess.run([llvm_bin(22, "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "-c", "k.hip", "-o", out,
                        "--offload-arch=gfx906", "--offload-arch=gfx90a"], cwd=t, check=True)
        obj = open(out, "rb").read()
        listed = json.loads(subprocess.run([OK_BIN, "list", out, "--json"], check=True, capture_output=True,
                                           text=True).stdout)["entries"]
        e = [x for x in listed if "gfx90a" in x["id"]][0]
        uri_case("clang-22-code-object", f"The gfx90a code object of a clang 22 HIP object ({e['size']} bytes at {e['offset']})",
                 ["URI-3", "URI-4"], f"file://{{path}}#offset={e['offset']}&size={e['size']}",
                 {"outputs": [hx(obj[e["offset"]:e["offset"] + e["size"]])]}, inputs={"file": b64(obj)},
                 source="clang-22 -x hip --offload-arch=gfx906 --offload-arch=gfx90a -c k.hip; offload-kit list --json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--offload-kit", default=os.path.join(ROOT, "target", "release", "offload-kit"))
    ap.add_argument("--rebuild-fixtures", action="store_true",
                    help="remake conformance/fixtures/ with the installed LLVM 14/16/19/22 first")
    ap.add_argument("--only", metavar="PREFIX",
                    help="write only the cases whose path starts with PREFIX, leaving the others as they are")
    a = ap.parse_args()
    if a.rebuild_fixtures:
        rebuild_fixtures()
    if not os.path.exists(a.offload_kit):
        sys.exit(f"{a.offload_kit} not found: cargo build --release first")
    bundling()
    unbundling()
    malformed()
    listing()
    text_cases()
    object_cases()
    ccob_cases()
    id_vectors(a.offload_kit)
    global OK_BIN
    OK_BIN = a.offload_kit
    packaging()
    extraction()
    archive_cases()
    conflict_check_ub()
    locate_cases()
    lookup_cases()
    hostile_cases()
    uri_cases()
    if a.only:
        for path in [p for p in CASES if not p.startswith(a.only)]:
            del CASES[path]
    elif os.path.isdir(CORPUS):
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

#!/usr/bin/env python3
"""Write the hand-made reproducers of fuzz/findings/comgr-5.2/README.md.

Each file is an uncompressed clang-offload-bundler binary bundle:
  "__CLANG_OFFLOAD_BUNDLE__", u64 count, count x (u64 offset, u64 size,
  u64 id_len, id bytes), payloads -- all little endian.
Usage: python3 fuzz/findings/comgr-5.2/make.py   (writes next to itself)
"""
import os
import struct

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HERE = os.path.dirname(os.path.abspath(__file__))
G906 = b"hipv4-amdgcn-amd-amdhsa--gfx906"
G90A = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
HOST = b"host-x86_64-unknown-linux-gnu-"
M64 = (1 << 64) - 1


def header(entries, count=None):
    """entries: (id, offset, size); count overrides the stored count."""
    out = MAGIC + struct.pack("<Q", len(entries) if count is None else count)
    for eid, off, size in entries:
        out += struct.pack("<QQQ", off, size, len(eid)) + eid
    return out


def entry_table_len(ids):
    return len(MAGIC) + 8 + sum(24 + len(i) for i in ids)


def bundle(payloads):
    """A well-formed bundle of (id, bytes), payloads right after the table."""
    off = entry_table_len([i for i, _ in payloads])
    entries, body = [], b""
    for eid, data in payloads:
        entries.append((eid, off + len(body), len(data)))
        body += data
    return header(entries) + body


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# Answers outside the input: comgr copies offset/size from the table unchecked.
write("offset-beyond-end.bin", header([(G906, 0x1000, 0x100)]))
n = entry_table_len([G906])
write("size-beyond-end.bin", header([(G906, n, 0x10000)]) + b"\x7fELF")
write("size-wraps.bin", header([(G906, n, M64 - n + 2)]) + b"\x7fELF")
# Offset 0: the "code object" is the bundle header itself.
write("offset-zero-header.bin", header([(G906, 0, 24)]))
# Lying count: 2^64-1 entries announced, one present. SUCCESS when the one
# entry answers every query, ERROR otherwise.
write("huge-count.bin", header([(G906, n, 4)], count=M64) + b"\x7fELF")
# Table truncated after the first entry (count says 2).
write("truncated-second-entry.bin", header([(G906, n + 8, 4)], count=2)
      + struct.pack("<Q", 0) + b"\x7fELF")
# Truncated headers.
write("truncated-magic.bin", MAGIC[:20])
write("truncated-count.bin", MAGIC + b"\x01\x00\x00")
write("id-len-huge.bin", MAGIC + struct.pack("<QQQQ", 1, 0, 0, M64) + b"hip-")
# Two code objects, gfx906 first: query order decides whether gfx90a is found.
write("two-targets.bin", bundle([(HOST, b""), (G906, b"\x7fELF906"),
                                 (G90A, b"\x7fELF90a")]))
# A zero-size entry that matches: it counts as "seen" but is reported as
# "not found", and the real entry after it is never looked at.
b = bundle([(G906, b""), (G906, b"\x7fELF906")])
write("zero-size-first.bin", b)
# Generic (any) entry before the xnack+ one: first compatible wins.
write("any-before-specific.bin",
      bundle([(G906, b"\x7fELFany"), (G906 + b":xnack+", b"\x7fELFx+")]))
# Offload kinds: hcc and hip are accepted like hipv4; openmp is skipped.
write("kind-hcc.bin", bundle([(b"hcc-amdgcn-amd-amdhsa--gfx906", b"\x7fELF")]))
write("kind-openmp.bin",
      bundle([(b"openmp-amdgcn-amd-amdhsa--gfx906", b"\x7fELF")]))
# Normalized triple (LLVM >= 20 "-unknown-" spelling) and a missing kind.
write("triple-unknown-env.bin",
      bundle([(b"hipv4-amdgcn-amd-amdhsa-unknown-gfx906", b"\x7fELF")]))
write("no-kind.bin", bundle([(b"amdgcn-amd-amdhsa--gfx906", b"\x7fELF")]))
# Entry table larger than 4096 bytes (CLR hands comgr only 4096 bytes of an
# in-memory image): 80 host-like entries, then gfx906.
ids = [b"hipv4-amdgcn-amd-amdhsa--gfx1030:pad%03d" % i for i in range(80)] + [G906]
write("table-over-4k.bin", bundle([(i, b"\x7fELF") for i in ids]))
# Generic processor (code object v6, LLVM >= 19): unknown to comgr 5.2.
write("generic-entry.bin",
      bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx9-generic", b"\x7fELF")]))

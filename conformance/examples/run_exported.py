#!/usr/bin/env python3
"""Run an implementation of your own on an exported corpus: a worked
runner of the protocol (offload-kit conformance export DIR), standard
library only, for every operation of the corpus.

    offload-kit conformance export corpus-out
    python3 conformance/examples/run_exported.py corpus-out -- my-parser --json
    # each case runs: my-parser --json INPUT

Operations (--op; your command gets these arguments after its own; D is
an empty directory the runner reads back, PATH an input file):
  locate INPUT                       where each bundle entry lies: print one
                                     JSON array of {"id", "offset", "size"}
                                     (or an object with it under "entries")
  kpack-locate INPUT                 the same for ROCm kpack archives and the
                                     hosts split into them (the kpack
                                     chapter's cases, apart so that a bundle
                                     parser's locate score is about bundles)
  list --type T INPUT                the entry IDs, in order: a JSON array
  unbundle --type T INPUT --output-dir D --target ID...
                                     [--allow-missing-bundles]
                                     [--hip-openmp-compatible]
                                     [--check-input-archive] [--outputs N]
                                     write each target's payload as D/0,
                                     D/1, ... (in target order)
  bundle --type T --output-dir D --target ID... --input PATH...
                                     [--bundle-align N] [--outputs N]
                                     write the bundle of those entries
                                     (target i holds input i) as D/0
  compress --type T --output-dir D --target ID... --input PATH...
                                     [--format-version 1|2|3]
                                     [--method zstd|zlib]
                                     [--compression-level N]
                                     write the compressed bundle (CCOB) of
                                     those entries as D/0
  decompress INPUT --output-dir D    write the bundle a compressed bundle
                                     holds as D/0
  verify INPUT                       JSON true when every compressed bundle
                                     in INPUT verifies (sizes, hash)
  package --output-dir D --image SPEC...
                                     write the offload binary of those
                                     images (clang-offload-packager's
                                     --image syntax) as D/0
  unpackage INPUT --image SPEC...    run in D: extract the images SPEC
                                     selects into the files it names, and
                                     print them: a JSON array of names
  objdump-offloading INPUT           JSON true when every offload binary in
                                     INPUT reads (llvm-objdump --offloading)
  extract-uri URI --output-dir D     write the bytes the code object URI
                                     names as D/0 (spec/uri.md)
  lookup INPUT REQUEST...            the code object a HIP loader picks for
                                     each GPU (a full target ID): a JSON
                                     object {REQUEST: [offset, size] or null}
  kpack-lookup HOST REQUEST...       run where HOST and its kpack archives
                                     lie: what ROCm's kpack runtime loads
                                     per GPU, a JSON object {REQUEST:
                                     "FOUND <archive> <key> <arch> <size>"
                                     or the runtime's error}
  parse-id --id ID --targets T,T...  the ID a bundler writes for -targets
                                     entry ID among those targets: a JSON
                                     string (spec/bundle-id.md, Written IDs)
  compatible --entry E --request R [--hip-openmp-compatible]
                                     whether a code object with entry ID E
                                     satisfies the request R: JSON true or
                                     false (spec/bundle-id.md, COMPAT-*)
A command either succeeds (exit 0) with that answer, or fails (exit
non-zero) and says which rule the input breaks: {"error": {"rule":
"BIN-5", "offset": 81}} on stdout, or a line holding "rule BIN-5" on
stderr (offload-kit's own "(at offset 0x51, rule BIN-5)"). It may name
several ({"errors": [...]}, or several such lines): the expected rule
named first passes; named second to fourth it counts as "named among
several", not as a pass. A case the
implementation does not handle is declined with {"unsupported": WHY} on
stdout and exit status 3: "not claimed", never a pass.
conformance/examples/template_impl.py is a template implementation
(standard library only); conformance/examples/by_offload_kit.py answers
every operation by wrapping existing tools (LLVM's or offload-kit's).
An implementation that reports no rules says so with --no-rules: its
failures on cases that expect one count as "rejected, rule unchecked",
never as a pass.

--variant picks the inputs and expectations to follow: `spec` (default,
IDs spelled canonically) or a release, `llvm-22`, whose inputs are spelled
as 22 writes them; with a release, an outcome the corpus documents for it
(`known_divergence`) counts as "documented divergence", not as a pass.

Every run has a time limit (--timeout, 10 s) and an output limit (4 MiB);
output that is not JSON, binary, too large or late is reported as what it
is, with the expected and the observed answer. Filters: --case GLOB (case
IDs), --chapter NAME (the case's directory: binary, kpack, ...), --rule
ID-OR-PREFIX (BIN, BIN-5), --op. With no command,
offload-kit itself stands in for `locate` (`offload-kit list INPUT
--json`). Exit status 1 when any case differs, crashes or times out.
A compressed bundle made with zstd is checked with Python 3.14's
compression.zstd or the `zstd` program; with neither, such a case is
"unchecked", never a pass.
"""
import argparse
import base64
import fnmatch
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import urllib.parse
import zlib

LIMIT = 4 << 20
RULE = re.compile(r"\brule ([A-Z]+-\d+)\b")


def run(argv, timeout, cwd=None):
    """(exit status or None when timed out, stdout, stderr, note)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            # A session of its own: on a time-out the whole group goes,
            # the tools a wrapper started included, and so do strays.
            p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd,
                                 start_new_session=True)
        except OSError as e:
            return 127, b"", str(e).encode(), "cannot run"
        try:
            code = p.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        sizes = []
        data = []
        for f in (out, err):
            f.seek(0, os.SEEK_END)
            sizes.append(f.tell())
            f.seek(0)
            data.append(f.read(LIMIT))
        note = "output over 4 MiB" if sizes[0] > LIMIT else ""
        return code, data[0], data[1], note


def show(b, n=120):
    text = b.decode("utf-8", errors="replace")
    text = "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)
    return text[:n] + ("…" if len(text) > n else "")


# The rules of one failure an answer may name: an input may break several
# rules and an implementation may name each; the expected one named first
# passes, named among the first four it is "named among several" (not a
# pass: an answer naming every rule would otherwise pass every case).
RULES_COUNTED = 4


def reported_rules(stdout, stderr):
    """[(rule, offset or None)] an implementation reports for a failure, in
    its order: {"error": {"rule", "offset"}} or {"errors": [...]} on stdout,
    else each "rule X" on stderr."""
    try:
        doc = json.loads(stdout)
        errors = doc["errors"] if "errors" in doc else [doc["error"]]
        return [(e["rule"], e.get("offset")) for e in errors
                if isinstance(e, dict) and isinstance(e.get("rule"), str) and e["rule"]]
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        pass
    return [(m.group(1), None) for m in RULE.finditer(stderr.decode("utf-8", errors="replace"))]


def declined(code, out):
    """Whether the implementation declined the case (exit 3, "unsupported")."""
    if code != 3:
        return False
    doc = read_json(out)
    return isinstance(doc, dict) and "unsupported" in doc


def judge_common(want, code, out, err, note, no_rules):
    """(status, why) when the outcome decides alone (a time-out, a crash,
    a declined case, an expected failure, output the runner could not
    take); None when the answer is read."""
    if code is None:
        return "timed out", "no answer within the time limit"
    if note == "cannot run":
        return "crashed", f"the command cannot run: {show(err)}"
    if code < 0 or code >= 128:
        return "crashed", f"exit status {code}"
    if declined(code, out):
        return "not claimed", ""
    if "fail" in want:
        rule = want["fail"]
        if code == 0:
            return "differs", f"expected failure {rule}, got success: {show(out)}"
        if rule == "*":
            return "pass", ""
        if no_rules:
            return "rejected, rule unchecked", f"expected {rule}"
        got = reported_rules(out, err)
        if not got:
            return "differs", f"expected {rule}, got a failure that names no rule: {show(err or out)}"
        named = ", ".join(r + (f" at offset {o}" if o is not None else "") for r, o in got[:RULES_COUNTED])
        if got[0][0] == rule:
            return "pass", ""
        if rule in [r for r, _ in got[:RULES_COUNTED]]:
            return "named among several", f"expected {rule} first, got {named}"
        return "differs", f"expected {rule}, got {named}"
    if code != 0:
        got = " ".join(r for r, _ in reported_rules(out, err))
        return "differs", f"expected success, got failure {got}: {show(err or out)}"
    return ("differs", note) if note else None


def read_json(out):
    """The answer as JSON, or None."""
    try:
        return json.loads(out)
    except (ValueError, RecursionError):
        return None


def whole(v):
    """`v` when it is an integer (not a boolean, text or a float), else
    ValueError: answers are read as written, not converted."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise ValueError(f"not an integer: {v!r}")


def located_entry(e):
    if not isinstance(e["id"], str):
        raise ValueError("an ID that is not text")
    return (e["id"], whole(e["offset"]), whole(e["size"]))


def check_locate(want, got):
    """Why `got` (the parsed answer) is not the `locate` answer; None when it is."""
    try:
        entries = got["entries"] if isinstance(got, dict) else got
        have = sorted(map(located_entry, entries))
    except (TypeError, KeyError, ValueError):
        return "output is not a JSON array of {id: text, offset: integer, size: integer}"
    expected = sorted(map(located_entry, want["locate"]))
    if have == expected:
        return None
    missing = [e for e in expected if e not in have]
    extra = [e for e in have if e not in expected]
    return f"expected {expected}, got {have} (missing {missing}, unexpected {extra})"


def check_list(want, got):
    try:
        have = got["list"] if isinstance(got, dict) else got
        if not isinstance(have, list) or not all(isinstance(i, str) for i in have):
            raise TypeError
    except (TypeError, KeyError):
        return "output is not a JSON array of IDs (text)"
    return None if have == want["list"] else f"expected {want['list']}, got {have}"


def check_lookup(want, got):
    """Each request answered with one of its candidates ([offset, size]),
    or null where the spec finds none."""
    if not isinstance(got, dict):
        return "output is not a JSON object {request: [offset, size] or null}"
    for w in want["lookup"]:
        have = got.get(w["request"], "missing")
        pair = isinstance(have, list) and len(have) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in have)
        ok = have is None if not w["candidates"] else pair and have in w["candidates"]
        if not ok:
            return f"{w['request']}: expected {w['candidates'] or 'none (null)'}, got {json.dumps(have)}"
    return None


def check_kpack_lookup(want, got):
    if not isinstance(got, dict):
        return "output is not a JSON object {request: answer}"
    for w in want["kpack_lookup"]:
        if got.get(w["request"]) != w["answer"]:
            return f"{w['request']}: expected {w['answer']!r}, got {got.get(w['request'])!r}"
    return None


def payload(spec, inputs):
    """The bytes a payload spec names ({"utf8"}, {"hex"}, {"input"})."""
    if "utf8" in spec:
        return spec["utf8"].encode()
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    return inputs(spec["input"])


TEXT_COMMENTS = {"i": "//", "ii": "//", "cui": "//", "hipi": "//", "d": "#", "s": "#", "ll": ";"}
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def build_bundle(b, file_type, inputs):
    """The bytes of the bundle `b` ({"align", "entries": [{"id", "payload"}]},
    as the export writes it) for `file_type`: spec/binary-bundle.md's
    layout, or spec/text-bundle.md's for a text type."""
    entries = [(e["id"].encode(), payload(e["payload"], inputs)) for e in b["entries"]]
    c = TEXT_COMMENTS.get(file_type)
    if c:
        m = f"{c} __CLANG_OFFLOAD_BUNDLE____".encode()
        return b"".join(b"\n" + m + b"START__ " + i + b"\n" + p + b"\n" + m + b"END__ " + i + b"\n"
                        for i, p in entries)
    align = b.get("align", 1)
    header = MAGIC + struct.pack("<Q", len(entries))
    cur = len(MAGIC) + 8 + sum(24 + len(i) for i, _ in entries)
    offsets = []
    for i, p in entries:
        cur = -(-cur // align) * align
        header += struct.pack("<QQQ", cur, len(p), len(i)) + i
        offsets.append(cur)
        cur += len(p)
    out = bytearray(header)
    for (_, p), off in zip(entries, offsets):
        out += bytes(off - len(out)) + p
    return bytes(out)


class Unchecked(Exception):
    """The runner cannot check this here (zstd without a decoder)."""


# The most an implementation's compressed output is decompressed to here:
# the corpus's bundles are small, a "zip bomb" is not held.
HELD = 64 << 20


def zlib_decompress(data):
    """zlib's stream, at most HELD + 1 bytes of it (more is reported)."""
    d = zlib.decompressobj()
    return d.decompress(data, HELD + 1)


def zstd_decompress(data):
    """The zstd frame's bytes, at most HELD + 1 of them: Python 3.14's
    compression.zstd, else the zstd program (10 s at most)."""
    try:
        from compression import zstd  # Python 3.14
    except ImportError:
        zstd = None
    if zstd is not None:
        try:
            return zstd.ZstdDecompressor().decompress(data, max_length=HELD + 1)
        except Exception as e:  # zstd.ZstdError and what a broken frame raises
            raise ValueError(f"zstd: {e}") from None
    if not shutil.which("zstd"):
        raise Unchecked("a zstd frame, and neither compression.zstd nor the zstd program is here")
    with tempfile.TemporaryFile() as src, tempfile.TemporaryFile() as dst:
        src.write(data)
        src.seek(0)
        p = subprocess.Popen(["zstd", "-dcq"], stdin=src, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            out = p.stdout.read(HELD + 1)
        finally:
            p.kill()
            p.wait()
    if p.returncode not in (0, -signal.SIGKILL) and len(out) <= HELD:
        raise ValueError(f"zstd: the frame does not decode (exit {p.returncode})")
    return out


def check_compressed(c, got, file_type, inputs):
    """Why `got` is not the compressed bundle `c` asks for (spec/ccob.md:
    the header fields, the sizes, the hash, the content); None when it is."""
    if not got.startswith(b"CCOB") or len(got) < 8:
        return f"not a compressed bundle: {show(got, 40)}"
    version, method = struct.unpack_from("<HH", got, 4)
    sizes = {1: ("<I", None, 20), 2: ("<II", 8, 24), 3: ("<QQ", 8, 32)}
    if version not in sizes:
        return f"compressed bundle version {version}"
    if c.get("version") not in (None, version):
        return f"compressed bundle version {version}; expected {c['version']}"
    name = {0: "zlib", 1: "zstd"}.get(method, "unknown")
    if c.get("method") not in (None, name):
        return f"compression method {name}; expected {c['method']}"
    fmt, _, hsize = sizes[version]
    if len(got) < hsize:
        return "the header is cut short"
    fields = struct.unpack_from(fmt, got, 8)
    total, usize = (len(got), fields[0]) if version == 1 else fields
    (digest,) = struct.unpack_from("<8s", got, hsize - 8)
    if total != len(got):
        return f"total size {total}; the blob has {len(got)} bytes (CCOB-4)"
    data = got[hsize:]
    try:
        plain = zlib_decompress(data) if name == "zlib" else zstd_decompress(data)
    except (zlib.error, ValueError) as e:
        return f"the compressed data does not decompress: {e}"
    if len(plain) > HELD:
        return f"the compressed data decompresses to more than {HELD} bytes, more than any case's bundle"
    if len(plain) != usize:
        return f"uncompressed size {usize}; the data decompresses to {len(plain)} bytes (CCOB-6)"
    if hashlib.md5(plain).digest()[:8] != digest:
        return "the hash is not the first 8 bytes of the MD5 of the bundle (CCOB-7)"
    want = payload(c["content"], inputs) if "content" in c else build_bundle(c["bundle"], file_type, inputs)
    return None if plain == want else f"decompresses to {show(plain, 60)}; expected {show(want, 60)}"


def elf_sections(data):
    """[(name, type, flags, align, bytes)] of an ELF file's sections after
    the null one (32 or 64 bits, either byte order), or why not."""
    if len(data) < 52 or not data.startswith(b"\x7fELF") or data[4] not in (1, 2) or data[5] not in (1, 2):
        return f"not an ELF file: {show(data, 40)}"
    e = "<" if data[5] == 1 else ">"
    wide = data[4] == 2
    if wide and len(data) < 64:
        return "the ELF header is cut short"
    shoff = struct.unpack_from(e + ("Q" if wide else "I"), data, 0x28 if wide else 0x20)[0]
    shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A if wide else 0x2E)
    head = e + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
    if shentsize != struct.calcsize(head) or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        return "a section header table outside the file"
    heads = [struct.unpack_from(head, data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx]
    strtab = data[names[4]:names[4] + names[5]]
    out = []
    for name, typ, flags, _, off, size, _, _, align, _ in heads[1:]:
        text = strtab[name:strtab.find(b"\0", name)].decode("latin-1")
        body = data[off:off + size] if typ != 8 else b""  # SHT_NOBITS holds no bytes
        out.append((text, typ, flags, align, body))
    return out


def check_elf(fact, got, inputs):
    """An ELF file with exactly these sections after the null one; a bundle
    section SHT_PROGBITS, flags SHF_EXCLUDE, alignment 1, holding its payload
    (spec/object-bundle.md OBJ-8, OBJ-10)."""
    secs = elf_sections(got)
    if isinstance(secs, str):
        return secs
    want = [s if isinstance(s, str) else "__CLANG_OFFLOAD_BUNDLE__" + s["bundle"]
            for s in fact["elf"]["sections"]]
    have = [s[0] for s in secs]
    if have != want:
        return f"ELF sections {have}; expected {want}"
    for s, (name, typ, flags, align, body) in zip(fact["elf"]["sections"], secs):
        if isinstance(s, str):
            continue
        if (typ, flags, align) != (1, 0x80000000, 1):
            return f"section {name}: type {typ}, flags {flags:#x}, alignment {align}; expected 1, 0x80000000, 1"
        if "payload" in s and body != payload(s["payload"], inputs):
            return f"section {name} holds {show(body, 40)}; expected {show(payload(s['payload'], inputs), 40)}"
    return None


def fact_holds(fact, got, inputs):
    """Why output bytes `got` (None: not written) are not what `fact`
    says; None when they are."""
    if fact.get("absent"):
        return None if got is None else "written; expected none"
    if got is None:
        return "not written"
    if "elf" in fact:
        return check_elf(fact, got, inputs)
    if "zeros" in fact:
        ok = got == bytes(fact["zeros"])
    elif "base64" in fact:
        ok = got == base64.b64decode(fact["base64"])
    elif "sha256" in fact:
        ok = hashlib.sha256(got).hexdigest() == fact["sha256"]
    elif "size" in fact:
        ok = len(got) == fact["size"]
    elif any(k in fact for k in ("utf8", "hex", "input")):
        ok = got == payload(fact, inputs)
    else:
        return f"a fact this runner does not know: {fact}"
    return None if ok else f"got {show(got, 60)}"


def check_outputs(want, outputs, file_type, inputs):
    """Why the written files `outputs` (bytes or None, in order) are not
    what `want` says; None when they are."""
    if "bundle" in want or "compressed" in want:
        got = outputs[0] if outputs else None
        if got is None:
            return "output 0 not written"
        if "compressed" in want:
            return check_compressed(want["compressed"], got, file_type, inputs)
        expected = build_bundle(want["bundle"], file_type, inputs)
        if got == expected:
            return None
        first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        return f"bundle differs from byte {first:#x} ({len(got)} B, expected {len(expected)} B)"
    for n, fact in enumerate(want.get("outputs", [])):
        why = fact_holds(fact, outputs[n] if n < len(outputs) else None, inputs)
        if why:
            return f"output {n}: expected {fact}: {why}"
    return None


def judge(op, want, code, out, err, note, no_rules, written, file_type, inputs, case_files=()):
    """(status, why) of one case against the expectation `want`
    (`case_files`: the names of unpackage's outputs)."""
    decided = judge_common(want, code, out, err, note, no_rules)
    if decided:
        if decided[0] == "pass" and want.get("no_outputs") and any(w is not None for w in written):
            return "differs", "failed as expected but left outputs (CLI-5)"
        return decided
    readers = {"locate": check_locate, "list": check_list, "lookup": check_lookup,
               "kpack_lookup": check_kpack_lookup}
    key = next((k for k in readers if k in want), None)
    if key or "id" in want or "compatible" in want:
        got = read_json(out)
        if got is None:
            return "differs", f"output is not JSON: {show(out)}"
        if key:
            why = readers[key](want, got)
        else:
            expected = want["id"] if "id" in want else want["compatible"]
            same = type(got) is type(expected) and got == expected
            why = None if same else f"expected {json.dumps(expected)}, got {show(out)}"
    elif op == "unpackage":
        # The files written are said too (a JSON array of names in D), so
        # that writing nothing is an answer, not the absence of one.
        said = read_json(out)
        names = case_files
        if not isinstance(said, list) or not all(isinstance(n, str) for n in said):
            why = f"expected a JSON array of the files written, got {show(out) or 'nothing'}"
        else:
            why = next((f"{n}: {'said written but absent' if n in said else 'written but not said'}"
                        for n, w in zip(names, written) if (w is not None) != (n in said)), None)
            why = why or check_outputs(want, written, file_type, inputs)
    elif op in ("verify", "objdump-offloading"):
        # The answer of a success is said, not only exited with: JSON true.
        got = read_json(out)
        why = None if got is True else f"expected the answer true, got {show(out) or 'nothing'}"
    else:
        try:
            why = check_outputs(want, written, file_type, inputs)
        except Unchecked as e:
            return "unchecked", str(e)
    return ("differs", why) if why else ("pass", "")


def documented(case, variant, op, code, out, err, note, written, inputs):
    """The known divergence the outcome matches (a note), or None."""
    if variant == "spec":
        return None
    for k in case["releases"][variant]["known_divergence"]:
        o = k["outcome"]
        crashed = code is None or code < 0 or code >= 128
        if isinstance(o, str):
            hit = {"crash": code is not None and crashed, "timeout": code is None,
                   "success": code == 0, "failure": code not in (0, None) and not crashed,
                   "any": True}.get(o, False)
        else:
            hit = judge(op, o, code, out, err, note, False, written, case["args"].get("type"),
                        inputs, case["args"].get("output_files", []))[0] == "pass"
        if hit:
            return k["note"]
    return None
OPS = ["locate", "kpack-locate", "list", "unbundle", "bundle", "compress", "decompress", "verify",
       "package", "unpackage", "objdump-offloading", "extract-uri", "lookup", "kpack-lookup",
       "parse-id", "compatible"]
# Operations whose answer is files in the output directory D (D/0, ...).
WRITES = {"unbundle", "bundle", "compress", "decompress", "package", "extract-uri"}


def encode_path(path):
    """A path percent-encoded as spec/uri.md URI-2 writes it."""
    return urllib.parse.quote(path, safe="/_.~-")


def op_argv(case, op, path, names, outdir):
    """The arguments a command gets for `case` (see the module's help);
    `names` maps each input name to its file."""
    args = case["args"]
    if op in ("locate", "kpack-locate", "verify", "objdump-offloading"):
        return [path] if op in ("locate", "kpack-locate") else [op, path]
    if op == "parse-id":
        return ["parse-id", "--id", args["id"], "--targets", ",".join(args["targets"])]
    if op == "compatible":
        extra = ["--hip-openmp-compatible"] if args.get("hip_openmp_compatible") else []
        return ["compatible", "--entry", args["entry"], "--request", args["request"], *extra]
    if op in ("lookup", "kpack-lookup"):
        return [op, path, *args["requests"]]
    if op == "decompress":
        return [op, path, "--output-dir", outdir]
    if op == "extract-uri":
        uri = args["uri"].replace("{path}", encode_path(path)).replace("{raw_path}", path)
        return [op, uri, "--output-dir", outdir]
    if op in ("package", "unpackage"):
        images = [re.sub(r"\{input:([^}]*)\}", lambda m: names[m.group(1)], i)
                  for i in args.get("images", [])]
        head = [op, "--output-dir", outdir] if op == "package" else [op, path]
        return head + [x for i in images for x in ("--image", i)]
    argv = [op, "--type", args.get("type", "bc")]
    files = [names[n] for n in args.get("inputs", [])]
    if op in ("bundle", "compress"):
        argv += ["--output-dir", outdir]
        argv += [x for t in args.get("targets", []) for x in ("--target", t)]
        argv += [x for f in files for x in ("--input", f)]
        for key in ("bundle_align", "format_version", "method", "compression_level"):
            if key in args:
                argv += ["--" + key.replace("_", "-"), str(args[key])]
        if "outputs" in args:
            argv += ["--outputs", str(args["outputs"])]
        return argv
    # list, unbundle: the first input is INPUT; every other input the case
    # passes (CLI-2 cases pass two) follows it.
    argv += files
    if op == "unbundle":
        if "outputs" in args:
            argv += ["--outputs", str(args["outputs"])]
        argv += ["--output-dir", outdir]
        for t in args.get("targets", []):
            argv += ["--target", t]
        for key in ("allow_missing_bundles", "hip_openmp_compatible", "check_input_archive"):
            if args.get(key):
                argv.append("--" + key.replace("_", "-"))
    return argv


def written_files(case, op, outdir):
    """What the command wrote, in output order (bytes, or None)."""
    if op == "unpackage":
        names = case["args"].get("output_files", [])
    else:
        n = len(case["expect"].get("outputs", [])) or 1
        if op == "unbundle":
            n = max(n, len(case["args"].get("targets", [])))
        names = [str(i) for i in range(n)]
    out = []
    for name in names:
        p = os.path.join(outdir, name)
        # A regular file, read as far as the output limit; a link or
        # anything else written there counts as not written.
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                out.append(f.read(LIMIT))
        else:
            out.append(None)
    return out


def run_case(case, cid, a, cmd, scratch):
    """(status, why) of one case."""
    op, variant, args = case["op"], a.variant, case["args"]
    src = lambda n: os.path.join(a.dir, cid, case["inputs"][n][variant] or "")

    def inputs(n):
        with open(src(n), "rb") as f:
            return f.read()
    # Inputs are written as offload-kit's runner writes them: `in<i>-NAME`
    # (i: the position in args.inputs; unpackage's generated file names
    # and package's image kinds come from it), kpack-lookup's under their
    # own names (the host finds its archives by name), extract-uri's as
    # args.file_name (the path holds what the case is about). Inputs the
    # case does not pass are reference bytes only. An input missing from
    # the variant is a path to no file.
    passed = args.get("inputs") or []
    first = passed[0] if passed else None
    names = {}
    os.makedirs(os.path.join(scratch, "in"))
    for i, n in enumerate(passed):
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", n)
        if op == "extract-uri" and i == 0 and "file_name" in args:
            names[n] = os.path.join(scratch, "in", args["file_name"])
        else:
            names[n] = os.path.join(scratch, "in", safe if op == "kpack-lookup" else f"in{i}-{safe}")
        if case["inputs"][n][variant] is not None:
            shutil.copyfile(src(n), names[n])
    path = names.get(first) if first else None
    outdir = os.path.join(scratch, "out")
    os.makedirs(outdir)
    if cmd:
        argv = cmd + op_argv(case, op, path, names, outdir)
    else:
        argv = ["offload-kit", "list", path, "--json"]
    # unpackage writes where it runs: in D.
    cwd = outdir if op == "unpackage" else None
    code, out, err, note = run(argv, a.timeout, cwd)
    want = case["expect"] if variant == "spec" else case["releases"][variant]["expect"]
    files = args.get("output_files", [])
    # Whatever the implementation left is judged, never trusted: what the
    # runner cannot read (an unreadable output, an answer of a shape no
    # check expects) is a difference, said as such.
    try:
        written = written_files(case, op, outdir) if op in WRITES | {"unpackage"} else []
        status, why = judge(op, want, code, out, err, note, a.no_rules, written, args.get("type"), inputs, files)
        if status in ("differs", "crashed", "timed out"):
            doc = documented(case, variant, op, code, out, err, note, written, inputs)
            if doc:
                return "documented divergence", doc
    except (OSError, ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as e:
        return "differs", f"the answer cannot be read: {type(e).__name__}: {e}"
    return status, why


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--op", default="locate", choices=OPS)
    ap.add_argument("--case", default="*", help="case IDs to run (glob)")
    ap.add_argument("--chapter", default="", help="only this chapter's cases (binary, kpack, ...)")
    ap.add_argument("--rule", default="", help="only cases about this rule (BIN-5) or prefix (BIN)")
    ap.add_argument("--variant", default="spec", help="spec (default) or a release: llvm-22, ...")
    ap.add_argument("--no-rules", action="store_true", help="the implementation reports no rule IDs")
    ap.add_argument("--timeout", type=float, default=10.0)
    argv = sys.argv[1:]
    cmd = None
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    # The command's own files stay found where a case runs elsewhere.
    cmd = cmd and [os.path.abspath(w) if os.path.exists(w) and not os.path.isabs(w) else w for w in cmd]
    if cmd is None and a.op not in ("locate", "kpack-locate"):
        ap.error(f"--op {a.op}: give the implementation's command after --")
    counts = {"pass": 0, "differs": 0, "crashed": 0, "timed out": 0, "rejected, rule unchecked": 0,
              "named among several": 0, "not claimed": 0, "documented divergence": 0, "unchecked": 0}
    with open(os.path.join(a.dir, "index.json")) as f:
        index = json.load(f)
    for cid in index:
        if not fnmatch.fnmatchcase(cid, a.case) or a.chapter and cid.split("/")[0] != a.chapter:
            continue
        with open(os.path.join(a.dir, cid, "case.json")) as f:
            case = json.load(f)
        if case["op"] != a.op:
            continue
        if a.rule and not any(r == a.rule or r.startswith(a.rule + "-") for r in case.get("rules", [])):
            continue
        if a.variant != "spec" and a.variant not in case["releases"]:
            ap.error(f"--variant {a.variant}: the export has {', '.join(['spec', *case['releases']])}")
        with tempfile.TemporaryDirectory() as scratch:
            status, why = run_case(case, cid, a, cmd, scratch)
        counts[status] += 1
        if status not in ("pass", "not claimed"):
            # The reason quotes the implementation: escaped and cut short.
            print(f"{status}: {cid}: {show(why.encode(), 400)}")
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["differs"] or counts["crashed"] or counts["timed out"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""One file, one answer, whichever front end asks (issue 43): every input of
the conformance corpus (kpack archives and split hosts included) and
generated files of every kind, validated by the CLI (`offload-kit validate
--json`), Python (`offload_kit.validate`) and the C ABI
(`offloadkit_validate` in liboffloadkit.so), must get the same verdict,
rules and offsets; and Python's `inspect_file` must be the CLI's `inspect
--json` for every file both read.

What a front end does not expose is listed here, and the test checks the
list is still true (a front end that gains an operation fails it until the
list is updated):

| operation | CLI | Python | C ABI |
|---|---|---|---|
| validate | `validate` | `validate` | `offloadkit_validate` (first violation) |
| inspect | `inspect` | `inspect_file` (split hosts followed, given their path) | `offloadkit_inspect` (JSON; split hosts not followed) |
| list, read entries | `list`, `extract` | `open` (kpack archives listed, split hosts followed, given their path) | `offloadkit_list` (JSON; split hosts not followed) |
| check against a GPU | `check` | `check` (split hosts followed, given their path) | `offloadkit_check` (JSON, one GPU; split hosts refused) |
| bundle, unbundle | the `clang-offload-bundler` drop-in | `bundle`, `unbundle` | `offloadkit_bundle`, `offloadkit_unbundle` (one output a call) |
| compress, decompress | `compress`, `decompress` | `compress`, `decompress` | `offloadkit_compress`, `offloadkit_decompress` |
| split or join kpack | `convert --to kpack/bundle` | `split_kpack`, `join_kpack` | - (generation of a split: `offloadkit_generate_companion`) |
| generate | `generate` | `generate` | `offloadkit_generate*` |
"""

import ctypes
import hashlib
import json
import os
import pathlib
import subprocess

import pytest

import offload_kit as ok

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXE = os.environ.get("OFFLOAD_KIT_EXE", str(ROOT / "target" / "release" / "offload-kit"))
LIB = ROOT / "target" / "release" / "liboffloadkit.so"

# Operations a front end lacks (the table above), checked below.
MISSING = {
    "python": [],
    "c": ["offloadkit_split_kpack", "offloadkit_join_kpack"],
}


def cli(*args):
    return subprocess.run([EXE, *map(str, args)], capture_output=True)


@pytest.fixture(scope="session")
def files(tmp_path_factory):
    """Every distinct input file of the corpus (as `conformance export`
    writes them for the spec), and generated files of every kind, valid
    and breaking each rule the generator can break."""
    if not pathlib.Path(EXE).exists():
        pytest.fail(f"{EXE} is missing: run cargo build --release")
    d = tmp_path_factory.mktemp("parity")
    r = cli("conformance", "export", d / "export")
    assert r.returncode == 0, r.stderr
    seen, out = set(), []
    for f in sorted((d / "export").glob("**/spec/*")):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        if f.is_file() and digest not in seen:
            seen.add(digest)
            out.append(f)
    gen = d / "generated"
    gen.mkdir()
    for kind in ["binary", "text", "object", "ccob", "offload-binary", "archive", "fatbin", "kpack"]:
        for seed in range(3):
            data, _ = ok.generate(kind, seed=seed)
            p = gen / f"{kind}-{seed}"
            p.write_bytes(data)
            out.append(p)
    assert len(out) > 300, f"only {len(out)} files"
    return out


@pytest.fixture(scope="session")
def capi():
    if not LIB.exists():
        pytest.fail(f"{LIB} is missing: run cargo build --release (offload-kit-capi)")
    lib = ctypes.CDLL(str(LIB))
    lib.offloadkit_validate.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_uint64)]
    lib.offloadkit_validate.restype = ctypes.c_int
    lib.offloadkit_inspect.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.POINTER(ctypes.c_size_t)]
    lib.offloadkit_inspect.restype = ctypes.c_int
    lib.offloadkit_check.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    lib.offloadkit_check.restype = ctypes.c_int
    lib.offloadkit_list.argtypes = lib.offloadkit_inspect.argtypes
    lib.offloadkit_list.restype = ctypes.c_int
    strings, sizes = ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t)
    lib.offloadkit_bundle.argtypes = [strings, strings, sizes, ctypes.c_size_t, ctypes.POINTER(BundlerOptions),
                                      ctypes.c_char_p, ctypes.c_size_t, sizes]
    lib.offloadkit_bundle.restype = ctypes.c_int
    lib.offloadkit_unbundle.argtypes = [ctypes.c_char_p, ctypes.c_size_t, strings, ctypes.c_size_t, ctypes.c_size_t,
                                        ctypes.POINTER(BundlerOptions), ctypes.c_char_p, ctypes.c_size_t, sizes]
    lib.offloadkit_unbundle.restype = ctypes.c_int
    lib.offloadkit_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_char_p,
                                        ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, sizes]
    lib.offloadkit_compress.restype = ctypes.c_int
    lib.offloadkit_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, sizes]
    lib.offloadkit_decompress.restype = ctypes.c_int
    return lib


class BundlerOptions(ctypes.Structure):
    """offloadkit_bundler_options."""
    _fields_ = [("llvm_version", ctypes.c_uint32), ("file_type", ctypes.c_char_p), ("align", ctypes.c_uint32),
                ("compress", ctypes.c_uint32), ("level", ctypes.c_int32), ("allow_missing", ctypes.c_int)]


COMPRESS_DEFAULT, NOT_WRITTEN = 2**32 - 1, 2


def c_strings(items):
    return (ctypes.c_char_p * len(items))(*items)


def c_answer(call, *args):
    """A C bundler call's answer, sized and then written: (0, bytes),
    (NOT_WRITTEN, None) or (1, its errors document)."""
    need = ctypes.c_size_t()
    rc = call(*args, None, 0, ctypes.byref(need))
    assert rc in (0, 1, NOT_WRITTEN), f"{call.__name__} returned {rc}"
    buf = ctypes.create_string_buffer(need.value + 1)
    got = ctypes.c_size_t()
    assert call(*args, buf, need.value + 1, ctypes.byref(got)) == rc and got.value == need.value
    if rc == 1:
        return rc, json.loads(buf.value)
    return rc, (buf.raw[: got.value] if rc == 0 else None)


def c_bundle(lib, entries, typ, release, compress=0, align=1):
    targets = c_strings([t.encode() for t, _ in entries])
    payloads = c_strings([p for _, p in entries])
    sizes = (ctypes.c_size_t * len(entries))(*[len(p) for _, p in entries])
    o = BundlerOptions(release, typ.encode(), align, compress, 0, 0)
    return c_answer(lib.offloadkit_bundle, targets, payloads, sizes, len(entries), ctypes.byref(o))


def c_unbundle(lib, data, targets, typ, release, allow_missing):
    """Every output of offloadkit_unbundle, one call each, or the errors."""
    names = c_strings([t.encode() for t in targets])
    o = BundlerOptions(release, typ.encode(), 1, 0, 0, int(allow_missing))
    outs = []
    for i in range(len(targets)):
        rc, got = c_answer(lib.offloadkit_unbundle, data, len(data), names, len(targets), i, ctypes.byref(o))
        if rc == 1:
            return rc, got
        outs.append(got)
    return 0, outs


def c_check(lib, data, gpu):
    """offloadkit_check's document for one GPU, sized and then written."""
    need = ctypes.c_size_t()
    rc = lib.offloadkit_check(data, len(data), gpu.encode(), None, 0, ctypes.byref(need))
    assert rc in (0, 1), f"offloadkit_check returned {rc}"
    buf = ctypes.create_string_buffer(need.value + 1)
    assert lib.offloadkit_check(data, len(data), gpu.encode(), buf, need.value + 1, ctypes.byref(need)) == rc
    return rc, json.loads(buf.value)


def c_json(call, data):
    """A C JSON call's document (offloadkit_inspect, offloadkit_list), sized
    and then written."""
    need = ctypes.c_size_t()
    rc = call(data, len(data), None, 0, ctypes.byref(need))
    assert rc in (0, 1), f"{call.__name__} returned {rc}"
    buf = ctypes.create_string_buffer(need.value + 1)
    assert call(data, len(data), buf, need.value + 1, ctypes.byref(need)) == rc
    return rc, json.loads(buf.value)


def c_validate(lib, data):
    rule = ctypes.create_string_buffer(64)
    offset = ctypes.c_uint64()
    rc = lib.offloadkit_validate(data, len(data), rule, 64, ctypes.byref(offset))
    assert rc in (0, 1), f"offloadkit_validate returned {rc}"
    if rc == 0:
        return None
    return (rule.value.decode(), None if offset.value == 2**64 - 1 else offset.value)


def first(violations):
    """The C ABI's one answer: the violation at the lowest offset (none last),
    the first of those."""
    if not violations:
        return None
    v = min(violations, key=lambda v: 2**64 - 1 if v[1] is None else v[1])
    return (v[0] or "?", v[1])


def test_validate_gives_one_answer_everywhere(files, capi):
    differ = []
    for f in files:
        r = cli("validate", "--json", f)
        assert r.returncode in (0, 1), f"{f}: exit {r.returncode}: {r.stderr.decode(errors='replace')}"
        report = json.loads(r.stdout)
        by_cli = [(v.get("rule"), v.get("offset")) for v in report["violations"]]
        assert report["valid"] == (r.returncode == 0) == (not by_cli), f
        by_python = [(v.rule, v.offset) for v in ok.validate(f)]
        by_c = c_validate(capi, f.read_bytes())
        if by_cli != by_python or first(by_cli) != by_c:
            differ.append(f"{f.relative_to(f.parents[2])}: CLI {by_cli}, Python {by_python}, C ABI {by_c}")
    assert not differ, f"{len(differ)} of {len(files)} files:\n" + "\n".join(differ[:20])


def test_inspect_gives_the_clis_report(files):
    differ = []
    for f in files:
        r = cli("inspect", "--json", f)
        want = json.loads(r.stdout)["files"][0]
        want.pop("file", None)
        # A container's report, or a kpack archive's (under its own key).
        if list(want) == ["report"]:
            want = want["report"]
        try:
            got = ok.inspect_file(f)
        except ok.OffloadKitError as e:
            # What Python refuses, the CLI refuses too.
            if r.returncode != 0 or "error" in want:
                continue
            differ.append(f"{f}: Python raised {e}, the CLI answered")
            continue
        if got != want:
            differ.append(f"{f}: Python {json.dumps(got)[:300]} CLI {json.dumps(want)[:300]}")
    assert not differ, f"{len(differ)} of {len(files)} files:\n" + "\n".join(differ[:10])


def test_open_lists_what_the_cli_lists(files):
    # Python's open and `list --json`: the same entries (ID, offset, size,
    # bundle, and for kpack entries the architecture), or both refuse.
    differ, compared = [], 0
    for f in files:
        r = cli("list", "--json", f)
        try:
            got = [(e.id, e.offset, e.size, e.bundle, e.arch) for e in ok.open(f)]
        except ok.OffloadKitError as e:
            if r.returncode != 0:
                continue
            differ.append(f"{f}: Python raised {e}, the CLI listed")
            continue
        if r.returncode != 0:
            differ.append(f"{f}: Python listed {len(got)}, the CLI refused: {r.stderr.decode(errors='replace')[:200]}")
            continue
        compared += 1
        want = [(e["id"], e["offset"], e["size"], e["bundle"], e.get("kpack", {}).get("arch"))
                for e in json.loads(r.stdout)["entries"]]
        if got != want:
            differ.append(f"{f}: Python {got[:4]} CLI {want[:4]}")
    assert compared > 100, f"only {compared} files listed by both"
    assert not differ, f"{len(differ)} of {len(files)} files:\n" + "\n".join(differ[:10])


def test_the_missing_operations_are_still_missing(capi):
    for name in MISSING["python"]:
        assert not hasattr(ok, name), f"Python has {name} now: update MISSING and the table"
    for name in MISSING["c"]:
        assert not hasattr(capi, name), f"the C ABI has {name} now: update MISSING and the table"


def test_c_inspect_gives_the_clis_report(files, capi):
    # The C ABI's offloadkit_inspect and `inspect --json`: the same
    # document for every file (its member of "files" without "file"; a
    # split host's own report, its archives not followed from bytes).
    differ = []
    for f in files:
        r = cli("inspect", "--json", f)
        want = json.loads(r.stdout)["files"][0]
        for key in ("file", "kpack_host"):
            want.pop(key, None)
        rc, got = c_json(capi.offloadkit_inspect, f.read_bytes())
        assert rc == (1 if "errors" in want else 0), f
        if got != want:
            differ.append(f"{f}: C {json.dumps(got)[:300]} CLI {json.dumps(want)[:300]}")
    assert not differ, f"{len(differ)} of {len(files)} files:\n" + "\n".join(differ[:10])


def test_c_list_gives_the_clis_document(files, capi):
    # offloadkit_list and `list --json`: the same document for every file
    # the CLI lists (a kpack archive's without its file name; a split
    # host's own entries: bytes have no directory to find archives from).
    differ, compared = [], 0
    for f in files:
        r = cli("list", "--json", f)
        rc, got = c_json(capi.offloadkit_list, f.read_bytes())
        if r.returncode != 0:
            assert rc == 1 and got["errors"], f"{f}: C listed, the CLI refused"
            continue
        want = json.loads(r.stdout)
        want.get("kpack", {}).pop("file", None)
        want["entries"] = [e for e in want["entries"] if "archive" not in e.get("kpack", {})]
        compared += 1
        if rc != 0 or got != want:
            differ.append(f"{f}: C {json.dumps(got)[:200]} CLI {json.dumps(want)[:200]}")
    assert compared > 100, f"only {compared} files listed by both"
    assert not differ, f"{len(differ)} of {compared} files:\n" + "\n".join(differ[:10])


def test_c_check_gives_the_clis_verdicts(files, capi):
    # offloadkit_check and `check --json`: the same verdict per GPU for
    # every file the CLI judges (a split host, judged through its archives
    # by the CLI, is refused by C: bytes have no directory).
    gpus = ["gfx906", "gfx90a:xnack+", "gfx1100"]
    differ, compared = [], 0
    for f in files:
        r = cli("check", "--json", *[a for g in gpus for a in ("--gpu", g)], f)
        docs = json.loads(r.stdout)["files"] if r.stdout else []
        data = f.read_bytes()
        for i, g in enumerate(gpus):
            rc, got = c_check(capi, data, g)
            want = docs[0]["gpus"][i] if docs and "gpus" in docs[0] else None
            if want is None:
                assert rc == 1, f"{f} {g}: C answered {got}, the CLI did not"
                continue
            compared += 1
            if rc != 0 or got != want:
                differ.append(f"{f} {g}: C {json.dumps(got)[:200]} CLI {json.dumps(want)[:200]}")
    assert compared > 300, f"only {compared} verdicts compared"
    assert not differ, f"{len(differ)} of {compared} verdicts:\n" + "\n".join(differ[:10])


def test_check_gives_the_clis_verdicts(files):
    gpus = ["gfx906", "gfx90a:xnack+", "gfx1100"]
    differ, compared = [], 0
    for f in files:
        r = cli("check", "--json", *[a for g in gpus for a in ("--gpu", g)], f)
        report = json.loads(r.stdout) if r.stdout else {"files": []}
        # A container's verdicts, or a split host's (under `kpack`).
        want = [d.get("gpus", d.get("kpack")) for d in report["files"] if "gpus" in d or "kpack" in d]
        try:
            got = ok.check(f, gpu=gpus)
        except ok.OffloadKitError as e:
            if not want:
                continue
            differ.append(f"{f}: Python raised {e}, the CLI answered {want}")
            continue
        if not want:
            continue
        compared += 1
        if got != want[0]:
            differ.append(f"{f}: Python {json.dumps(got)[:300]} CLI {json.dumps(want[0])[:300]}")
    assert compared > 100, f"only {compared} files checked by both"
    assert not differ, f"{len(differ)} of {compared} files:\n" + "\n".join(differ[:10])


BUNDLE_HOST, BUNDLE_906 = "host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906"
BUNDLE_ENTRIES = [
    [(BUNDLE_HOST, b"HOST" * 9), (BUNDLE_906, b"\x7fELF" + bytes(range(200))), ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"B")],
    [(BUNDLE_906, b"no host")],
    [(BUNDLE_HOST, b""), ("hip-amdgcn-amd-amdhsa-gfx906", b"old spelling")],
    [(BUNDLE_HOST, b"h"), (BUNDLE_906, b"a"), (BUNDLE_906, b"twice")],
]


@pytest.mark.parametrize("release", [13, 16, 19, 22, 23, 24])
def test_c_bundle_is_pythons_and_the_drop_ins(capi, tmp_path, release):
    # offloadkit_bundle, Python's bundle and the clang-offload-bundler
    # drop-in: the same bytes, or the same refusal (rule and LLVM's message).
    version = "main" if release == 24 else release
    compared = refused = 0
    for k, entries in enumerate(BUNDLE_ENTRIES):
        for typ, compress, align in (("bc", 0, 1), ("o", 0, 4096), ("hipi", COMPRESS_DEFAULT, 1), ("bc", 2, 8)):
            rc, got = c_bundle(capi, entries, typ, release, compress, align)
            try:
                py = ok.bundle(entries, type=typ, align=align, compress=compress != 0,
                               format_version=None if compress in (0, COMPRESS_DEFAULT) else compress,
                               llvm_version=release)
            except ok.OffloadKitError as e:
                assert rc == 1, f"case {k} {typ}: C bundled where Python refused: {e}"
                assert got["errors"][0]["rule"] == e.rule and got["llvm_message"] == e.llvm_message, (got, e)
                refused += 1
                continue
            assert rc == 0 and got == py, f"case {k} {typ} {compress}: C {rc} {got!r:.80}"
            if compress == 2:
                continue  # the drop-in takes the version from the environment, where the release does
            ins = []
            for i, (_, p) in enumerate(entries):
                ins.append(tmp_path / f"in{k}-{i}")
                ins[-1].write_bytes(p)
            out = tmp_path / f"out{k}"
            flags = ["-compress"] if compress else []
            r = cli("bundler", f"--llvm-version={version}", f"-type={typ}", f"-bundle-align={align}",
                    f"-targets={','.join(t for t, _ in entries)}", *[f"-input={i}" for i in ins], f"-output={out}", *flags)
            assert r.returncode == 0 and out.read_bytes() == py, (k, typ, compress, r.stderr[-300:])
            compared += 1
    assert compared >= 6 and refused >= 2, f"{compared} bundles compared with the drop-in, {refused} refusals"


def test_c_unbundle_is_pythons_on_every_file(files, capi):
    # offloadkit_unbundle and Python's unbundle on every corpus and
    # generated file: the same outputs, or the same refusal.
    targets = [BUNDLE_HOST, BUNDLE_906, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"]
    differ, outputs = [], 0
    for n, f in enumerate(files):
        data = f.read_bytes()
        # Every release, type and -allow-missing-bundles together, in turn.
        release, typ = [13, 16, 19, 22, 23, 24][n % 6], ["o", "bc", "hipi"][(n // 6) % 3]
        allow = (n // 18) % 2 == 0
        rc, got = c_unbundle(capi, data, targets, typ, release, allow)
        try:
            py = ok.unbundle(data, targets, type=typ, allow_missing=allow, llvm_version=release)
        except ok.OffloadKitError as e:
            if rc != 1 or got["errors"][0]["rule"] != e.rule or got["llvm_message"] != e.llvm_message:
                differ.append((f.name, rc, str(got)[:120], e.rule, e.llvm_message))
            continue
        outputs += sum(o is not None for o in py)
        if rc != 0 or got != py:
            differ.append((f.name, rc, str(got)[:120], [None if o is None else len(o) for o in py]))
    assert not differ, differ[:5]
    assert outputs > 50, f"only {outputs} outputs: the files barely unbundle"


def test_c_decompress_is_pythons_and_the_clis_on_every_file(files, capi, tmp_path):
    # offloadkit_decompress, Python's decompress and `offload-kit decompress`
    # (the library's decompress_single): the same bundle, or the same rule
    # and offset, for every corpus and generated file.
    differ, decoded = [], 0
    out = tmp_path / "out"
    for f in files:
        data = f.read_bytes()
        rc, got = c_answer(capi.offloadkit_decompress, data, len(data))
        r = cli("decompress", f, "-o", out)
        try:
            py = ok.decompress(data)
        except ok.OffloadKitError as e:
            # A header claiming more than the budget: C and Python, which
            # hold the bundle, refuse it (CLI-6); the CLI streams it to its
            # output, and decoding decides.
            cli_ok = r.returncode in (0, 1) if e.rule == "CLI-6" else r.returncode == 1
            if rc != 1 or not cli_ok or (got["errors"][0]["rule"], got["errors"][0]["offset"]) != (e.rule, e.offset):
                differ.append((f.name, rc, str(got)[:100], r.returncode, e.rule, e.offset))
            continue
        decoded += 1
        if rc != 0 or got != py or r.returncode != 0 or out.read_bytes() != py:
            differ.append((f.name, rc, r.returncode, len(py)))
    assert not differ, differ[:5]
    assert decoded >= 5, f"only {decoded} files decompress"
    # Two compressed bundles back to back are not one: refused alike.
    one = ok.compress(ok.bundle([(BUNDLE_HOST, b"h"), (BUNDLE_906, b"d" * 99)], type="bc"))
    rc, got = c_answer(capi.offloadkit_decompress, one + one, 2 * len(one))
    with pytest.raises(ok.OffloadKitError, match="2 compressed bundles"):
        ok.decompress(one + one)
    assert rc == 1 and "2 compressed bundles" in got["errors"][0]["message"], got


@pytest.mark.parametrize("version,method,level", [(3, "zstd", 0), (2, "zlib", 0), (1, "zlib", 9), (3, "zstd", 19), (4, "zstd", 0)])
def test_c_compress_is_pythons_and_the_clis(capi, tmp_path, version, method, level):
    # offloadkit_compress, Python's compress and `offload-kit compress`: the
    # same bytes for a bundle, or the same refusal.
    data = ok.bundle([(BUNDLE_HOST, b"h" * 300), (BUNDLE_906, bytes(range(256)) * 30)], type="bc")
    rc, got = c_answer(capi.offloadkit_compress, data, len(data), version, method.encode(), level)
    src, out = tmp_path / "in.bc", tmp_path / "out.ccob"
    src.write_bytes(data)
    args = ["compress", src, "-o", out, f"--format-version={version}", f"--method={method}"]
    r = cli(*args, *([f"--level={level}"] if level else []))
    try:
        py = ok.compress(data, version=version, method=method, level=level or None)
    except ok.OffloadKitError as e:
        assert rc == 1 and got["errors"][0]["rule"] == e.rule and r.returncode == 1, (got, e, r.stderr)
        return
    assert rc == 0 and got == py and r.returncode == 0 and out.read_bytes() == py, (rc, r.stderr)
    assert ok.decompress(py) == data

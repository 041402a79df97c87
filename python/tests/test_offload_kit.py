"""offload_kit from Python against the offload-kit CLI and LLVM 22 on
clang-built artifacts: listings, payloads, validation, checks, bundles and
compressed bundles must be what the CLI (and, for bundles, LLVM) gives."""

import json
import os
import pathlib
import random
import shutil
import subprocess
import tempfile

import pytest

import offload_kit as ok

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXE = os.environ.get("OFFLOAD_KIT_EXE", str(ROOT / "target" / "release" / "offload-kit"))
LLVM22 = pathlib.Path("/usr/lib/llvm-22/bin")
HOST = "host-x86_64-unknown-linux-gnu"
DEV = "hip-amdgcn-amd-amdhsa--gfx906"


def cli(*args, check=True, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([EXE, *map(str, args)], capture_output=True, check=check, env=env)


@pytest.fixture(scope="session")
def art(tmp_path_factory):
    """Objects built by clang 22: one and two architectures, compressed,
    a text bundle (-E), an OpenMP object, an archive of them."""
    for tool in ("clang", "clang-offload-bundler", "llvm-ar"):
        if not (LLVM22 / tool).exists():
            pytest.fail(f"LLVM 22's {tool} is missing: run tools/setup")
    if not pathlib.Path(EXE).exists():
        pytest.fail(f"{EXE} is missing: run cargo build --release")
    d = tmp_path_factory.mktemp("art")
    shutil.copy(ROOT / "tests" / "fixtures" / "k.hip", d / "k.hip")
    hip = [str(LLVM22 / "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "--offload-arch=gfx906"]
    run = lambda *a: subprocess.run(list(a), cwd=d, check=True, capture_output=True)
    run(*hip, "--offload-arch=gfx90a:xnack+", "-c", "k.hip", "-o", "k.o")
    run(*hip, "--offload-compress", "-c", "k.hip", "-o", "kc.o")
    run(*hip, "-E", "k.hip", "-o", "k.hipi")
    (d / "omp.c").write_text("void f(int *p) {\n#pragma omp target map(tofrom: p[0:1])\n  *p = 1;\n}\n")
    run(str(LLVM22 / "clang"), "-fopenmp", "--offload-arch=gfx906", "-nogpulib", "-c", "omp.c", "-o", "omp.o")
    run(str(LLVM22 / "llvm-ar"), "rcs", "lib.a", "k.o", "kc.o")
    return d


INPUTS = ["k.o", "kc.o", "k.hipi", "omp.o", "lib.a"]


@pytest.mark.parametrize("name", INPUTS)
def test_open_lists_what_the_cli_lists(art, name):
    c = ok.open(art / name)
    want = json.loads(cli("list", "--json", art / name).stdout)
    assert c.kind == want["container"]
    got = [(e.id, e.offset, e.size, e.bundle, e.member, e.section) for e in c]
    exp = [(e["id"], e["offset"], e["size"], e["bundle"], e.get("member"), e.get("section")) for e in want["entries"]]
    assert got == exp
    assert len(c) == len(exp) and c[-1].id == exp[-1][0]
    # The same bytes in memory list alike.
    assert [e.id for e in ok.open((art / name).read_bytes())] == [e[0] for e in exp]


@pytest.mark.parametrize("name", ["k.o", "kc.o", "k.hipi", "omp.o"])
def test_read_gives_what_extract_writes(art, name, tmp_path):
    c = ok.open(str(art / name))
    for e in c:
        out = tmp_path / f"{e.index}.bin"
        cli("extract", art / name, "--id", e.id, "-o", out)
        assert c.read(e) == out.read_bytes(), e
    assert c.read(c.entries[0].id) == c.read(c.entries[0])


def test_archive_members_and_duplicate_ids(art):
    c = ok.open(art / "lib.a")
    assert {e.member for e in c} == {"k.o", "kc.o"}
    with pytest.raises(ok.OffloadKitError, match="several entries"):
        c.read(DEV.replace("hip-", "hipv4-"))
    kc = [e for e in c if e.member == "kc.o" and "gfx906" in e.id][0]
    assert kc.compressed_at is not None
    assert c.read(kc) == ok.open(art / "kc.o").read(kc.id)


@pytest.mark.parametrize("kind", ["binary", "text", "object", "fatbin", "ccob", "offload-binary", "archive", "kpack"])
def test_generated_files_validate_as_labelled(kind):
    rules = [l for l in cli("generate", "--list-kinds").stdout.decode().splitlines()]
    i = next(n for n, l in enumerate(rules) if l.split()[0] == kind)
    malformable = rules[i + 1].split(":", 1)[1].split()
    for seed in range(3):
        data, info = ok.generate(kind, seed=seed)
        assert ok.validate(data) == [], info
        assert "rule" not in info
        # A kpack split's archives come beside the host, each valid.
        assert (len(info["companions"]) > 0) == (kind == "kpack"), info
        for name, archive in info["companions"].items():
            assert name.endswith(".kpack") and ok.validate(archive) == [], name
    for rule in malformable:
        data, info = ok.generate(kind, seed=7, malformed=rule)
        v = ok.validate(data)
        assert (v[0].rule, v[0].offset) == (info["rule"], info["offset"]) == (rule, info["offset"])
        if rule.startswith("CO-"):
            # A broken image leaves the container readable.
            assert len(ok.open(data).entries) > 0
            continue
        with pytest.raises(ok.OffloadKitError) as e:
            ok.open(data)
        assert (e.value.rule, e.value.offset) == (rule, info["offset"])
        assert len(e.value.errors) == len(v)


def test_check_picks_as_the_cli(art):
    v = ok.check(art / "k.o", gpu=["gfx906", "gfx90a:xnack+", "gfx1100"])
    want = json.loads(cli("check", "--json", "--gpu", "gfx906", "--gpu", "gfx90a:xnack+", "--gpu", "gfx1100", art / "k.o", check=False).stdout)
    assert v == want["files"][0]["gpus"]
    assert [g["runs"] for g in v] == [True, True, False]
    assert ok.inspect_file(art / "k.o")["summary"]["code_objects"] == 2


def test_older_clang_output_is_read_with_warnings(tmp_path):
    # A clang-14-style entry ID (the processor where the environment goes:
    # ID-5) in an object's bundle: read as the CLI reads it, strict refuses.
    fat = ok.bundle([("hip-amdgcn-amd-amdhsa-gfx906", b"BC\xc0\xde")], type="bc", llvm_version=14)
    p = tmp_path / "rdc.bc"
    p.write_bytes(fat)
    report = ok.inspect_file(p)
    assert [w["rule"] for w in report["warnings"]] == ["ID-5"]
    want = json.loads(cli("inspect", "--json", p).stdout)["files"][0]["report"]
    assert report == want
    v = ok.check(p, "gfx906")
    assert v[0]["bundles"][0]["not_loadable"]
    with pytest.raises(ok.OffloadKitError) as e:
        ok.inspect_file(p, strict=True)
    assert e.value.rule == "ID-5"
    with pytest.raises(ok.OffloadKitError):
        ok.check(p, "gfx906", strict=True)


def bundler(tmp_path, release, typ, entries, compress=None):
    ins = []
    for n, (_, payload) in enumerate(entries):
        p = tmp_path / f"in{n}"
        p.write_bytes(payload)
        ins.append(f"-input={p}")
    out = tmp_path / "out"
    extra = ["-compress", f"-compression-level=3"] if compress else []
    env = dict(os.environ)
    if compress:
        env["COMPRESSED_BUNDLE_FORMAT_VERSION"] = str(compress)
    targets = "-targets=" + ",".join(t for t, _ in entries)
    return [f"-type={typ}", targets, *ins, f"-output={out}", "-bundle-align=4096", *extra], out, env


# Every type a release bundles, uncompressed and with each compressed
# bundle version it writes (19: v2, 22: v2 and v3; hipi from 16).
BUNDLINGS = [
    (release, typ, compress)
    for release in (14, 16, 19, 22, 24)
    for typ in ("bc", "o", "hipi", "s")
    for compress in (None, 2, 3)
    if not (compress and release < 19 or compress == 3 and release < 22 or typ == "hipi" and release < 16)
]


@pytest.mark.parametrize("release,typ,compress", BUNDLINGS)
def test_bundle_is_byte_identical_to_the_drop_in(art, tmp_path, release, typ, compress):
    host = (art / "k.o").read_bytes() if typ == "o" else b"int host;\n"
    entries = [(HOST, host), (DEV, b"device code\n"), ("hip-amdgcn-amd-amdhsa--gfx90a:xnack+", b"")]
    got = ok.bundle(entries, type=typ, align=4096, compress=bool(compress), format_version=compress,
                    level=3 if compress else None, llvm_version=release)
    args, out, env = bundler(tmp_path, release, typ, entries, compress)
    # LLVM main is 24 (24.0.0git), as the C ABI numbers it.
    version = "main" if release == 24 else release
    subprocess.run([EXE, "bundler", f"--llvm-version={version}", *args], check=True, env=env, capture_output=True)
    assert got == out.read_bytes()
    if release == 22:
        # And what LLVM 22 itself writes.
        subprocess.run([str(LLVM22 / "clang-offload-bundler"), *args], check=True, env=env, capture_output=True)
        assert got == out.read_bytes()


def test_bundle_defaults_are_the_bundlers(art, tmp_path):
    # No options: what clang-offload-bundler 22 writes with none
    # (-bundle-align=1), and with -compress alone (CCOB v3, its level).
    entries = [(HOST, b"int host;\n"), (DEV, b"device code\n")]
    for n, (_, p) in enumerate(entries):
        (tmp_path / f"in{n}").write_bytes(p)
    base = ["-type=bc", "-targets=" + ",".join(t for t, _ in entries),
            f"-input={tmp_path / 'in0'}", f"-input={tmp_path / 'in1'}"]
    env = {k: v for k, v in os.environ.items() if "BUNDLE" not in k}
    for kwargs, extra in [({}, []), ({"compress": True}, ["-compress"])]:
        out = tmp_path / "out"
        subprocess.run([str(LLVM22 / "clang-offload-bundler"), *base, f"-output={out}", *extra],
                       check=True, env=env, capture_output=True)
        assert ok.bundle(entries, type="bc", **kwargs) == out.read_bytes(), kwargs


def test_compress_and_decompress(art, tmp_path):
    b = ok.bundle([(HOST, b"h"), (DEV, b"d" * 1000)], type="bc")
    for version, method in [(3, "zstd"), (2, "zlib"), (1, "zstd")]:
        z = ok.compress(b, version=version, method=method)
        out = tmp_path / f"z{version}"
        (tmp_path / "in.bc").write_bytes(b)
        cli("compress", "--format-version", version, "--method", method, tmp_path / "in.bc", "-o", out)
        assert z == out.read_bytes()
        assert ok.decompress(z) == b
    with pytest.raises(ok.OffloadKitError) as e:
        ok.decompress(z[:-3])
    assert e.value.rule and e.value.rule.startswith("CCOB-")


def test_errors_carry_rule_and_offset(art, tmp_path):
    # What the file system refuses is an OSError, as Python's own open raises.
    with pytest.raises(FileNotFoundError, match="missing"):
        ok.open(tmp_path / "missing")
    with pytest.raises(IsADirectoryError, match="directory"):
        ok.open(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ok.OffloadKitError, match="not a regular file"):
        ok.open(tmp_path / "fifo")
    with pytest.raises(ok.OffloadKitError, match="llvm_version"):
        ok.open(art / "k.o", llvm_version=17)
    with pytest.raises(ok.OffloadKitError) as e:
        ok.open(b"__CLANG_OFFLOAD_BUNDLE__\x01")
    assert e.value.rule == "BIN-2" and e.value.offset is not None
    with pytest.raises(ok.OffloadKitError) as e:
        ok.bundle([(HOST, b"h"), (HOST, b"h")], type="bc")
    assert e.value.rule == "CLI-3"
    with pytest.raises(ok.OffloadKitError, match="kind"):
        ok.generate("nonsense")
    # What the release cannot write, and sizes no writer should allocate.
    with pytest.raises(ok.OffloadKitError, match="version 3"):
        ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc", compress=True, format_version=3, llvm_version=19)
    with pytest.raises(ok.OffloadKitError, match="compressed"):
        ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc", compress=True, llvm_version=16)
    # compress is a switch, not a version.
    with pytest.raises(ok.OffloadKitError, match="format_version"):
        ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc", compress=3)
    with pytest.raises(ok.OffloadKitError, match="32-bit"):
        ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc", align=2**40)
    with pytest.raises(ok.OffloadKitError) as e:
        ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc", align=2**31)
    assert e.value.rule == "CLI-6"


def test_a_file_cut_short_while_open_raises_not_kills(tmp_path):
    # Another process truncates the mapped file: the pages that vanished
    # read as zeros and the call raises OSError (the interpreter survives).
    big = bytes(range(256)) * 4096  # 1 MiB payload
    data = ok.bundle([(HOST, b"h"), (DEV, big)], type="bc", align=4096)
    f = tmp_path / "cut.bc"
    f.write_bytes(data)
    c = ok.open(f)
    dev = [e for e in c if e.id == DEV][0]
    assert c.read(dev) == big
    os.truncate(f, 4096)
    with pytest.raises(OSError, match="shrank"):
        c.read(dev)
    # Still refused afterwards: the zeros are never handed out as the file.
    with pytest.raises(OSError, match="shrank"):
        c.read(dev)
    # Other files are unaffected.
    g = tmp_path / "whole.bc"
    g.write_bytes(data)
    assert ok.open(g).read(DEV) == big


def test_memory_budget_bounds_decoding(tmp_path, monkeypatch):
    monkeypatch.delenv("OFFLOAD_KIT_MAX_MEMORY", raising=False)
    payload = b"\0" * (8 << 20)
    whole = ok.bundle([(HOST, b"h"), (DEV, payload)], type="bc")
    z = ok.compress(whole)
    with pytest.raises(ok.OffloadKitError) as e:
        ok.decompress(z, max_memory=4 << 20)
    assert e.value.rule == "CLI-6"
    f = tmp_path / "z.bc"
    f.write_bytes(z)
    small = ok.open(f, max_memory=4 << 20)
    with pytest.raises(ok.OffloadKitError) as e:
        small.read(DEV)
    assert e.value.rule == "CLI-6"
    # A small entry of the same bundle is read without inflating it all.
    assert small.read(HOST + "-") == b"h"
    # The budget is the call's: the default is untouched by the calls above.
    assert ok.max_memory() == 256 << 20
    assert ok.decompress(z) == whole
    assert ok.open(f).read(DEV) == payload
    assert ok.open(f, max_memory=64 << 20).read(DEV) == payload


def test_memory_budget_is_per_call_across_threads(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    payload = b"\1" * (8 << 20)
    z = ok.compress(ok.bundle([(HOST, b"h"), (DEV, payload)], type="bc"))

    def attempt(i):
        budget = (4 << 20) if i % 2 else (64 << 20)
        try:
            return len(ok.decompress(z, max_memory=budget))
        except ok.OffloadKitError as e:
            return e.rule

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(attempt, range(32)))
    # Each call is judged by its own budget, whatever the others asked for.
    assert all(g == "CLI-6" for g in got[1::2]), got
    assert all(isinstance(g, int) and g > len(payload) for g in got[0::2]), got


def test_memory_budget_from_environment(tmp_path, monkeypatch):
    z = ok.compress(ok.bundle([(HOST, b"h"), (DEV, b"\0" * (8 << 20))], type="bc"))
    monkeypatch.setenv("OFFLOAD_KIT_MAX_MEMORY", "4M")
    assert ok.max_memory() == 4 << 20
    with pytest.raises(ok.OffloadKitError) as e:
        ok.decompress(z)
    assert e.value.rule == "CLI-6"
    # A budget given to the call wins over the environment.
    assert len(ok.decompress(z, max_memory=64 << 20)) > 8 << 20
    # A variable that is not a size is refused, as the CLI refuses it.
    monkeypatch.setenv("OFFLOAD_KIT_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="OFFLOAD_KIT_MAX_MEMORY"):
        ok.decompress(z)
    with pytest.raises(ValueError, match="OFFLOAD_KIT_MAX_MEMORY"):
        ok.max_memory()
    assert len(ok.decompress(z, max_memory=64 << 20)) > 8 << 20


def test_bytes_like_inputs(art):
    data = (art / "k.o").read_bytes()
    ids = [e.id for e in ok.open(data)]
    assert [e.id for e in ok.open(bytearray(data))] == ids
    assert [e.id for e in ok.open(memoryview(data))] == ids
    z = ok.compress(bytearray(ok.bundle([(HOST, b"h"), (DEV, b"d")], type="bc")))
    assert ok.decompress(memoryview(z).tobytes()) == ok.decompress(z)


def test_hostile_bytes_raise_only_offload_kit_errors():
    rng = random.Random(16)
    kinds = ("binary", "fatbin", "ccob", "archive", "offload-binary", "kpack")
    seeds = [ok.generate(k, seed=s)[0] for k in kinds for s in range(4)]
    seeds += [a for s in range(2) for a in ok.generate("kpack", seed=s)[1]["companions"].values()]
    targets = ["hipv4-amdgcn-amd-amdhsa--gfx906", "host-x86_64-unknown-linux-gnu-"]
    calls = (ok.open, ok.validate, ok.inspect_file, ok.join_kpack,
             lambda d: ok.check(d, gpu="gfx906"), lambda d: ok.split_kpack(d),
             lambda d: ok.unbundle(d, targets, allow_missing=True))
    for n in range(400):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            del data[rng.randrange(len(data)):]
        for f in calls:
            try:
                f(bytes(data))
            except ok.OffloadKitError:
                pass
        try:
            ok.decompress(bytes(data))
        except ok.OffloadKitError:
            pass


def test_generate_carries_images_the_users_or_random_bytes(tmp_path):
    # Default: every entry carries an image for its target, which validates.
    data, info = ok.generate("binary", seed=3)
    assert ok.validate(data) == []
    report = ok.inspect_file(data)
    assert report["summary"]["code_objects"] >= 1
    # The user's images: IDs follow their ELF headers.
    image, _ = ok.generate("offload-binary", seed=1, target_ids=["openmp-x86_64-unknown-linux-gnu-"])
    c = ok.open(image)
    (tmp_path / "k.so").write_bytes(c.read(c.entries[0]))
    data, info = ok.generate("binary", seed=2, payloads=tmp_path)
    ids = [e.id for e in ok.open(data).entries]
    assert ids and all(i == "openmp-x86_64-unknown-linux-gnu-" for i in ids), ids
    # Random bytes, never an ELF header.
    data, _ = ok.generate("binary", seed=2, random_payloads=True)
    assert ok.inspect_file(data)["summary"]["code_objects"] == 0
    (tmp_path / "empty").mkdir()
    with pytest.raises(ok.OffloadKitError, match="no files"):
        ok.generate("binary", payloads=tmp_path / "empty")
    (tmp_path / "junk.txt").write_bytes(b"not an image")
    with pytest.raises(ok.OffloadKitError, match="device image"):
        ok.generate("binary", payloads=tmp_path)


def test_generate_for_a_release_makes_what_it_reads():
    # LLVM 22 reads offload binaries of version 1 only; main also 2 and 3.
    versions = {ok.generate("offload-binary", seed=s, llvm_version=22)[0][4] for s in range(60)}
    assert versions == {1}, versions
    anyv = {ok.generate("offload-binary", seed=s)[0][4] for s in range(60)}
    assert anyv > {1}, anyv
    # LLVM 16 has no compressed bundles: refused, not made.
    with pytest.raises(ok.OffloadKitError):
        ok.generate("ccob", seed=0, llvm_version=16)


KPACK = ROOT / "tests" / "data" / "kpack"


@pytest.mark.parametrize("name", ["split-test_lib_gfx906.kpack", "pack_tree-compressed-test-gfx9.kpack"])
def test_kpack_archives_get_the_clis_answers(name):
    # inspect_file and check of a ROCm kpack archive: the CLI's JSON (they
    # raised BIN-1, "no offload container"), from the library's one report.
    f = KPACK / name
    want = json.loads(cli("inspect", "--json", f).stdout)["files"][0]
    assert ok.inspect_file(f) == {"kpack_archive": want["kpack_archive"]}
    gpus = ["gfx906", "gfx90a:xnack+", "gfx1100"]
    want = json.loads(cli("check", "--json", *[a for g in gpus for a in ("--gpu", g)], f, check=False).stdout)
    v = ok.check(f, gpu=gpus)
    assert v == want["files"][0]["gpus"]
    assert v[2]["runs"] is False and v[0]["runs"] is True
    assert ok.validate(f) == []
    # open lists its code objects as `list --json` does; read decodes one
    # as `extract --all` writes it.
    c = ok.open(f)
    want = json.loads(cli("list", "--json", f).stdout)["entries"]
    assert c.kind == "kpack" and len(c) > 0
    assert [(e.id, e.offset, e.size, e.arch) for e in c] == [(e["id"], e["offset"], e["size"], e["kpack"]["arch"]) for e in want]
    out = pathlib.Path(tempfile.mkdtemp())
    cli("extract", "--all", "--dir", out, f)
    for e in c:
        assert c.read(e) == (out / f"{e.id.replace('/', '_')}.{e.arch}.hsaco").read_bytes()


def test_split_hosts_are_followed():
    # A split host's code objects are in the archives it names: check
    # and inspect_file follow its search paths with the library's lookup,
    # as the CLI does, and give the CLI's answers (check once said it
    # runs, with no bundles); bytes cannot be followed (no directory to
    # search from).
    host = KPACK / "split-host-libk.so"
    archive = KPACK / "split-test_lib_gfx906.kpack"
    gpus = ["gfx906", "gfx90a:xnack+", "gfx1100"]
    flags = [a for g in gpus for a in ("--gpu", g)]
    # The archive named (--kpack-path): it holds gfx906 only.
    want = json.loads(cli("check", "--json", *flags, "--kpack-path", archive, host, check=False).stdout)
    got = ok.check(host, gpu=gpus, kpack_path=str(archive))
    assert got == want["files"][0]["kpack"]
    assert got[0]["runs"] and not got[2]["runs"], got
    # The host's own search paths: its archive is not where they point here.
    want = json.loads(cli("check", "--json", *flags, host, check=False).stdout)
    got = ok.check(host, gpu=gpus)
    assert got == want["files"][0]["kpack"]
    assert {v["error"] for v in got} == {"ARCHIVE_NOT_FOUND"}, got
    with pytest.raises(ok.OffloadKitError, match="pass its path"):
        ok.check(host.read_bytes(), gpu="gfx906")
    # inspect_file: the CLI's report and what the archives hold for it.
    want = json.loads(cli("inspect", "--json", host, env_extra={"ROCM_KPACK_PATH": str(archive)}).stdout)
    want = want["files"][0]
    got = ok.inspect_file(host, kpack_path=str(archive))
    assert got == {"report": want["report"], "kpack_host": want["kpack_host"]}
    assert [c["arch"] for c in got["kpack_host"]["code_objects"]] == ["gfx906"], got
    with pytest.raises(ok.OffloadKitError, match="pass its path"):
        ok.inspect_file(host.read_bytes())
    # open: the host's own entries (none), then what the archives file
    # under its keys, as `list --json` lists them; read decodes each as
    # `extract --all` writes it.
    both = f"{archive}:{KPACK / 'split-test_lib_gfx90a.kpack'}"
    c = ok.open(host, kpack_path=both)
    want = json.loads(cli("list", "--json", host, env_extra={"ROCM_KPACK_PATH": both}).stdout)["entries"]
    assert [(e.id, e.offset, e.size, e.arch, e.archive) for e in c] == [
        (e["id"], e["offset"], e["size"], e["kpack"]["arch"], e["kpack"]["archive"]) for e in want
    ]
    assert [e.arch for e in c] == ["gfx906", "gfx90a"], list(c)
    out = pathlib.Path(tempfile.mkdtemp())
    cli("extract", "--all", "--dir", out, host, env_extra={"ROCM_KPACK_PATH": both})
    for e in c:
        assert c.read(e) == (out / f"{e.id.replace('/', '_')}.{e.arch}.hsaco").read_bytes()
    with pytest.raises(ok.OffloadKitError, match="pass an Entry"):
        c.read(c[0].id)
    assert len(ok.open(host)) == 0  # its search paths lead nowhere here, as for check
    assert len(ok.open(host.read_bytes())) == 0  # bytes: its own entries (none), as C lists them


def test_kpack_splits_and_joins_as_the_cli_does(tmp_path, art):
    # split_kpack and join_kpack are the library's kpack_split, as
    # `convert --to kpack` and `--to bundle` call it: the same files, byte
    # for byte, for a HIP shared object (archives and a rewritten host), a
    # clang object (archives only), zstd storage; and back.
    for src, args in [(KPACK / "libk.so", []), (art / "k.o", ["--level", "5", "--prefix", "p"])]:
        out = tmp_path / f"split-{src.name}"
        cli("convert", "--to", "kpack", *args, "-o", out, src)
        want = {f.name: f.read_bytes() for f in out.iterdir()}
        level = 5 if args else None
        got = ok.split_kpack(src, level=level, prefix="p" if args else None)
        assert got == want, (sorted(got), sorted(want))
        assert len(want) == (3 if src.name == "libk.so" else 2), sorted(want)
        # Bytes: the name is given (else a.out, as the CLI's stdin).
        assert ok.split_kpack(src.read_bytes(), name=src.name, level=level, prefix="p" if args else None) == got
        for name in (n for n in want if n.endswith(".kpack")):
            joined = tmp_path / f"{name}.bundle"
            cli("convert", "--to", "bundle", "-o", joined, out / name)
            assert ok.join_kpack(out / name) == joined.read_bytes()
        hosts = [n for n in want if not n.endswith(".kpack")]
        for name in hosts:
            whole = tmp_path / f"{name}.whole"
            cli("convert", "--to", "bundle", "-o", whole, out / name)
            assert ok.join_kpack(out / name) == whole.read_bytes()
            with pytest.raises(ok.OffloadKitError, match="pass its path"):
                ok.join_kpack((out / name).read_bytes())
    with pytest.raises(ok.OffloadKitError, match="level 23"):
        ok.split_kpack(KPACK / "libk.so", level=23)
    with pytest.raises(ok.OffloadKitError, match="no AMDGPU code object"):
        ok.split_kpack(ok.bundle([("host-x86_64-unknown-linux-gnu", b"h")], type="bc"))


RDC_HOST = "host-x86_64-pc-linux-gnu-"
HIP906, HIP90A = "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"


@pytest.fixture(scope="module")
def unbundled(art, tmp_path_factory):
    """Inputs to unbundle: a -fgpu-rdc object (bundle sections), a
    compressed bundle, a text bundle."""
    d = tmp_path_factory.mktemp("unbundle")
    hip = [str(LLVM22 / "clang"), "-x", "hip", "-nogpulib", "-nogpuinc", "--offload-arch=gfx906"]
    subprocess.run([*hip, "--offload-arch=gfx90a:xnack+", "-fgpu-rdc", "-c", art / "k.hip", "-o", d / "krdc.o"],
                   check=True, capture_output=True)
    payloads = [(RDC_HOST, b""), (HIP906, b"\x7fELF" + bytes(range(256)) * 40)]
    (d / "c.bundle").write_bytes(ok.bundle(payloads, type="o", align=4096, compress=True))
    shutil.copy(art / "k.hipi", d / "k.hipi")
    return d


@pytest.mark.parametrize(
    "name,typ,targets,extra",
    [
        ("krdc.o", "o", [RDC_HOST, HIP906, HIP90A], []),
        ("c.bundle", "o", [HIP906, RDC_HOST], []),
        ("k.hipi", "hipi", [HIP906, RDC_HOST], []),
        ("krdc.o", "o", ["hip-amdgcn-amd-amdhsa--gfx1100", RDC_HOST], ["-allow-missing-bundles"]),
    ],
)
def test_unbundle_is_byte_identical_to_llvm_22(unbundled, tmp_path, name, typ, targets, extra):
    # unbundle() is the library's unbundle_in_memory: what LLVM 22's own
    # clang-offload-bundler -unbundle writes, output for output (the host
    # of a fat object stripped of its bundle sections as llvm-objcopy does,
    # a compressed input decompressed, a missing target empty).
    src = unbundled / name
    outs = [tmp_path / f"out{i}" for i in range(len(targets))]
    args = [f"-type={typ}", f"-targets={','.join(targets)}", f"-input={src}", "-unbundle", *extra]
    args += [f"-output={o}" for o in outs]
    env = {**os.environ, "PATH": f"{LLVM22}:{os.environ['PATH']}"}
    subprocess.run([str(LLVM22 / "clang-offload-bundler"), *args], check=True, env=env, capture_output=True)
    got = ok.unbundle(src, targets, type=typ, allow_missing=bool(extra))
    assert got == [o.read_bytes() for o in outs]
    assert ok.unbundle(src.read_bytes(), targets, type=typ, allow_missing=bool(extra)) == got
    assert any(len(g) > 100 for g in got)


def test_main_is_24_for_the_writers_only(art):
    # bundle, unbundle and generate take LLVM main as 24 (24.0.0git), as
    # the C ABI does; open and validate, as `list --llvm-version`, do not.
    data = ok.bundle([(RDC_HOST, b"h"), (HIP906, b"d")], type="bc", llvm_version=24)
    assert ok.unbundle(data, [HIP906], type="bc", llvm_version=24) == [b"d"]
    assert ok.generate("binary", seed=1, llvm_version=24)[0]
    for f in (ok.open, ok.validate):
        with pytest.raises(ok.OffloadKitError, match="llvm_version 24"):
            f(data, llvm_version=24)
    with pytest.raises(ok.OffloadKitError, match="or 24 for LLVM main"):
        ok.bundle([(RDC_HOST, b"h")], type="bc", llvm_version=25)


def test_unbundle_fails_as_the_release_fails(art):
    # A target the bundle lacks: LLVM 22's message, no outputs.
    with pytest.raises(ok.OffloadKitError) as e:
        ok.unbundle(art / "k.hipi", ["hip-amdgcn-amd-amdhsa--gfx1100", RDC_HOST], type="hipi")
    assert "gfx1100" in e.value.llvm_message, e.value.llvm_message
    with pytest.raises(ok.OffloadKitError, match="archives"):
        ok.unbundle(art / "lib.a", ["hipv4-amdgcn-amd-amdhsa--gfx906"], type="a")
    # The outputs are copies: together within max_memory (at least 1 MiB).
    big = ok.bundle([(RDC_HOST, b""), (HIP906, bytes(3 << 20))], type="o")
    assert len(ok.unbundle(big, [HIP906], max_memory=4 << 20)[0]) == 3 << 20
    with pytest.raises(ok.OffloadKitError, match="CLI-6"):
        ok.unbundle(big, [HIP906], max_memory=1)


@pytest.mark.parametrize("release", [16, 19, 23, 24])
@pytest.mark.parametrize("name", ["krdc.o", "c.bundle"])
def test_unbundle_of_each_release_is_the_drop_ins(unbundled, tmp_path, release, name):
    # Releases without a binary here (23, main as 24) and older ones: the
    # drop-in's outputs, or its failure (16 reads no compressed bundle).
    src, targets = unbundled / name, [HIP906, RDC_HOST]
    outs = [tmp_path / f"out{i}" for i in range(len(targets))]
    version = "main" if release == 24 else release
    args = ["bundler", f"--llvm-version={version}", "-type=o", f"-targets={','.join(targets)}", f"-input={src}", "-unbundle"]
    r = cli(*args, *[f"-output={o}" for o in outs], check=False)
    if r.returncode != 0:
        with pytest.raises(ok.OffloadKitError):
            ok.unbundle(src, targets, llvm_version=release)
        return
    assert ok.unbundle(src, targets, llvm_version=release) == [o.read_bytes() for o in outs]

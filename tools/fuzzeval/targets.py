"""The targets of tools/fuzz-eval and how each is built.

planted: fuzz/harness/planted.c, a loader written here with planted bugs;
its coverage is libFuzzer's own edge count (the whole target is
instrumented).

llvm22-*: LLVM 22's own readers as Debian ships them. The reader's object
file (OffloadBinary.cpp.o, ...) is taken out of the static library that
llvm-22-dev or libclang-22-dev installs and linked into
fuzz/harness/llvm22.cpp; the rest comes from libLLVM-22 / libclang-cpp.
Nothing of LLVM is compiled here, so the reader is not instrumented: its
coverage is measured by replaying the corpus on a second build (no ASan)
under valgrind (callgrind, one instruction per address), against the
number of instructions in the reader's object file.

A loader of your own (--harness FILE.json): a harness file that defines
LLVMFuzzerTestOneInput around the loader, the loader's sources compiled
with it, and the sources whose coverage is the measure. Its coverage is
measured as the fuzzing field measures it: the corpus replayed on a
separate build (-fprofile-instr-generate -fcoverage-mapping, no ASan) at
evenly spaced points of the trial, and llvm-cov's count of the measured
files' regions covered, against their total.
"""
import hashlib
import json
import os
import re
import shlex
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLANG = os.environ.get("CLANG", "/usr/lib/llvm-22/bin/clang")
LLVM22 = "/usr/lib/llvm-22"
NATIVE_LIBS = os.environ.get(
    "OFFLOADKIT_NATIVE_LIBS", "-lzstd -lz -lpthread -ldl -lm -lrt -lgcc_s"
).split()
ARMS = {
    "libfuzzer": [],
    "byteflip": ["-DBYTEFLIP_MUTATOR"],
    "offloadkit": ["-DOFFLOADKIT_MUTATOR"],
    "mix": ["-DMIX_MUTATOR"],
    "boot": ["-DBOOT_MUTATOR"],
    # Ablations of the default arm: one mutation family left out.
    "noimage": ["-DNOIMAGE_MUTATOR"],
    "bytesonly": ["-DBYTESONLY_MUTATOR"],
}
# The arms that link offload-kit's mutator.
KIT_ARMS = ("offloadkit", "mix", "boot", "noimage", "bytesonly")

PLANTED_CANARIES = {
    "C1": "bundle entry ID bounds in 32 bits",
    "C2": "ELF p_offset + p_filesz wraps",
    "C3": "offload binary string count x 16 wraps",
    "C4": "IMG_Object image range unchecked",
}
BINARY_CANARIES = {
    "OB7": "a string table past the binary's end (OB-7)",
    "OB8": "a key or value offset past the binary's end (OB-8)",
    "OB9": "an image past the binary's end (OB-9)",
}
BUNDLE_CANARIES = {
    "W": "a bundle entry's offset + size wraps 2^64 (BIN-5, llvm#222361's class)",
    "V": "a CCOB header of a version 22 does not know (CCOB-2, llvm#200140)",
}

TARGETS = {
    "planted": {"source": "fuzz/harness/planted.c", "canaries": PLANTED_CANARIES},
    "llvm22-offload-binary": {
        "source": "fuzz/harness/llvm22.cpp", "define": "READER_OFFLOAD_BINARY",
        "member": ("libLLVMObject.a", "OffloadBinary.cpp.o", "llvm-22-dev"),
        "libs": ["-lLLVM-22"], "canaries": BINARY_CANARIES,
        "file": "llvm/lib/Object/OffloadBinary.cpp"},
    "llvm22-offload-bundle": {
        "source": "fuzz/harness/llvm22.cpp", "define": "READER_OFFLOAD_BUNDLE",
        "member": ("libLLVMObject.a", "OffloadBundle.cpp.o", "llvm-22-dev"),
        "libs": ["-lLLVM-22"], "canaries": BUNDLE_CANARIES,
        "file": "llvm/lib/Object/OffloadBundle.cpp"},
    "llvm22-bundler": {
        "source": "fuzz/harness/llvm22.cpp", "define": "READER_BUNDLER",
        "member": ("libclangDriver.a", "OffloadBundler.cpp.o", "libclang-22-dev"),
        "libs": ["-l:libclang-cpp.so.22.1", "-lLLVM-22"], "canaries": BUNDLE_CANARIES,
        "file": "clang/lib/Driver/OffloadBundler.cpp"},
}


HARNESS_KEYS = {"name", "source", "flags", "measure", "canaries", "seeds", "fork"}


class Missing(Exception):
    """A component the target needs is not installed."""


def load_harness(path):
    """Register the target that the harness description PATH (JSON) names:
      {"name": "my-loader",                 target name (letters, digits, -_.)
       "source": "harness.c",               defines LLVMFuzzerTestOneInput
       "flags": ["-I", "src", "src/fat_binary.c", "-lzstd"],
                                            sources compiled with it, -I/-D/-l
       "measure": ["src/fat_binary.c"],     sources whose regions are counted
                                            (default: every source but the harness)
       "canaries": {"K1": "what it is"},    optional; logged through $FUZZ_EVAL_CANARIES
       "seeds": ["seeds/*"],                optional; default: the real seeds here
       "fork": true}                        optional; fork mode, on after a crash
    Relative paths are taken from the description's directory. The mutator
    arms are added with -include arms.h: the harness defines no mutator."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        spec = json.loads(raw)
    except (OSError, ValueError) as e:
        raise Missing(f"harness description {path}: {e}")
    if not isinstance(spec, dict) or not {"name", "source"} <= set(spec) or set(spec) - HARNESS_KEYS:
        raise Missing(f"harness description {path}: needs 'name' and 'source'; takes only "
                      + ", ".join(sorted(HARNESS_KEYS)))
    name = spec["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise Missing(f"harness description {path}: name {name!r} is not letters, digits, '-', '_', '.'")
    if name in TARGETS:
        raise Missing(f"harness description {path}: target {name} already exists")
    base = os.path.dirname(os.path.abspath(path))

    def here(p):
        return os.path.realpath(os.path.join(base, os.path.expanduser(p)))

    flags = spec.get("flags", [])
    if isinstance(flags, str):
        flags = shlex.split(flags)
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise Missing(f"harness description {path}: flags is a list of strings")
    resolved, sources, take_path = [], [], False
    for f in flags:
        if take_path:
            resolved[-1] += here(f)
            take_path = False
        elif f in ("-I", "-L", "-isystem"):
            resolved.append(f)
            take_path = True
        elif re.fullmatch(r"-[IL].+", f):
            resolved.append(f[:2] + here(f[2:]))
        elif re.search(r"\.(?:c|cc|cpp|cxx|o|a)$", f) and not f.startswith("-"):
            resolved.append(here(f))
            if not f.endswith((".o", ".a")):
                sources.append(here(f))
        else:
            resolved.append(f)
    source = here(spec["source"])
    if not os.path.exists(source):
        raise Missing(f"harness description {path}: {source} not found")
    for s in sources:
        if not os.path.exists(s):
            raise Missing(f"harness description {path}: {s} not found")
    measure = [here(m) for m in spec.get("measure", sources or [spec["source"]])]
    seeds = spec.get("seeds")
    TARGETS[name] = {
        "source": source, "flags": resolved, "sources": sources, "measure": measure,
        "canaries": dict(spec.get("canaries", {})), "fork": bool(spec.get("fork", True)),
        "seeds": [os.path.join(base, g) for g in seeds] if seeds else None,
        "file": ", ".join(os.path.basename(m) for m in measure),
        # The description's own bytes name its builds and trials: a changed
        # flag or source list builds again and runs its trials again.
        "digest": hashlib.sha1(raw).hexdigest()[:10]}
    return name


def is_binary_only(target):
    return "member" in TARGETS[target]


def is_measured_source(target):
    """A target whose coverage is replayed on an llvm-cov build."""
    return "measure" in TARGETS[target]


def runs_in_fork_mode(target):
    return is_binary_only(target) or TARGETS[target].get("fork", False)


def member_object(out, target):
    """Debian's compiled object of the reader, taken out of its static
    library into OUT/objects (once)."""
    lib, member, package = TARGETS[target]["member"]
    archive = os.path.join(LLVM22, "lib", lib)
    if not os.path.exists(archive):
        raise Missing(f"{archive} not found: install {package} (tools/setup)")
    header = {"llvm-22-dev": "llvm/Object/OffloadBinary.h",
              "libclang-22-dev": "clang/Driver/OffloadBundler.h"}[package]
    if not os.path.exists(os.path.join(LLVM22, "include", header)):
        raise Missing(f"{LLVM22}/include/{header} not found: install {package} (tools/setup)")
    d = os.path.join(out, "objects")
    obj = os.path.join(d, member)
    if not (os.path.exists(obj) and os.path.getmtime(obj) >= os.path.getmtime(archive)):
        os.makedirs(d, exist_ok=True)
        r = subprocess.run(["ar", "x", archive, member], cwd=d, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(obj):
            raise Missing(f"{member} is not in {archive}: {r.stderr.strip()}")
    return obj


def up_to_date(exe, deps, extra, arm, coverage):
    """Whether EXE is newer than DEPS; adds offload-kit's library to both
    lists for the arms that call it (not to a coverage build)."""
    if arm in KIT_ARMS and not coverage:
        lib = os.path.join(ROOT, "target/release/liboffloadkit.a")
        deps.append(lib)
        extra += [lib, *NATIVE_LIBS]
    if os.path.exists(exe) and all(os.path.getmtime(exe) > os.path.getmtime(d) for d in deps):
        return True
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    return False


def build(out, target, arm, coverage=False):
    """The fuzzing build (ASan + libFuzzer) of TARGET with ARM's mutator,
    or with COVERAGE the replay build (libFuzzer's driver, no ASan): for a
    binary-only target run under valgrind, which cannot run ASan's shadow
    memory; for a harness of your own, built with llvm-cov's
    instrumentation."""
    t = TARGETS[target]
    if "flags" in t:
        return build_harness(out, target, arm, coverage)
    name = f"{target}-{'coverage' if coverage else arm}"
    exe = os.path.join(out, "bin", name)
    src = os.path.join(ROOT, t["source"])
    deps = [src, os.path.join(ROOT, "fuzz/harness/arms.h")]
    extra = []
    if "member" in t:
        obj = member_object(out, target)
        deps.append(obj)
        extra = [obj, "-L", os.path.join(LLVM22, "lib"), *t["libs"],
                 f"-Wl,-rpath,{os.path.join(LLVM22, 'lib')}"]
    if up_to_date(exe, deps, extra, arm, coverage):
        return exe
    sanitize = "-fsanitize=fuzzer" if coverage else "-fsanitize=fuzzer,address"
    cmd = [CLANG, sanitize, "-g", "-O1", "-Wall", "-Wextra",
           "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "fuzz/harness")]
    if src.endswith(".cpp"):
        cmd[0] = CLANG + "++"
        cmd += ["-std=c++17", "-fno-rtti", "-I", os.path.join(LLVM22, "include"), f"-D{t['define']}"]
    cmd += [*([] if coverage else ARMS[arm]), "-o", exe, src, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Missing(f"building {exe} failed:\n{r.stderr}")
    return exe


def build_harness(out, target, arm, coverage):
    t = TARGETS[target]
    name = f"{target}-{t['digest']}-{'coverage' if coverage else arm}"
    exe = os.path.join(out, "bin", name)
    arms_h = os.path.join(ROOT, "fuzz/harness/arms.h")
    deps = [t["source"], arms_h, *t["sources"]]
    extra = []
    if up_to_date(exe, deps, extra, arm, coverage):
        return exe
    sources = [t["source"], *t["sources"]]
    cxx = any(s.endswith((".cc", ".cpp", ".cxx")) for s in sources)
    instrument = (["-fsanitize=fuzzer", "-fprofile-instr-generate", "-fcoverage-mapping"] if coverage
                  else ["-fsanitize=fuzzer,address"])
    # The description's flags, split once: objects, archives and linker
    # flags for the link, the rest (-I, -D, ...) for every compile.
    def links(f):
        return f.endswith((".o", ".a")) or re.match(r"-(?:l|L|Wl,)", f)
    link = [f for f in t["flags"] if links(f)]
    compile_flags = [f for f in t["flags"] if f not in t["sources"] and not links(f)]
    # The mutator header goes into the harness only: the loader's own
    # sources are compiled as they are.
    arm_flags = ["-include", arms_h, "-I", os.path.join(ROOT, "include"), *([] if coverage else ARMS[arm])]
    objs = []
    for i, src in enumerate(sources):
        obj = f"{exe}.{i}.o"
        driver = CLANG + ("++" if src.endswith((".cc", ".cpp", ".cxx")) else "")
        c = [driver, *instrument, "-g", "-O1", "-w", "-c", "-o", obj,
             *(arm_flags if i == 0 else []), *compile_flags, src]
        r = subprocess.run(c, capture_output=True, text=True)
        if r.returncode != 0:
            for o in objs:
                os.unlink(o)
            raise Missing(f"building {target}: compiling {src} failed:\n{r.stderr[-4000:]}")
        objs.append(obj)
    cmd = [CLANG + ("++" if cxx else ""), *instrument, "-g", "-o", exe]
    r = subprocess.run([*cmd, *objs, *link, *extra], capture_output=True, text=True)
    for obj in objs:
        os.unlink(obj)
    if r.returncode != 0:
        raise Missing(f"building {exe} failed:\n{r.stderr[-4000:]}")
    return exe


def llvm_cov_regions(cov_exe, profdata, measure):
    """(covered, total) regions of the MEASURE sources in a coverage build,
    as llvm-cov counts them."""
    r = subprocess.run([os.path.join(LLVM22, "bin/llvm-cov"), "export", "-summary-only",
                        f"-instr-profile={profdata}", cov_exe, *measure],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Missing(f"llvm-cov export failed: {r.stderr.strip()[-2000:]}")
    covered = total = 0
    want = {os.path.realpath(m) for m in measure}
    for data in json.loads(r.stdout)["data"]:
        for f in data["files"]:
            if os.path.realpath(f["filename"]) in want:
                covered += f["summary"]["regions"]["covered"]
                total += f["summary"]["regions"]["count"]
    return covered, total


def measured_functions(out, target):
    """The reader's own functions (strong symbols of its object file, by
    mangled name) and the number of instructions in them: the denominator
    of measured coverage. Inline and template copies (weak symbols) are
    left out: the linker may keep another object's copy of those."""
    obj = member_object(out, target)
    nm = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True, check=True)
    strong = {line.split()[2] for line in nm.stdout.splitlines()
              if len(line.split()) == 3 and line.split()[1] in ("T", "t")}
    dis = subprocess.run([os.path.join(LLVM22, "bin/llvm-objdump"), "-d", "--no-show-raw-insn", obj],
                         capture_output=True, text=True, check=True)
    total, current = 0, None
    for line in dis.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m.group(1)
            continue
        if current in strong and re.match(r"^\s+[0-9a-f]+:\s+\S", line):
            total += 1
    return strong, total

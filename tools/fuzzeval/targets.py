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
"""
import os
import re
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
}

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


class Missing(Exception):
    """A component the target needs is not installed."""


def is_binary_only(target):
    return "member" in TARGETS[target]


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


def build(out, target, arm, coverage=False):
    """The fuzzing build (ASan + libFuzzer) of TARGET with ARM's mutator,
    or with COVERAGE the replay build of a binary-only target (libFuzzer's
    driver, no ASan: valgrind cannot run ASan's shadow memory)."""
    t = TARGETS[target]
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
    if arm in ("offloadkit", "mix") and not coverage:
        lib = os.path.join(ROOT, "target/release/liboffloadkit.a")
        deps.append(lib)
        extra += [lib, *NATIVE_LIBS]
    if os.path.exists(exe) and all(os.path.getmtime(exe) > os.path.getmtime(d) for d in deps):
        return exe
    os.makedirs(os.path.dirname(exe), exist_ok=True)
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

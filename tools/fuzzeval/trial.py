"""One trial of tools/fuzz-eval: run libFuzzer for a fixed wall time, then
measure what it did.

- Coverage: libFuzzer's own `cov:` as it prints it; for a binary-only
  target also the reader's instructions covered by the corpus over time,
  replayed on the coverage build under valgrind; for a loader of your own,
  llvm-cov's regions of its measured sources, replayed the same way.
- Bugs: every crash, out-of-memory and timeout input is run again on the
  fuzzing build and named by its stack (the sanitizer's kind and the top
  three frames outside the sanitizer, libFuzzer and libc): one name, one
  unique bug, with its time to first hit. The first input of each bug is
  kept under OUT/bugs/<target>/.
- Canaries: the harness logs the first input that reaches and that would
  trigger each known bug (Magma-style).

A binary-only target or a loader of your own crashes often, so it runs in
libFuzzer's fork mode and goes on after a crash; the planted target runs in
one process. A loader of your own is measured by llvm-cov: its corpus is
replayed at the same points on its coverage build, and the regions of the
files it names are counted.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import time

from . import targets as tg

STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)")
FORK_STATUS = re.compile(r"^#(\d+): cov: (\d+) ft: (\d+) corp: \d+ exec/s: \d+ oom/timeout/crash: "
                         r"(\d+)/(\d+)/(\d+) time: (\d+)s")
CANARY = re.compile(r"^fuzz-eval: canary (\w+) (reached|triggered) (?:exec \d+|at ([0-9.]+))")
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.+)$")
SUMMARY = re.compile(r"^SUMMARY: (?:\w+Sanitizer|libFuzzer): ([\w-]+)")
RUNTIME = re.compile(r"^(?:__asan|__interceptor|___interceptor|__sanitizer|__lsan|__ubsan|fuzzer::|"
                     r"operator new|operator delete|__libc|__GI_|__cxa|__pthread|std::__throw|"
                     r"llvm::report_bad_alloc_error|llvm::safe_)"
                     r"|^(?:malloc|calloc|realloc|free|abort|raise|_*(?:mem|str)\w*)$")
ARTIFACTS = ("crash-*", "oom-*", "timeout-*", "leak-*", "slow-unit-*")
MAX_TIMEOUT_TRIAGE = 3
# Each artifact is run again and symbolized (about a second): a loader that
# fails on every tenth input leaves hundreds per trial. Past this many, the
# first half are triaged in order and the rest sampled evenly over the
# trial; the trial records how many were triaged.
MAX_TRIAGE = 40


def triage_sample(artifacts):
    """The artifacts to name, oldest first: all, or MAX_TRIAGE of them."""
    if len(artifacts) <= MAX_TRIAGE:
        return artifacts
    head, rest = artifacts[:MAX_TRIAGE // 2], artifacts[MAX_TRIAGE // 2:]
    k = MAX_TRIAGE - len(head)
    return head + [rest[i * len(rest) // k] for i in range(k)]


def seed_files(kind, target=None):
    if kind == "minimal":
        return None
    files = []
    own = tg.TARGETS[target].get("seeds") if target else None
    if own:
        for pat in own:
            files += sorted(p for p in glob.glob(pat) if os.path.isfile(p))
        if not files:
            raise tg.Missing(f"no seeds for {target} match {', '.join(own)}")
        return files
    for pat in ("fuzz/harness/seeds/*.bundle", "fuzz/harness/seeds/*.fatbin",
                "fuzz/harness/seeds-omptarget/*.offbin"):
        files += sorted(glob.glob(os.path.join(tg.ROOT, pat)))
    if not files:
        raise tg.Missing("no seeds under fuzz/harness/seeds*")
    return files


def frame_name(text):
    """A frame's function, without what follows it: (BuildId: ...),
    (module+0xoffset), file:line, or the object file."""
    text = re.sub(r"\s+\(BuildId: [0-9a-f]+\)$", "", text)
    text = re.sub(r"\s+\(\S+\+0x[0-9a-f]+\)$", "", text)
    head, _, tail = text.rpartition(" ")
    if head and re.search(r"^/|\.o$|\.(?:c|cc|cpp|h|S)(?::\d+)*$", tail):
        return head
    return text


def stack_key(report):
    """(name, kind, frames) of a sanitizer or libFuzzer report: the kind of
    error and the top three frames outside the runtime."""
    kind, frames, state = None, [], "before"
    for line in report.splitlines():
        m = FRAME.match(line)
        if m and state != "after":
            state = "in"
            f = frame_name(m.group(1).strip())
            if not RUNTIME.match(f) and len(frames) < 3:
                frames.append(f)
            continue
        if state == "in":
            state = "after"  # only the first stack: the error's, not the allocation's
        m = SUMMARY.match(line)
        if m and kind is None:
            kind = m.group(1)
    if kind is None:
        return None
    digest = hashlib.sha1((kind + "\n" + "\n".join(frames)).encode()).hexdigest()[:12]
    return digest, kind, frames


def triage(exe, artifact):
    """The stack key of one artifact, run again on the fuzzing build."""
    env = dict(os.environ, ASAN_OPTIONS="symbolize=1:detect_leaks=0:allocator_may_return_null=0",
               ASAN_SYMBOLIZER_PATH=os.path.join(tg.LLVM22, "bin/llvm-symbolizer"))
    try:
        r = subprocess.run([exe, "-timeout=10", "-rss_limit_mb=2048", artifact], capture_output=True,
                           text=True, errors="replace", env=env, timeout=60)
        out = r.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    key = stack_key(out)
    if key is None:
        # Nothing to name it by: it did not fail again (flaky, or state from earlier inputs).
        return ("unreproduced", "unreproduced", []), out
    return key, out


def callgrind_covered(cov_exe, files, strong):
    """Addresses of the reader's own instructions that running FILES on the
    coverage build executes."""
    covered = set()
    if not files:
        return covered
    out = cov_exe + f".callgrind.{os.getpid()}.{time.monotonic_ns()}"
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--dump-line=no",
                    "--compress-pos=no", "--compress-strings=no", "--demangle=no",
                    f"--callgrind-out-file={out}", cov_exe, "-runs=1", "-timeout=30", *files],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    try:
        with open(out, errors="replace") as f:
            covered = parse_callgrind(f, os.path.realpath(cov_exe), strong)
    finally:
        if os.path.exists(out):
            os.unlink(out)
    return covered


def llvm_cov_replay(cov_exe, files, work, mark, measure):
    """Regions of the MEASURE sources covered by everything replayed so far
    (FILES added now) on the llvm-cov build: every replay's raw profile is
    kept in WORK/profiles and merged each time. A crash of the uninstrumented
    replay loses its process's profile, so a batch that fails is replayed
    one file per process."""
    prof = os.path.join(work, "profiles")
    os.makedirs(prof, exist_ok=True)
    env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(prof, f"m{mark}-%p.profraw"))

    def replay(batch):
        try:
            return subprocess.run([cov_exe, "-runs=1", "-timeout=30", *batch], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env, timeout=600).returncode
        except subprocess.TimeoutExpired:
            return -1

    for i in range(0, len(files), 500):
        batch = files[i:i + 500]
        if replay(batch) != 0 and len(batch) > 1:
            for f in batch:
                replay([f])
    raws = glob.glob(os.path.join(prof, "*.profraw"))
    if not raws:
        return 0, None
    merged = os.path.join(work, "merged.profdata")
    subprocess.run([os.path.join(tg.LLVM22, "bin/llvm-profdata"), "merge", "-sparse", "-o", merged, *raws],
                   check=True, capture_output=True)
    return tg.llvm_cov_regions(cov_exe, merged, measure)


def parse_callgrind(lines, exe, strong):
    covered, ob, fn = set(), None, None
    for line in lines:
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line.startswith("0x") and ob == exe and fn in strong:
            covered.add(int(line.split()[0], 16))
    return covered


def run_trial(out, exe, target, arm, seeds, trial, seconds, marks=5, cov_exe=None, strong=None, total=None):
    path = os.path.join(out, "trials", target, seeds, arm, f"{trial}.json")
    digest = tg.TARGETS[target].get("digest")
    if os.path.exists(path):
        with open(path) as f:
            done = json.load(f)
        # A trial of another description of the same name is run again.
        if done.get("digest") == digest:
            return done
    binary_only = tg.is_binary_only(target)
    source_measured = tg.is_measured_source(target)
    work = os.path.join(out, "work", target, seeds, arm, str(trial))
    shutil.rmtree(work, ignore_errors=True)
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus)
    files = seed_files(seeds, target)
    if files is None:
        with open(os.path.join(corpus, "minimal"), "wb") as f:
            f.write(b"\0")
    else:
        for s in files:
            shutil.copy(s, corpus)
    canary_log = os.path.join(work, "canaries.log")
    cmd = [exe, f"-seed={trial + 1}", f"-max_total_time={seconds}", "-print_final_stats=1",
           "-timeout=10", "-rss_limit_mb=2048", "-max_len=65536", "-reload=0",
           f"-artifact_prefix={work}/", corpus]
    if tg.runs_in_fork_mode(target):
        cmd[1:1] = ["-fork=1", "-ignore_crashes=1", "-ignore_ooms=1", "-ignore_timeouts=1"]
    env = dict(os.environ, FUZZ_EVAL_CANARIES=canary_log)
    start_wall = time.time()
    start = time.monotonic()
    cov, canaries, execs, failures = [], {}, 0, [0, 0, 0]

    def canary(c, what, t):
        if t is not None and (what not in canaries.get(c, {}) or t < canaries[c][what]):
            canaries.setdefault(c, {})[what] = round(t, 2)

    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            errors="replace", env=env)
    for line in proc.stderr:
        t = time.monotonic() - start
        m = FORK_STATUS.match(line)
        if m:
            failures = [int(m.group(i)) for i in (4, 5, 6)]
        m = m or STATUS.match(line)
        if m:
            execs = int(m.group(1))
            cov.append([round(t, 2), int(m.group(2)), int(m.group(3))])
            continue
        m = CANARY.match(line)
        if m:
            canary(m.group(1), m.group(2), t)
            continue
        m = re.match(r"^stat::number_of_executed_units: (\d+)", line)
        if m:
            execs = int(m.group(1))
    proc.wait()
    wall = time.monotonic() - start
    if os.path.exists(canary_log):
        with open(canary_log, errors="replace") as f:
            for line in f:
                m = CANARY.match(line)
                if m and m.group(3):
                    canary(m.group(1), m.group(2), float(m.group(3)) - start_wall)
    bugs = {}
    artifacts = sorted((p for pat in ARTIFACTS for p in glob.glob(os.path.join(work, pat))),
                       key=os.path.getmtime)
    timeouts = 0
    sample = triage_sample(artifacts)
    for a in sample:
        t = round(max(os.path.getmtime(a) - start_wall, 0.0), 2)
        if os.path.basename(a).startswith("timeout-"):
            timeouts += 1
            if timeouts > MAX_TIMEOUT_TRIAGE:
                continue
        (name, kind, frames), report = triage(exe, a)
        b = bugs.setdefault(name, {"kind": kind, "frames": frames, "first": t, "hits": 0})
        b["hits"] += 1
        keep = os.path.join(out, "bugs", target, name)
        if not os.path.exists(keep):
            os.makedirs(os.path.dirname(keep), exist_ok=True)
            shutil.copy(a, keep)
            with open(keep + ".txt", "w") as f:
                f.write(f"{kind}\n" + "\n".join(frames) + "\n\n" + report)
    measured = None
    if (binary_only or source_measured) and cov_exe:
        corpus_files = sorted(glob.glob(os.path.join(corpus, "*")), key=os.path.getmtime)
        covered, over_time, i = set(), [], 0
        times = [seconds * k / (marks - 1) for k in range(marks)]
        for k, mark in enumerate(times):
            batch = []
            while i < len(corpus_files) and os.path.getmtime(corpus_files[i]) - start_wall <= mark:
                batch.append(corpus_files[i])
                i += 1
            if mark == times[-1]:
                batch += corpus_files[i:]
            if binary_only:
                covered |= callgrind_covered(cov_exe, batch, strong)
                over_time.append([mark, len(covered)])
            else:
                regions, count = llvm_cov_replay(cov_exe, batch, work, k, tg.TARGETS[target]["measure"])
                total = count or total
                over_time.append([mark, regions])
        measured = {"total": total, "over_time": over_time,
                    "unit": "instructions" if binary_only else "regions"}
    result = {"target": target, "digest": digest, "arm": arm, "seeds": seeds, "trial": trial,
              "seconds": seconds, "wall": round(wall, 2), "execs": execs,
              "exit": proc.returncode, "crashed": bool(artifacts), "coverage": cov,
              "canaries": canaries, "bugs": bugs, "measured": measured,
              "oom_timeout_crash": failures, "artifacts": len(artifacts), "triaged": len(sample)}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f)
    shutil.rmtree(work, ignore_errors=True)
    return result


def self_test():
    """Stack names and callgrind parsing on fixed text."""
    report = "\n".join([
        "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000008",
        "    #0 0x55 in __strlen_evex string/strlen-evex.S:79",
        "    #1 0x56 in strlen (/x/h+0x1) (BuildId: 6b26c48a3e14)",
        "    #2 0x57 in llvm::object::OffloadBinary::create(llvm::MemoryBufferRef) OffloadBinary.cpp.o",
        "    #3 0x58 in (anonymous namespace)::extractOffloadFiles(llvm::MemoryBufferRef) OffloadBinary.cpp.o",
        "    #4 0x59 in LLVMFuzzerTestOneInput /r/fuzz/harness/llvm22.cpp:140:3",
        "    #5 0x5a in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) x.cpp:1:1",
        "",
        "SUMMARY: AddressSanitizer: SEGV string/strlen-evex.S:79 in __strlen_evex"])
    name, kind, frames = stack_key(report)
    assert kind == "SEGV", kind
    assert frames == ["llvm::object::OffloadBinary::create(llvm::MemoryBufferRef)",
                      "(anonymous namespace)::extractOffloadFiles(llvm::MemoryBufferRef)",
                      "LLVMFuzzerTestOneInput"], frames
    other = stack_key(report.replace("0x57", "0x99").replace("/x/h+0x1", "/y/g+0x2"))
    assert other[0] == name, "addresses and modules must not change a bug's name"
    assert stack_key("no report") is None
    assert frame_name("llvm::f(int) (/usr/lib/libLLVM.so.22.1+0x4e3bdb3) (BuildId: 11337e)") == "llvm::f(int)"
    assert triage_sample(list(range(10))) == list(range(10))
    s = triage_sample(list(range(1000)))
    assert len(s) == MAX_TRIAGE and s[:MAX_TRIAGE // 2] == list(range(MAX_TRIAGE // 2)) and s == sorted(set(s)), s
    cg = ["ob=/bin/h", "fn=_ZN4llvm6object13OffloadBinary6createE", "0x10 3", "calls=1 0x99",
          "0x14 7", "fn=_Z5otherv", "0x20 1", "ob=/lib/x.so", "fn=_ZN4llvm6object13OffloadBinary6createE", "0x30 1"]
    got = parse_callgrind(cg, "/bin/h", {"_ZN4llvm6object13OffloadBinary6createE"})
    assert got == {0x10, 0x14}, got
    print("fuzz-eval: stack names and callgrind parsing self-test passed")

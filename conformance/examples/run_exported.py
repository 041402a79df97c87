#!/usr/bin/env python3
"""Run an implementation of your own on an exported corpus: a worked
runner of the protocol (offload-kit conformance export DIR), standard
library only.

    offload-kit conformance export corpus-out
    python3 conformance/examples/run_exported.py corpus-out -- my-parser --json
    # each case runs: my-parser --json INPUT

Operations (--op; your command gets these arguments after its own):
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
                                     [--check-input-archive]
                                     write each target's payload as D/0,
                                     D/1, ... (in target order)
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
stderr (offload-kit's own "(at offset 0x51, rule BIN-5)"). A case the
implementation does not handle is declined with {"unsupported": WHY} on
stdout and exit status 3: "not claimed", never a pass.
conformance/examples/template_impl.py is a template implementation
(standard library only) that claims locate, list and unbundle of binary
and text bundles.
An implementation that reports no rules says so with --no-rules: its
failures on cases that expect one count as "rejected, rule unchecked",
never as a pass.

Every run has a time limit (--timeout, 10 s) and an output limit (4 MiB);
output that is not JSON, binary, too large or late is reported as what it
is, with the expected and the observed answer. Filters: --case GLOB (case
IDs), --chapter NAME (the case's directory: binary, kpack, ...), --rule
ID-OR-PREFIX (BIN, BIN-5), --op. With no command,
offload-kit itself stands in for `locate` (`offload-kit list INPUT
--json`). Exit status 1 when any case differs, crashes or times out.
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile

LIMIT = 4 << 20
RULE = re.compile(r"\brule ([A-Z]+-\d+)\b")


def run(argv, timeout):
    """(exit status or None when timed out, stdout, stderr, note)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            r = subprocess.run(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, timeout=timeout)
            code = r.returncode
        except subprocess.TimeoutExpired:
            code = None
        except OSError as e:
            return 127, b"", str(e).encode(), "cannot run"
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


def reported_rule(stdout, stderr):
    """The rule an implementation reports for a failure, and its offset."""
    try:
        e = json.loads(stdout)["error"]
        return e.get("rule"), e.get("offset")
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    m = RULE.search(stderr.decode("utf-8", errors="replace"))
    return (m.group(1), None) if m else (None, None)


def declined(code, out):
    """Whether the implementation declined the case (exit 3, "unsupported")."""
    if code != 3:
        return False
    try:
        return "unsupported" in json.loads(out)
    except (ValueError, TypeError):
        return False


def judge_common(case, code, out, err, note, no_rules):
    """(status, why) when the outcome decides alone (a time-out, a crash,
    a declined case, an expected failure, output the runner could not
    take); None when the answer is read."""
    want = case["expect"]
    if code is None:
        return "timed out", "no answer within the time limit"
    if code < 0 or code >= 128:
        return "crashed", f"exit status {code}"
    if declined(code, out):
        return "not claimed", ""
    if "fail" in want:
        rule = want["fail"]
        if code == 0:
            return "differs", f"expected failure {rule}, got success: {show(out)}"
        if no_rules:
            return "rejected, rule unchecked", f"expected {rule}"
        got, offset = reported_rule(out, err)
        if got is None:
            return "differs", f"expected {rule}, got a failure that names no rule: {show(err or out)}"
        if rule != "*" and got != rule:
            at = f" at offset {offset}" if offset is not None else ""
            return "differs", f"expected {rule}, got {got}{at}"
        return "pass", ""
    if code != 0:
        got, _ = reported_rule(out, err)
        return "differs", f"expected success, got failure {got or ''}: {show(err or out)}"
    return ("differs", note) if note else None


def judge_locate(case, code, out, err, note, no_rules):
    """(status, why) of one `locate` case."""
    want = case["expect"]
    decided = judge_common(case, code, out, err, note, no_rules)
    if decided:
        return decided
    try:
        doc = json.loads(out)
        got = doc["entries"] if isinstance(doc, dict) else doc
        key = lambda e: (str(e["id"]), int(e["offset"]), int(e["size"]))
        have = sorted(map(key, got))
    except (ValueError, TypeError, KeyError):
        return "differs", f"output is not the JSON the protocol asks for: {show(out)}"
    expected = sorted(map(key, want["locate"]))
    if have == expected:
        return "pass", ""
    missing = [e for e in expected if e not in have]
    extra = [e for e in have if e not in expected]
    return "differs", f"expected {expected}, got {have} (missing {missing}, unexpected {extra})"


def judge_list(case, code, out, err, note, no_rules):
    """(status, why) of one `list` case: the IDs, in order."""
    decided = judge_common(case, code, out, err, note, no_rules)
    if decided:
        return decided
    try:
        doc = json.loads(out)
        have = [str(i) for i in (doc["list"] if isinstance(doc, dict) else doc)]
    except (ValueError, TypeError, KeyError):
        return "differs", f"output is not a JSON array of IDs: {show(out)}"
    expected = case["expect"]["list"]
    if have == expected:
        return "pass", ""
    return "differs", f"expected {expected}, got {have}"


def fact_holds(fact, got, inputs):
    """Whether output bytes `got` (None: not written) are what `fact` says."""
    import base64
    import hashlib
    if fact.get("absent"):
        return got is None
    if got is None:
        return False
    if "utf8" in fact:
        return got == fact["utf8"].encode()
    if "hex" in fact:
        return got == bytes.fromhex(fact["hex"])
    if "base64" in fact:
        return got == base64.b64decode(fact["base64"])
    if "zeros" in fact:
        return got == bytes(fact["zeros"])
    if "input" in fact:
        return got == inputs(fact["input"])
    if "sha256" in fact:
        return hashlib.sha256(got).hexdigest() == fact["sha256"]
    if "size" in fact:
        return len(got) == fact["size"]
    return False  # an ELF fact: this runner does not read ELF files


def judge_unbundle(case, code, out, err, note, no_rules, outdir, inputs):
    """(status, why) of one `unbundle` case: each target's output."""
    want = case["expect"]
    written = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
    decided = judge_common(case, code, out, err, note, no_rules)
    if decided:
        if decided[0] == "pass" and want.get("no_outputs") and written:
            return "differs", f"failed as expected but left outputs {written} (CLI-5)"
        return decided
    facts = want.get("outputs", [])
    for n, fact in enumerate(facts):
        p = os.path.join(outdir, str(n))
        got = open(p, "rb").read(LIMIT) if os.path.isfile(p) else None
        if not fact_holds(fact, got, inputs):
            shown = "not written" if got is None else show(got, 60)
            return "differs", f"output {n}: expected {fact}, got {shown}"
    return "pass", ""


def judge_value(case, code, out, err, note, no_rules, key):
    """(status, why) of a case whose answer is one JSON value (`parse-id`:
    the written ID, `compatible`: true or false)."""
    decided = judge_common(case, code, out, err, note, no_rules)
    if decided:
        return decided
    try:
        have = json.loads(out)
    except ValueError:
        return "differs", f"output is not JSON: {show(out)}"
    expected = case["expect"][key]
    if have == expected:
        return "pass", ""
    return "differs", f"expected {json.dumps(expected)}, got {show(out)}"


def op_argv(case, op, path, outdir):
    """The arguments a command gets for `case` (see the module's help)."""
    args = case["args"]
    if op in ("locate", "kpack-locate"):
        return [path]
    if op == "parse-id":
        return ["parse-id", "--id", args["id"], "--targets", ",".join(args["targets"])]
    if op == "compatible":
        extra = ["--hip-openmp-compatible"] if args.get("hip_openmp_compatible") else []
        return ["compatible", "--entry", args["entry"], "--request", args["request"], *extra]
    argv = [op, "--type", args.get("type", "bc"), path]
    if op == "unbundle":
        # Every input the case passes (CLI-2 cases pass two), and an
        # explicit output count when the case gives one.
        argv += [os.path.join(os.path.dirname(os.path.dirname(path)), case["inputs"][n]["spec"] or "")
                 for n in args["inputs"][1:]]
        if "outputs" in args:
            argv += ["--outputs", str(args["outputs"])]
        argv += ["--output-dir", outdir]
        for t in args.get("targets", []):
            argv += ["--target", t]
        for key in ("allow_missing_bundles", "hip_openmp_compatible", "check_input_archive"):
            if args.get(key):
                argv.append("--" + key.replace("_", "-"))
    return argv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--op", default="locate",
                    choices=["locate", "kpack-locate", "list", "unbundle", "parse-id", "compatible"])
    ap.add_argument("--case", default="*", help="case IDs to run (glob)")
    ap.add_argument("--chapter", default="", help="only this chapter's cases (binary, kpack, ...)")
    ap.add_argument("--rule", default="", help="only cases about this rule (BIN-5) or prefix (BIN)")
    ap.add_argument("--no-rules", action="store_true", help="the implementation reports no rule IDs")
    ap.add_argument("--timeout", type=float, default=10.0)
    argv = sys.argv[1:]
    cmd = None
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    if cmd is None and a.op not in ("locate", "kpack-locate"):
        ap.error(f"--op {a.op}: give the implementation's command after --")
    counts = {"pass": 0, "differs": 0, "crashed": 0, "timed out": 0, "rejected, rule unchecked": 0,
              "not claimed": 0}
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
        variant = lambda n: os.path.join(a.dir, cid, case["inputs"][n]["spec"] or "")
        # parse-id and compatible take IDs, no file.
        path = variant(case["args"]["inputs"][0]) if case["args"].get("inputs") else None

        def inputs(n):
            with open(variant(n), "rb") as f:
                return f.read()
        with tempfile.TemporaryDirectory() as scratch:
            outdir = os.path.join(scratch, "out")
            run_argv = (cmd + op_argv(case, a.op, path, outdir)) if cmd else ["offload-kit", "list", path, "--json"]
            code, out, err, note = run(run_argv, a.timeout)
            if a.op == "unbundle":
                status, why = judge_unbundle(case, code, out, err, note, a.no_rules, outdir, inputs)
            elif a.op == "list":
                status, why = judge_list(case, code, out, err, note, a.no_rules)
            elif a.op in ("parse-id", "compatible"):
                key = "id" if a.op == "parse-id" else "compatible"
                status, why = judge_value(case, code, out, err, note, a.no_rules, key)
            else:
                status, why = judge_locate(case, code, out, err, note, a.no_rules)
        counts[status] += 1
        if status not in ("pass", "not claimed"):
            print(f"{status}: {cid}: {why}")
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["differs"] or counts["crashed"] or counts["timed out"] else 0


if __name__ == "__main__":
    sys.exit(main())

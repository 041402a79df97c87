#!/usr/bin/env python3
"""Run an implementation of your own on an exported corpus: a worked
runner of the protocol (offload-kit conformance export DIR), standard
library only.

    offload-kit conformance export corpus-out
    python3 conformance/examples/run_exported.py corpus-out -- my-parser --json
    # each case runs: my-parser --json INPUT

Operation `locate` (where each bundle entry lies). Your command gets the
case's input and must either
  - succeed (exit 0) and print one JSON array of {"id", "offset", "size"}
    (or an object with such an array under "entries"), or
  - fail (exit non-zero) and say which rule the input breaks: print
    {"error": {"rule": "BIN-5", "offset": 81}} on stdout, or a line holding
    "rule BIN-5" on stderr (offload-kit's own "(at offset 0x51, rule BIN-5)").
An implementation that reports no rules says so with --no-rules: its
failures on cases that expect one count as "rejected, rule unchecked",
never as a pass.

Every run has a time limit (--timeout, 10 s) and an output limit (4 MiB);
output that is not JSON, binary, too large or late is reported as what it
is, with the expected and the observed answer. Filters: --case GLOB (case
IDs), --rule ID-OR-PREFIX (BIN, BIN-5), --op (only `locate` has a worked
runner here). With no command, offload-kit itself stands in
(`offload-kit list INPUT --json`). Exit status 1 when any case differs,
crashes or times out.
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


def judge_locate(case, code, out, err, note, no_rules):
    """(status, why) of one `locate` case."""
    want = case["expect"]
    if code is None:
        return "timed out", "no answer within the time limit"
    if code < 0 or code >= 128:
        return "crashed", f"exit status {code}"
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
    if note:
        return "differs", note
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--op", default="locate", choices=["locate"])
    ap.add_argument("--case", default="*", help="case IDs to run (glob)")
    ap.add_argument("--rule", default="", help="only cases about this rule (BIN-5) or prefix (BIN)")
    ap.add_argument("--no-rules", action="store_true", help="the implementation reports no rule IDs")
    ap.add_argument("--timeout", type=float, default=10.0)
    argv = sys.argv[1:]
    cmd = None
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    counts = {"pass": 0, "differs": 0, "crashed": 0, "timed out": 0, "rejected, rule unchecked": 0}
    with open(os.path.join(a.dir, "index.json")) as f:
        index = json.load(f)
    for cid in index:
        if not fnmatch.fnmatchcase(cid, a.case):
            continue
        with open(os.path.join(a.dir, cid, "case.json")) as f:
            case = json.load(f)
        if case["op"] != a.op:
            continue
        if a.rule and not any(r == a.rule or r.startswith(a.rule + "-") for r in case.get("rules", [])):
            continue
        name = case["args"]["inputs"][0]
        path = os.path.join(a.dir, cid, case["inputs"][name]["spec"])
        run_argv = (cmd + [path]) if cmd else ["offload-kit", "list", path, "--json"]
        code, out, err, note = run(run_argv, a.timeout)
        status, why = judge_locate(case, code, out, err, note, a.no_rules)
        counts[status] += 1
        if status != "pass":
            print(f"{status}: {cid}: {why}")
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["differs"] or counts["crashed"] or counts["timed out"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Run an implementation of your own on an exported corpus: a worked
example of the protocol (offload-kit conformance export DIR).

It runs the `locate` cases: for each, your command gets the input file and
must print one JSON array of {"id", "offset", "size"}; the result is
compared, as a multiset, with the spec's expectation (or with "fail").

    offload-kit conformance export corpus-out
    python3 conformance/examples/run_exported.py corpus-out -- my-parser --json
    # the command is run as: my-parser --json INPUT

With no command, offload-kit itself stands in (`offload-kit list INPUT --json`).
"""
import json
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    root = args[0]
    cmd = args[2:] if len(args) > 2 and args[1] == "--" else None
    counts = {"pass": 0, "differs": 0, "crashed": 0}
    for cid in json.load(open(os.path.join(root, "index.json"))):
        case = json.load(open(os.path.join(root, cid, "case.json")))
        if case["op"] != "locate":
            continue
        name = case["args"]["inputs"][0]
        path = os.path.join(root, cid, case["inputs"][name]["spec"])
        argv = (cmd + [path]) if cmd else ["offload-kit", "list", path, "--json"]
        r = subprocess.run(argv, capture_output=True, text=True)
        want = case["expect"]
        if r.returncode < 0 or r.returncode >= 128:
            status = "crashed"
        elif "fail" in want:
            status = "pass" if r.returncode != 0 else "differs"
        elif r.returncode != 0:
            status = "differs"
        else:
            out = json.loads(r.stdout)
            got = out["entries"] if isinstance(out, dict) else out
            key = lambda e: (e["id"], e["offset"], e["size"])
            same = sorted(map(key, got)) == sorted(map(key, want["locate"]))
            status = "pass" if same else "differs"
        counts[status] += 1
        if status != "pass":
            print(f"{status}: {cid}")
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["differs"] or counts["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())

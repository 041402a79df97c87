#!/usr/bin/env python3
"""The export protocol's `parse-id` and `compatible` answered by an
existing clang-offload-bundler (LLVM's, or offload-kit's drop-in): a worked
example of wrapping a tool you already have, standard library only.

    BUNDLER=/usr/lib/llvm-22/bin/clang-offload-bundler \\
      python3 conformance/examples/run_exported.py DIR --op parse-id -- \\
      python3 conformance/examples/ids_by_bundler.py

BUNDLER is a command line (default: `offload-kit bundler`).
  parse-id --id ID --targets T,T...  bundles empty inputs for the targets and
                                     prints, as JSON, the ID written for ID
  compatible --entry E --request R [--hip-openmp-compatible]
                                     writes a bundle of one entry E and asks
                                     the bundler to unbundle R from it: true
                                     when it extracts the entry, false when it
                                     finds none ("Can't find bundles")
A refusal is passed on (exit 1, the bundler's message on stderr, which
names the rule when the bundler is offload-kit's).
"""
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def bundler(args, cwd):
    cmd = shlex.split(os.environ.get("BUNDLER", "offload-kit bundler"))
    return subprocess.run(cmd + args, cwd=cwd, capture_output=True)


def ids_of(bundle):
    """The entry IDs of a binary bundle, in order."""
    if not bundle.startswith(MAGIC):
        raise ValueError("not a binary bundle")
    (n,) = struct.unpack_from("<Q", bundle, 24)
    at, ids = 32, []
    for _ in range(n):
        _, _, length = struct.unpack_from("<QQQ", bundle, at)
        ids.append(bundle[at + 24:at + 24 + length].decode())
        at += 24 + length
    return ids


def bundle_of(entry, payload):
    """A binary bundle of one entry (spec/binary-bundle.md)."""
    header = len(MAGIC) + 8 + 24 + len(entry)
    return MAGIC + struct.pack("<QQQQ", 1, header, len(payload), len(entry)) + entry.encode() + payload


def fail(run):
    sys.stderr.buffer.write(run.stderr)
    return 1


def main(argv):
    op, opts = argv[0], dict(zip(argv[1::2], argv[2::2]))
    with tempfile.TemporaryDirectory() as d:
        if op == "parse-id":
            targets = opts["--targets"].split(",")
            for i in range(len(targets)):
                open(os.path.join(d, f"in{i}"), "wb").close()
            run = bundler(["-type=bc", "-targets=" + ",".join(targets),
                           *[f"-input=in{i}" for i in range(len(targets))], "-output=out"], d)
            if run.returncode != 0:
                return fail(run)
            written = ids_of(open(os.path.join(d, "out"), "rb").read())
            print(json.dumps(written[targets.index(opts["--id"])]))
            return 0
        if op == "compatible":
            payload = b"PAYLOAD"
            with open(os.path.join(d, "b"), "wb") as f:
                f.write(bundle_of(opts["--entry"], payload))
            extra = ["-hip-openmp-compatible"] if "--hip-openmp-compatible" in argv else []
            run = bundler(["-type=bc", "-targets=" + opts["--request"], "-input=b", "-output=o",
                           "-unbundle", *extra], d)
            if run.returncode == 0:
                got = open(os.path.join(d, "o"), "rb").read()
                print(json.dumps(got == payload))
                return 0
            if b"Can't find bundles" in run.stderr:
                print("false")
                return 0
            return fail(run)
    print(json.dumps({"unsupported": f"operation {op}"}))
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Every operation of the export protocol answered by existing tools: a
worked example of measuring a tool you already have, standard library
only, and the runner's own check (offload-kit passes what it claims).

    python3 conformance/examples/run_exported.py DIR --op bundle --variant llvm-22 -- \\
      python3 conformance/examples/by_offload_kit.py

Tools (each a command line):
  BUNDLER   clang-offload-bundler syntax (default `offload-kit bundler
            --llvm-version=22`; LLVM's own clang-offload-bundler works too):
            list, unbundle, bundle, and the bundle that compress compresses
  PACKAGER  clang-offload-packager syntax (default `offload-kit packager
            --llvm-version=22`; LLVM 16-22's clang-offload-packager, or
            llvm-offload-binary, works too): package, unpackage,
            objdump-offloading (`--objdump-offloading`, offload-kit's
            stand-in for `llvm-objdump --offloading`)
  OFFLOAD_KIT  offload-kit's native commands (default `offload-kit`), for
            what LLVM has no tool for: locate, kpack-locate, list of a
            binary bundle (header order), compress with --method,
            decompress, verify, extract-uri, lookup, kpack-lookup
parse-id and compatible go through ids_by_bundler.py (BUNDLER as above).
A tool's failure is passed on: its exit status and its message, which
names the rule when the tool is offload-kit.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = {"kpack-locate", "list", "unbundle", "bundle", "compress", "decompress", "verify", "package",
       "unpackage", "objdump-offloading", "extract-uri", "lookup", "kpack-lookup", "parse-id",
       "compatible"}


def tool(var, default):
    return shlex.split(os.environ.get(var, default))


BUNDLER = tool("BUNDLER", "offload-kit bundler --llvm-version=22")
PACKAGER = tool("PACKAGER", "offload-kit packager --llvm-version=22")
NATIVE = tool("OFFLOAD_KIT", "offload-kit")


def parse(argv):
    """(positional arguments, {option: [values]}, {flags}) of the protocol's
    arguments: every `--name value` pair, `--name` alone when a flag."""
    flags = {"--allow-missing-bundles", "--hip-openmp-compatible", "--check-input-archive"}
    pos, opts, on = [], {}, set()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in flags:
            on.add(a)
            i += 1
        elif a.startswith("--"):
            opts.setdefault(a, []).append(argv[i + 1])
            i += 2
        else:
            pos.append(a)
            i += 1
    return pos, opts, on


def message_rules():
    """(substring, rules) of LLVM's messages: the tables offload-kit's own
    runner reads (conformance/messages/, the adapter's error_rules)."""
    root = os.path.dirname(HERE)
    with open(os.path.join(root, "messages", "clang-offload-bundler.json")) as f:
        table = json.load(f)["messages"]
    with open(os.path.join(root, "adapters", "offload-kit.json")) as f:
        table += json.load(f)["error_rules"]
    return [(m["contains"], m["rules"]) for m in table]


def failed(r):
    """Pass a failure on. LLVM's messages name no rule; where the tables
    give a few rules for the message (at most the four the runner counts:
    "no output file specified" is CLI-1 or CLI-2), say them
    ({"errors": [{"rule": R}, ...]}); a message as vague as "Invalid data
    was encountered" (seven rules) names none."""
    sys.stderr.buffer.write(r.stderr)
    text = r.stderr.decode("utf-8", errors="replace")
    if r.returncode > 0 and not re.search(r"\brule [A-Z]+-\d+\b", text):
        rules = sorted({x for sub, rs in message_rules() if sub in text for x in rs})
        if 0 < len(rules) <= 4:
            print(json.dumps({"errors": [{"rule": x} for x in rules]}))
    return r.returncode if r.returncode >= 0 else 128 - r.returncode


def passthrough(argv, **kw):
    """Run `argv`; its output, its messages and its exit status are ours."""
    r = subprocess.run(argv, capture_output=True, **kw)
    if r.returncode != 0:
        return failed(r)
    sys.stdout.buffer.write(r.stdout)
    sys.stderr.buffer.write(r.stderr)
    return 0


def answered(argv, answer):
    """Run `argv`; on success print answer(its stdout) as the JSON answer,
    else pass its failure on."""
    r = subprocess.run(argv, capture_output=True)
    if r.returncode != 0:
        return failed(r)
    print(json.dumps(answer(r.stdout)))
    return 0


def bundler_args(opts, on, inputs, outputs):
    """clang-offload-bundler's options for the protocol's."""
    argv = ["-type=" + opts.get("--type", ["bc"])[0]]
    if "--target" in opts:
        argv.append("-targets=" + ",".join(opts["--target"]))
    argv += ["-input=" + i for i in inputs] + ["-output=" + o for o in outputs]
    if "--bundle-align" in opts:
        argv.append("-bundle-align=" + opts["--bundle-align"][0])
    argv += ["-" + f[2:] for f in sorted(on)]
    return argv


def outputs_in(opts, default):
    """The output files D/0 ... D/n-1 (n: --outputs, else `default`)."""
    n = int(opts.get("--outputs", [default])[0])
    return [os.path.join(opts["--output-dir"][0], str(i)) for i in range(n)]


def lines_of(convert):
    """The answer of a command printing `KEY<TAB>VALUE` lines: one JSON
    object of convert(VALUE)."""
    def answer(out):
        pairs = [line.split("\t", 1) for line in out.decode().splitlines() if "\t" in line]
        return {k: convert(v) for k, v in pairs}
    return answer


def located(v):
    offset, size = (int(x) for x in v.split("\t"))
    return [offset, size] if size else None


def main(argv):
    # `locate` is given its input alone (the protocol's first operation).
    op, rest = (argv[0], argv[1:]) if argv and argv[0] in OPS else ("locate", argv)
    if op in ("parse-id", "compatible"):
        return passthrough([sys.executable, os.path.join(HERE, "ids_by_bundler.py"), op, *rest],
                           env={**os.environ, "BUNDLER": shlex.join(BUNDLER)})
    pos, opts, on = parse(rest)
    if op in ("locate", "kpack-locate"):
        return passthrough(NATIVE + ["list", pos[0], "--json"])
    if op == "list":
        typ = opts.get("--type", ["bc"])[0]
        if typ in ("i", "ii", "cui", "hipi", "d", "s", "ll"):
            # A text bundle: the bundler's -list, which prints the IDs in
            # file order (an ID keeps a CR: split at LF only).
            return answered(BUNDLER + bundler_args(opts, on, pos, []) + ["-list"],
                            lambda out: out.decode("latin-1").split("\n")[:-1])
        # Binary bundles and the rest: offload-kit's strict list, in header
        # order (LLVM's -list prints them in its hash map's order, which the
        # protocol does not take).
        return answered(NATIVE + ["list", pos[0], "--json"],
                        lambda out: [e["id"] for e in json.loads(out)["entries"]])
    if op == "unbundle":
        outs = outputs_in(opts, len(opts.get("--target", [])))
        return passthrough(BUNDLER + bundler_args(opts, on, pos, outs) + ["-unbundle"])
    if op == "bundle":
        return passthrough(BUNDLER + bundler_args(opts, on, opts.get("--input", []), outputs_in(opts, 1)))
    if op == "compress":
        if "--method" not in opts:
            # The bundler's own -compress (which a bundled object ignores),
            # the format version through LLVM's environment variable.
            env = dict(os.environ)
            if "--format-version" in opts:
                env["COMPRESSED_BUNDLE_FORMAT_VERSION"] = opts["--format-version"][0]
            level = ["-compression-level=" + v for v in opts.get("--compression-level", [])]
            return passthrough(BUNDLER + bundler_args(opts, on, opts.get("--input", []), outputs_in(opts, 1))
                               + ["-compress", *level], env=env)
        # A method LLVM's -compress has no option for: the uncompressed
        # bundle first, then offload-kit's compress.
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "bundle")
            code = passthrough(BUNDLER + bundler_args(opts, on, opts.get("--input", []), [plain]))
            if code:
                return code
            extra = ["--method", opts["--method"][0]]
            for key, flag in (("--format-version", "--format-version"), ("--compression-level", "--level")):
                if key in opts:
                    extra += [flag, opts[key][0]]
            return passthrough(NATIVE + ["compress", plain, "-o", outputs_in(opts, 1)[0], *extra])
    if op == "decompress":
        return passthrough(NATIVE + ["decompress", pos[0], "-o", outputs_in(opts, 1)[0]])
    if op == "verify":
        # A check whose success is its exit status: the answer is said.
        return answered(NATIVE + ["verify", pos[0]], lambda _: True)
    if op == "extract-uri":
        return passthrough(NATIVE + ["extract", pos[0], "-o", outputs_in(opts, 1)[0]])
    images = ["--image=" + i for i in opts.get("--image", [])]
    if op == "package":
        return passthrough(PACKAGER + ["-o", outputs_in(opts, 1)[0], *images])
    if op == "unpackage":
        # Run in D: the files it wrote are the answer.
        return answered(PACKAGER + [pos[0], *images], lambda _: sorted(os.listdir(".")))
    if op == "objdump-offloading":
        return answered(PACKAGER + ["--objdump-offloading", pos[0]], lambda _: True)
    if op == "lookup":
        return answered(NATIVE + ["conformance", "spec", "lookup", *pos], lines_of(located))
    if op == "kpack-lookup":
        return answered(NATIVE + ["conformance", "spec", "kpack-lookup", *pos], lines_of(str))
    print(json.dumps({"unsupported": f"operation {op}"}))
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

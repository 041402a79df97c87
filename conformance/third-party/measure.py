#!/usr/bin/env python3
"""Measure third-party offload bundle readers against offload-kit.

Called by measure.sh; see README.md. Tools are run, never patched.
Outcomes: agree, wrong-answer, accepts-malformed, rejects-valid, unsupported,
crash, hang.
"""
import argparse, collections, datetime, hashlib, json, os, re, shutil, signal
import subprocess, sys, tempfile

OBJDUMP = os.environ.get("LLVM_OBJDUMP", "/usr/lib/llvm-22/bin/llvm-objdump")
READOBJ = os.environ.get("LLVM_READOBJ", "/usr/lib/llvm-22/bin/llvm-readobj")
ROC_LS = os.environ.get("ROC_OBJ_LS", "/usr/bin/roc-obj-ls")
ROC_EX = os.environ.get("ROC_OBJ_EXTRACT", "/usr/bin/roc-obj-extract")
TIMEOUT = int(os.environ.get("TOOL_TIMEOUT", "10"))
TOOLS = ["llvm-objdump", "llvm-readobj", "roc-obj-ls", "roc-obj-extract"]
# Input kinds each tool documents/accepts (all need an ELF host object).
SUPPORTED = {t: {"fatbin", "clang"} for t in TOOLS}
OUTCOMES = ["agree", "wrong-answer", "accepts-malformed", "rejects-valid",
            "unsupported", "crash", "hang"]
CRASH_SIGNALS = {signal.SIGILL, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                 signal.SIGSEGV, signal.SIGKILL}


def sha(b):
    return hashlib.sha256(b).hexdigest()[:16]


def run(cmd, cwd, stdin=None):
    """Run with timeout(1); return (rc, stdout, stderr, hang, crash)."""
    p = subprocess.run(["timeout", str(TIMEOUT)] + cmd, cwd=cwd, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    rc = p.returncode
    hang = rc == 124
    crash = False
    if rc < 0 and -rc in CRASH_SIGNALS:
        crash = True
    if rc >= 128 and rc - 128 in CRASH_SIGNALS:
        crash = True
    if "Stack dump:" in err or "PLEASE submit a bug report" in err:
        crash = True
    return rc, out, err, hang, crash


def truth(ok, path, scratch):
    """offload-kit's answer: valid?, entries [(bundle,id,offset,size,bytes,ccob)]."""
    v = subprocess.run([ok, "validate", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    valid = v.returncode == 0
    entries = []
    l = subprocess.run([ok, "list", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if l.returncode == 0:
        js = json.loads(l.stdout)
        d = os.path.join(scratch, "ok-extract")
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run([ok, "extract", path, "--all", "--dir", d],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        seen = set()
        for i, e in enumerate(js.get("entries", [])):
            name = re.sub(r"[\x00-\x1f/\\]", "_", e["id"])
            if name in ("", ".", ".."):
                name = "_" + name
            cand = [os.path.join(d, name + "-%d" % i), os.path.join(d, name)]
            data = None
            for c in (cand if name in seen else cand[::-1]):
                if os.path.exists(c):
                    data = open(c, "rb").read()
                    break
            seen.add(name)
            entries.append(dict(bundle=e.get("bundle", 0), id=e["id"],
                                offset=e["offset"], size=e["size"], data=data,
                                ccob="ccob_offset" in e))
    return valid, entries


def t_objdump(path, sandbox):
    cwd = os.path.join(sandbox, "cwd")
    base = os.path.basename(path)
    rc, out, err, hang, crash = run([OBJDUMP, "--offloading", base], cwd)
    ents = []
    for line in out.splitlines():
        m = re.match(r"^Extracting offload bundle: (.*)$", line)
        if not m:
            continue
        name = m.group(1)
        rest = name[len(base) + 1:]
        n, _, eid = rest.partition(".")
        f = os.path.join(cwd, name)
        data = open(f, "rb").read() if os.path.isfile(f) else None
        ents.append(dict(bundle=int(n) if n.isdigit() else -1, id=eid, data=data))
    return dict(rc=rc, err=err, hang=hang, crash=crash, entries=ents)


URI_RE = re.compile(r"^(.*)\tfile://(.*)#offset=(\d+)&size=(\d+)$")
ROC_RE = re.compile(r"^(\d+)\s+(\S+)\s+file://(\S+)#offset=(\d+)&size=(\d+)$")


def t_readobj(path, sandbox):
    cwd = os.path.join(sandbox, "cwd")
    rc, out, err, hang, crash = run([READOBJ, "--offloading",
                                     os.path.basename(path)], cwd)
    ents = []
    for line in out.splitlines():
        m = URI_RE.match(line)
        if m:
            ents.append(dict(id=m.group(1), offset=int(m.group(3)),
                             size=int(m.group(4))))
    return dict(rc=rc, err=err, hang=hang, crash=crash, entries=ents)


def t_rocls(path, sandbox):
    cwd = os.path.join(sandbox, "cwd")
    rc, out, err, hang, crash = run([ROC_LS, os.path.basename(path)], cwd)
    ents = []
    for line in out.splitlines():
        m = ROC_RE.match(line)
        if m:
            ents.append(dict(bundle=int(m.group(1)), id=m.group(2),
                             uri="file://%s#offset=%s&size=%s" % m.group(3, 4, 5),
                             offset=int(m.group(4)), size=int(m.group(5))))
    return dict(rc=rc, err=err, hang=hang, crash=crash, entries=ents)


def t_rocex(path, sandbox, ls):
    """The roc-obj pipeline: URIs printed by roc-obj-ls fed to roc-obj-extract."""
    cwd = os.path.join(sandbox, "cwd")
    if ls["hang"] or ls["crash"] or not ls["entries"]:
        return dict(ls)
    od = os.path.join(cwd, "out")
    os.makedirs(od, exist_ok=True)
    uris = "".join(e["uri"] + "\n" for e in ls["entries"])
    rc, out, err, hang, crash = run([ROC_EX, "-o", "out"], cwd,
                                    stdin=uris.encode())
    ents = []
    base = os.path.basename(path)
    for e in ls["entries"]:
        f = os.path.join(od, "%s-offset%d-size%d.co" % (base, e["offset"], e["size"]))
        if e["size"] == 0:
            data = b""          # roc-obj-extract skips size 0 by design
        elif os.path.isfile(f):
            data = open(f, "rb").read()
        else:
            continue
        ents.append(dict(id=e["id"], data=data, offset=e["offset"], size=e["size"]))
    return dict(rc=rc, err=err, hang=hang, crash=crash, entries=ents)


def stray_files(sandbox, expected_cwd):
    """Files the tool wrote outside its working directory inside the sandbox."""
    bad = []
    for root, dirs, files in os.walk(sandbox):
        for f in files:
            p = os.path.join(root, f)
            if not p.startswith(expected_cwd + os.sep) and not f.startswith("input."):
                bad.append(os.path.relpath(p, sandbox))
    return bad


def classify(tool, kind, valid, tentries, res, fsize):
    notes = []
    te = res["entries"]
    for e in te:
        if "offset" in e and e["offset"] + e["size"] > fsize:
            notes.append("oob:%s@%d+%d>%d" % (e["id"], e["offset"], e["size"], fsize))
    if res["hang"]:
        return "hang", notes
    if res["crash"]:
        return "crash", notes
    if not te:
        if kind not in SUPPORTED[tool]:
            return "unsupported", notes
        return ("rejects-valid" if valid else "agree"), notes
    if not valid:
        return "accepts-malformed", notes
    if tool in ("llvm-objdump", "roc-obj-extract"):
        want = collections.Counter((e["id"], sha(e["data"] or b"")) for e in tentries)
        got = collections.Counter((e["id"], sha(e["data"]) if e["data"] is not None
                                   else "missing") for e in te)
    else:
        want = collections.Counter((e["id"], e["offset"], e["size"]) for e in tentries)
        got = collections.Counter((e["id"], e["offset"], e["size"]) for e in te)
    if want == got:
        return "agree", notes
    miss = want - got
    extra = got - want
    if miss:
        notes.append("missing:" + ",".join(str(k) for k in sorted(miss)))
    if extra:
        notes.append("extra:" + ",".join(str(k) for k in sorted(extra)))
    return "wrong-answer", notes


def versions(ok):
    def first(cmd):
        try:
            o = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            lines = [l.strip() for l in o.stdout.decode().splitlines() if l.strip()]
            return lines[0] if lines else "?"
        except OSError:
            return "not found"
    def deb(pkg):
        o = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return o.stdout.decode() or "?"
    return {
        "offload-kit": first([ok, "--version"]),
        "llvm-objdump / llvm-readobj": first([OBJDUMP, "--version"]) + " (Debian llvm-22 " + deb("llvm-22") + ")",
        "roc-obj-ls / roc-obj-extract": "Debian hipcc " + deb("hipcc"),
        "GNU objdump (used by roc-obj-ls)": first(["objdump", "--version"]),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ok", required=True)
    ap.add_argument("--corpus", required=True, help="dir with <kind>/ and <kind>-malformed/")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--detail", required=True)
    a = ap.parse_args()
    rows = []
    for sub in sorted(os.listdir(a.corpus)):
        kind = sub.replace("-malformed", "")  # clang/hip-rdc.o is an object bundle: counted under clang
        d = os.path.join(a.corpus, sub)
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".json"):
                continue
            path = os.path.join(d, fn)
            rule = "-"
            sc = path + ".json"
            if os.path.exists(sc):
                rule = json.load(open(sc)).get("rule", "?")
            scratch = os.path.join(a.work, "scratch")
            os.makedirs(scratch, exist_ok=True)
            valid, tentries = truth(a.ok, path, scratch)
            fsize = os.path.getsize(path)
            results = {}
            for tool in TOOLS:
                sandbox = os.path.join(a.work, "sb", tool)
                shutil.rmtree(sandbox, ignore_errors=True)
                cwd = os.path.join(sandbox, "cwd")
                os.makedirs(cwd)
                shutil.copy(path, os.path.join(cwd, fn))
                if tool == "llvm-objdump":
                    r = t_objdump(path, sandbox)
                elif tool == "llvm-readobj":
                    r = t_readobj(path, sandbox)
                elif tool == "roc-obj-ls":
                    r = t_rocls(path, sandbox)
                    results["_ls"] = r
                else:
                    r = t_rocex(path, sandbox, results["_ls"])
                outcome, notes = classify(tool, kind, valid, tentries, r, fsize)
                stray = stray_files(sandbox, cwd)
                if stray:
                    notes.append("wrote-outside:" + ",".join(stray))
                rows.append(dict(tool=tool, kind=sub, file=fn, rule=rule,
                                 valid=valid, outcome=outcome, rc=r["rc"],
                                 notes=";".join(notes),
                                 err=r["err"].strip().splitlines()[-1][:160] if r["err"].strip() else ""))
            shutil.rmtree(os.path.join(a.work, "sb"), ignore_errors=True)
    with open(a.detail, "w") as f:
        f.write("tool\tkind\tfile\trule\tok_valid\toutcome\trc\tnotes\tlast_stderr\n")
        for r in rows:
            f.write("\t".join(str(r[k]) for k in ("tool", "kind", "file", "rule", "valid",
                                                   "outcome", "rc", "notes", "err")) + "\n")
    kinds = sorted({r["kind"] for r in rows})
    cnt = collections.Counter((r["tool"], r["kind"], r["outcome"]) for r in rows)
    out = []
    out.append("# Third-party offload bundle readers vs offload-kit\n")
    out.append("Generated by `conformance/third-party/measure.sh` on %s. Do not edit.\n"
               % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    out.append("## Versions\n")
    for k, v in versions(a.ok).items():
        out.append("- %s: `%s`" % (k, v))
    out.append("\nCorpus: %d files (%s); timeout %ds per run.\n" % (
        len({(r['kind'], r['file']) for r in rows}), ", ".join(kinds), TIMEOUT))
    out.append("## Summary (files per tool x kind x outcome)\n")
    out.append("| tool | kind | " + " | ".join(OUTCOMES) + " |")
    out.append("|---|---|" + "---|" * len(OUTCOMES))
    for t in TOOLS:
        for k in kinds:
            out.append("| %s | %s | " % (t, k) + " | ".join(
                str(cnt[(t, k, o)]) for o in OUTCOMES) + " |")
    out.append("\n## accepts-malformed by rule\n")
    am = collections.Counter((r["tool"], r["rule"]) for r in rows if r["outcome"] == "accepts-malformed")
    out.append("| tool | rule | files |")
    out.append("|---|---|---|")
    for (t, rule), n in sorted(am.items()):
        out.append("| %s | %s | %d |" % (t, rule, n))
    oob = collections.Counter(r["tool"] for r in rows if "oob:" in r["notes"])
    ws = collections.Counter(r["tool"] for r in rows if "wrote-outside" in r["notes"])
    out.append("\n## Flags\n")
    out.append("| tool | answers past end of file (oob) | wrote outside its directory |")
    out.append("|---|---|---|")
    for t in TOOLS:
        out.append("| %s | %d | %d |" % (t, oob[t], ws[t]))
    out.append("\nPer-file details: `results.tsv`.\n")
    open(a.out, "w").write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()

"""The report of tools/fuzz-eval: markdown tables and SVG plots (coverage
over time with bands, time-to-bug survival curves)."""
import os
import re
import subprocess

from . import targets as tg
from .stats import holm, mann_whitney, median, quantile

COLOURS = {"libfuzzer": "#1f77b4", "byteflip": "#7f7f7f", "offloadkit": "#d62728", "mix": "#2ca02c",
           "boot": "#9467bd", "noimage": "#ff7f0e", "bytesonly": "#8c564b"}


def measured(t):
    return bool(t.get("measured"))


def final_cov(t):
    """The trial's coverage: the reader's instructions covered where that is
    measured (binary-only targets), else libFuzzer's edges."""
    if measured(t):
        return t["measured"]["over_time"][-1][1]
    return t["coverage"][-1][1] if t["coverage"] else 0


def cov_at(t, when):
    c = 0
    series = t["measured"]["over_time"] if measured(t) else [s[:2] for s in t["coverage"]]
    for s, v in series:
        if s <= when:
            c = v
    return c


def unique_bugs(t):
    return sorted(b for b in t.get("bugs", {}) if b != "unreproduced")


def verdict(out, target, name):
    """What `offload-kit validate` says of a bug's first input: its first
    error's rule and offset, the link from an LLVM crash to the spec."""
    kit = os.path.join(tg.ROOT, "target/release/offload-kit")
    path = os.path.join(out, "bugs", target, name)
    if not (os.access(kit, os.X_OK) and os.path.exists(path)):
        return "—"
    r = subprocess.run([kit, "validate", path], capture_output=True, text=True, errors="replace",
                       timeout=60)
    m = re.search(r"\(at offset (0x[0-9a-f]+), rule ([A-Z]+-\d+)\)", r.stderr)
    if r.returncode == 0:
        return "valid"
    return f"{m.group(2)} at {m.group(1)}" if m else "invalid"


def canaries_triggered(t):
    return sum(1 for c in t["canaries"].values() if "triggered" in c)


def _frame(w, h, pad, title, xlabel, ylabel):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
            f'font-size="11">',
            f'<text x="{w / 2}" y="16" text-anchor="middle">{title}</text>',
            f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
            f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">{xlabel}</text>',
            f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" text-anchor="middle">{ylabel}</text>']


def coverage_svg(title, ylabel, trials_by_arm, seconds, path):
    w, h, pad = 640, 360, 48
    top = max([final_cov(t) for ts in trials_by_arm.values() for t in ts] + [1])
    grid = [seconds * i / 60 for i in range(61)]
    x = lambda s: pad + (w - 2 * pad) * s / seconds
    y = lambda v: h - pad - (h - 2 * pad) * v / top
    parts = _frame(w, h, pad, title, f"seconds (0-{seconds})", f"{ylabel} (0-{top})")
    for k, (arm, ts) in enumerate(sorted(trials_by_arm.items())):
        c = COLOURS.get(arm, "#000")
        lo = [quantile([cov_at(t, s) for t in ts], 0.025) for s in grid]
        hi = [quantile([cov_at(t, s) for t in ts], 0.975) for s in grid]
        med = [median([cov_at(t, s) for t in ts]) for s in grid]
        band = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(grid, hi))
        band += " " + " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in reversed(list(zip(grid, lo))))
        parts.append(f'<polygon points="{band}" fill="{c}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(grid, med))
        parts.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
        parts.append(f'<text x="{w - pad - 90}" y="{pad + 14 * k}" fill="{c}">{arm}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def survival_svg(title, bugs, trials_by_arm, seconds, path):
    """For each bug (one panel each), the share of trials per arm that have
    not hit it yet, over time (empirical survival; a trial that never hits
    it is censored at the end)."""
    pw, h, pad = 260, 260, 40
    w = pw * max(len(bugs), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             f'font-size="10">', f'<text x="{w / 2}" y="14" text-anchor="middle">{title}</text>']
    for i, (bug, label) in enumerate(bugs):
        x0 = i * pw
        x = lambda s: x0 + pad + (pw - 2 * pad) * s / seconds
        y = lambda v: h - pad - (h - 2 * pad) * v
        parts += [f'<text x="{x0 + pw / 2}" y="30" text-anchor="middle">{label[:40]}</text>',
                  f'<line x1="{x0 + pad}" y1="{h - pad}" x2="{x0 + pw - pad}" y2="{h - pad}" stroke="black"/>',
                  f'<line x1="{x0 + pad}" y1="{pad}" x2="{x0 + pad}" y2="{h - pad}" stroke="black"/>',
                  f'<text x="{x0 + pw / 2}" y="{h - 10}" text-anchor="middle">seconds (0-{seconds})</text>',
                  f'<text x="{x0 + pad - 4}" y="{pad + 4}" text-anchor="end">1</text>',
                  f'<text x="{x0 + pad - 4}" y="{h - pad}" text-anchor="end">0</text>']
        for k, (arm, ts) in enumerate(sorted(trials_by_arm.items())):
            c = COLOURS.get(arm, "#000")
            times = sorted(t["bugs"][bug]["first"] for t in ts if bug in t.get("bugs", {}))
            pts, alive = [(0.0, 1.0)], 1.0
            for s in times:
                pts.append((s, alive))
                alive -= 1 / len(ts)
                pts.append((s, alive))
            pts.append((seconds, alive))
            line = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in pts)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
            if i == 0:
                parts.append(f'<text x="{x0 + pw - pad - 60}" y="{pad + 12 * k}" fill="{c}">{arm}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def report(out, trials, targets, arms, seedsets, seconds, budget, default_arm, baselines):
    lines = ["# Mutator evaluation (tools/fuzz-eval)", "",
             f"Budget: {budget}. Arms: {', '.join(arms)}; documented default arm: "
             f"`{default_arm}` (fixed before the campaign). Coverage: for `planted`, libFuzzer's "
             "`cov:` (edges of the whole target, which is instrumented); for LLVM 22's readers, "
             "the instructions of the reader's own object file (Debian's build) that the corpus "
             "executes, replayed under valgrind at evenly spaced points of the trial (`--marks`); for a "
             "loader of your own (`--harness`), llvm-cov's regions of its measured sources, the corpus "
             "replayed at the same points on a `-fprofile-instr-generate -fcoverage-mapping` build. Bugs: every "
             "crash, out-of-memory and timeout input run again and named by its stack (kind and "
             "top three frames outside the runtime); canaries: known bugs, reached / triggered "
             "(Magma-style). Statistics: median [IQR] over trials; two-sided Mann-Whitney U "
             "(normal approximation, tie-corrected), Vargha-Delaney A12 (> 0.5: the default arm "
             "ahead), p Holm-corrected across targets and seed sets for each baseline and measure. "
             "Only the default arm's comparisons carry a claim; other arms are exploratory.", ""]
    comparisons = []
    all_bugs = {}
    for target in targets:
        canaries = tg.TARGETS[target]["canaries"]
        for seeds in seedsets:
            by = {a: [t for t in trials if t["target"] == target and t["seeds"] == seeds and t["arm"] == a]
                  for a in arms}
            by = {a: ts for a, ts in by.items() if ts}
            if not by:
                continue
            any_t = next(iter(by.values()))[0]
            if measured(any_t):
                total = any_t["measured"]["total"]
                what = any_t["measured"].get("unit", "instructions")
                unit = f"{what} of {tg.TARGETS[target]['file']} covered (of {total})"
            else:
                unit = "edges covered"
            lines += [f"## {target}, {seeds} seeds", "",
                      f"![coverage over time]({target}-{seeds}.svg)", "",
                      f"Coverage: {unit}.", "",
                      "| arm | trials | execs/s (median) | coverage, median [IQR] | unique bugs, median [IQR] | "
                      "failing inputs, median (triaged) | canaries triggered, median |"
                      + "".join(f" {c}: triggered (median s) |" for c in canaries),
                      "|---|---|---|---|---|---|---|" + "---|" * len(canaries)]
            for a, ts in by.items():
                covs = [final_cov(t) for t in ts]
                nbugs = [len(unique_bugs(t)) for t in ts]
                eps = median([t["execs"] / max(t["wall"], 1e-9) for t in ts])
                cells = []
                for c in canaries:
                    times = [t["canaries"][c]["triggered"] for t in ts if "triggered" in t["canaries"].get(c, {})]
                    reach = sum(1 for t in ts if "reached" in t["canaries"].get(c, {}))
                    cells.append(f"{len(times)}/{len(ts)} ({median(times):.1f})" if times
                                 else f"0/{len(ts)} (reached {reach}/{len(ts)})")
                failing = [t.get("artifacts", 0) for t in ts]
                triaged = [t.get("triaged", t.get("artifacts", 0)) for t in ts]
                lines.append(f"| {a} | {len(ts)} | {eps:,.0f} | {median(covs):g} "
                             f"[{quantile(covs, .25):g}-{quantile(covs, .75):g}] | {median(nbugs):g} "
                             f"[{quantile(nbugs, .25):g}-{quantile(nbugs, .75):g}] | "
                             f"{median(failing):g} ({median(triaged):g}) | "
                             f"{median([canaries_triggered(t) for t in ts]):g} |" + "".join(f" {c} |" for c in cells))
            lines.append("")
            coverage_svg(f"{target}, {seeds} seeds: coverage over time (median, 2.5-97.5% of trials)",
                         unit, by, seconds, os.path.join(out, f"{target}-{seeds}.svg"))
            bugs = {}
            for ts in by.values():
                for t in ts:
                    for name in unique_bugs(t):
                        bugs.setdefault(name, t["bugs"][name])
            if bugs:
                ranked = sorted(bugs, key=lambda b: -sum(1 for ts in by.values() for t in ts
                                                         if b in t.get("bugs", {})))
                lines += [f"![time to bug]({target}-{seeds}-bugs.svg)", "",
                          "| bug | kind | top frames | offload-kit validate | "
                          + " | ".join(f"{a}: trials (median s to first)" for a in by)
                          + " |", "|---|---|---|---|" + "---|" * len(by)]
                for name in ranked:
                    b = bugs[name]
                    all_bugs.setdefault((target, name), b)
                    cells = []
                    for a, ts in by.items():
                        times = [t["bugs"][name]["first"] for t in ts if name in t.get("bugs", {})]
                        cells.append(f"{len(times)}/{len(ts)} ({median(times):.1f})" if times else f"0/{len(ts)}")
                    frames = " ← ".join(f"`{f[:60]}`" for f in b["frames"])
                    lines.append(f"| `{name}` | {b['kind']} | {frames} | {verdict(out, target, name)} | "
                                 + " | ".join(cells) + " |")
                lines.append("")
                survival_svg(f"{target}, {seeds} seeds: share of trials without the bug yet",
                             [(n, f"{n} {bugs[n]['kind']}") for n in ranked[:4]], by, seconds,
                             os.path.join(out, f"{target}-{seeds}-bugs.svg"))
            if default_arm in by:
                for b in baselines:
                    if b not in by:
                        continue
                    row = [target, seeds, b]
                    for measure in (final_cov, lambda t: len(unique_bugs(t)), canaries_triggered):
                        u, p, a12 = mann_whitney([measure(t) for t in by[default_arm]],
                                                 [measure(t) for t in by[b]])
                        row += [p, a12]
                    comparisons.append(row)
    if comparisons:
        lines += ["## The default arm against each baseline", "",
                  "| target | seeds | against | coverage: p | p (Holm) | A12 | unique bugs: p | p (Holm) | A12 "
                  "| canaries: p | p (Holm) | A12 |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for b in baselines:
            rows = [c for c in comparisons if c[2] == b]
            adjusted = [holm([c[3 + 2 * m] for c in rows]) for m in range(3)]
            for i, c in enumerate(rows):
                cells = []
                for m in range(3):
                    cells.append(f"{c[3 + 2 * m]:.3g} | {adjusted[m][i]:.3g} | {c[4 + 2 * m]:.2f}")
                lines.append(f"| {c[0]} | {c[1]} | {b} | " + " | ".join(cells) + " |")
        lines.append("")
    for target in targets:
        cs = tg.TARGETS[target]["canaries"]
        if not cs:
            continue
        lines.append(f"Canaries of {target}: " + "; ".join(f"{c}: {d}" for c, d in cs.items()) + ".")
    lines.append("")
    capped = [t for t in trials if t.get("triaged", t.get("artifacts", 0)) < t.get("artifacts", 0)]
    if capped:
        lines += [f"{len(capped)} of {len(trials)} trials left more failing inputs than are triaged "
                  f"(each is run again and symbolized): the first half in order and the rest sampled "
                  f"evenly, {capped[0]['triaged']} per trial, so their unique bugs are a lower bound, "
                  f"and the lower the larger an arm's share of untriaged inputs (the failing inputs "
                  f"column): a threat to the unique-bug comparison, against the arm that fails "
                  f"more inputs.", ""]
    if all_bugs:
        where = os.path.abspath(os.path.join(out, "bugs"))
        if where.startswith(tg.ROOT + os.sep):
            where = os.path.relpath(where, tg.ROOT)
        lines += [f"Each bug's first input and its report: `{where}/<target>/<bug>` (`.txt`).", ""]
    return "\n".join(lines)

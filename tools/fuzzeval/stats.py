"""Statistics of tools/fuzz-eval: median and quantiles, a two-sided
Mann-Whitney U with the Vargha-Delaney A12 effect size, Holm's correction."""
import math


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def quantile(xs, q):
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def mann_whitney(x, y):
    """Two-sided Mann-Whitney U (normal approximation with tie and
    continuity correction) and Vargha-Delaney A12 = P(X > Y) + P(X = Y)/2."""
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return float("nan"), float("nan"), float("nan")
    r = ranks(list(x) + list(y))
    r1 = sum(r[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    a12 = u1 / (n1 * n2)
    n = n1 + n2
    counts = {}
    for v in list(x) + list(y):
        counts[v] = counts.get(v, 0) + 1
    ties = sum(c ** 3 - c for c in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0, a12
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    p = math.erfc(max(z, 0) / math.sqrt(2))
    return u1, min(p, 1.0), a12


def holm(ps):
    """Holm-adjusted p-values, in the order given."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    adj = [0.0] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adj[i] = running
    return adj


def self_test():
    """The statistics against values worked out by hand (and scipy's)."""
    u, p, a = mann_whitney(list(range(11, 21)), list(range(1, 11)))
    assert (u, a) == (100.0, 1.0) and abs(p - 0.000183) < 1e-5, (u, p, a)
    u, p, a = mann_whitney([5] * 10, [5] * 10)
    assert (u, p, a) == (50.0, 1.0, 0.5), (u, p, a)
    u, p, a = mann_whitney([1, 2, 3, 4, 5], [3, 4, 5, 6, 7])
    assert (u, a) == (4.5, 0.18) and abs(p - 0.1138) < 1e-3, (u, p, a)
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert median([3, 1, 2]) == 2 and quantile([0, 10], 0.25) == 2.5
    print("fuzz-eval: statistics self-test passed")

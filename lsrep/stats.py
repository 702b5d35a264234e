"""Descriptive statistics for LSREP reports: pure functions returning frozen results.

Every function that resamples takes an explicit `numpy.random.Generator`, so a
result is a function of its inputs and the seed. Intervals are descriptive
(protocol section 6): each result names the unit it counts (`n`), how many
clusters it resampled and the resampling unit, so a reader knows what an
interval is an interval over.

The cluster is a probe — the (trajectory, probe_id) pair — holding all its
(checkpoint, repetition) observations: observations of one probe are not
independent, probes are treated as if they were.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

PROBE_UNIT = "probe (trajectory, probe_id)"
"""Resampling unit of every cluster bootstrap in the report."""
DEFAULT_B = 2000
DEFAULT_LEVEL = 0.95
# Largest number of clusters whose sign flips are enumerated exactly (2**16 patterns).
EXACT_FLIP_LIMIT = 16
# Bootstrap draws are generated in chunks of at most this many cluster indices.
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with an interval."""

    value: float
    """The estimate (NaN when there is no data)."""
    interval: tuple[float, float]
    """(lo, hi); NaN bounds when undefined."""
    level: float
    """Nominal coverage of the interval, e.g. 0.95."""
    n: int
    """Observations (or pairs) counted."""
    clusters: int
    """Distinct clusters among them."""
    unit: str
    """What the interval resamples (or assumes independent)."""
    method: str
    """How the interval was computed."""


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test."""

    statistic: float
    """The test statistic (meaning depends on `method`)."""
    p_value: float
    """Two-sided p-value (1.0 when there is nothing to test)."""
    n: int
    """Observations (or pairs) counted."""
    clusters: int
    """Distinct clusters among them."""
    unit: str
    """What the test treats as exchangeable."""
    method: str
    """Which test."""
    detail: tuple[tuple[str, float], ...] = ()
    """Extra named numbers, e.g. the discordant counts of McNemar's test."""


@dataclass(frozen=True)
class PairedComparison:
    """Condition A against condition B on identical (trajectory, probe, checkpoint, repetition) pairs."""

    a: str
    """First condition."""
    b: str
    """Second condition."""
    difference: Estimate
    """Mean of A − B over pairs, with a cluster-bootstrap interval."""
    randomization: TestResult
    """Sign-flip test of the mean difference, flipping whole clusters."""
    mcnemar: TestResult | None = None
    """Exact McNemar test, where the outcome is binary."""


# -- helpers -----------------------------------------------------------------------------------
def cluster_codes(clusters: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """Integer codes 0..K-1 for cluster labels (order of first appearance) and K."""
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64,
                        count=len(clusters))
    return codes, len(index)


def _as_float(values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError("values must be one-dimensional")
    return arr


def _nan_estimate(n: int, clusters: int, level: float, unit: str, method: str) -> Estimate:
    return Estimate(math.nan, (math.nan, math.nan), level, n, clusters, unit, method)


def _bootstrap_ratio(sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray:
    """B replicates of sum(sums[idx]) / sum(counts[idx]) with clusters drawn with replacement."""
    k = len(sums)
    out = np.empty(b)
    step = max(1, _CHUNK_CELLS // max(k, 1))
    for start in range(0, b, step):
        stop = min(b, start + step)
        idx = rng.integers(0, k, size=(stop - start, k))
        num = sums[idx].sum(axis=1)
        den = counts[idx].sum(axis=1)
        out[start:stop] = num / den
    return out


def _percentile(reps: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


# -- means and rates ---------------------------------------------------------------------------
def cluster_bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    b: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    unit: str = PROBE_UNIT,
) -> Estimate:
    """Mean over observations with a percentile interval from resampling whole clusters.

    Each replicate draws K clusters with replacement and takes the mean over all
    their observations (a ratio of sums, so clusters weigh by their size).
    NaN values are left out before anything else.
    """
    vals = _as_float(values)
    if len(vals) != len(clusters):
        raise ValueError("values and clusters differ in length")
    keep = ~np.isnan(vals)
    vals = vals[keep]
    codes, k = cluster_codes([c for c, ok in zip(clusters, keep, strict=True) if ok])
    method = f"cluster bootstrap, percentile, B={b}"
    if len(vals) == 0:
        return _nan_estimate(0, 0, level, unit, method)
    sums = np.bincount(codes, weights=vals, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(float)
    reps = _bootstrap_ratio(sums, counts, rng, b)
    return Estimate(float(vals.mean()), _percentile(reps, level), level, len(vals), k, unit, method)


def stratified_cluster_mean(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    strata: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    b: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    unit: str = PROBE_UNIT,
) -> Estimate:
    """Unweighted mean over strata of each stratum's mean, with a stratified cluster bootstrap.

    Each replicate resamples whole clusters with replacement within every stratum (so no stratum
    ever goes missing), takes each stratum's mean over its observations, then the plain mean over
    strata. A cluster is keyed by (stratum, cluster). NaN values are left out first.
    """
    vals = _as_float(values)
    if not len(vals) == len(clusters) == len(strata):
        raise ValueError("values, clusters and strata differ in length")
    keep = ~np.isnan(vals)
    method = f"stratified cluster bootstrap, percentile, B={b}"
    by_stratum: dict[Hashable, tuple[list[float], list[Hashable]]] = {}
    for v, c, s, ok in zip(vals, clusters, strata, keep, strict=True):
        if ok:
            vs, cs = by_stratum.setdefault(s, ([], []))
            vs.append(float(v))
            cs.append(c)
    if not by_stratum:
        return _nan_estimate(0, 0, level, unit, method)
    point, reps, k_total = [], np.zeros(b), 0
    for s in sorted(by_stratum, key=str):
        vs, cs = by_stratum[s]
        codes, k = cluster_codes(cs)
        k_total += k
        arr = np.asarray(vs)
        sums = np.bincount(codes, weights=arr, minlength=k)
        counts = np.bincount(codes, minlength=k).astype(float)
        point.append(float(arr.mean()))
        reps += _bootstrap_ratio(sums, counts, rng, b)
    reps /= len(by_stratum)
    return Estimate(float(np.mean(point)), _percentile(reps, level), level, int(keep.sum()), k_total, unit,
                    method + f", {len(by_stratum)} strata weighted equally")


def wilson_interval(successes: int, n: int, *, level: float = DEFAULT_LEVEL) -> Estimate:
    """A rate with its Wilson score interval (treats the n observations as independent)."""
    method = "Wilson score interval"
    unit = "observation (assumed independent)"
    if n <= 0:
        return _nan_estimate(0, 0, level, unit, method)
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    from scipy import stats as sps  # imported on use: ~75 MB and ~1 s that a replay never needs

    z = float(sps.norm.ppf(1.0 - (1.0 - level) / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Estimate(p, (max(0.0, centre - half), min(1.0, centre + half)), level, n, n, unit, method)


def rate(
    successes: Sequence[bool | int] | np.ndarray,
    clusters: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    b: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
) -> tuple[Estimate, Estimate]:
    """A binary rate with (cluster-bootstrap interval, Wilson interval)."""
    arr = _as_float(successes)
    boot = cluster_bootstrap_mean(arr, clusters, rng, b=b, level=level)
    known = arr[~np.isnan(arr)]
    return boot, wilson_interval(int(known.sum()), len(known), level=level)


# -- paired comparisons ------------------------------------------------------------------------
def sign_flip_test(
    differences: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    b: int = DEFAULT_B,
    unit: str = PROBE_UNIT,
) -> TestResult:
    """Randomization test of a zero mean difference, flipping the sign of whole clusters.

    Under the null each cluster's differences are symmetric about zero, so the
    statistic |sum of differences| is compared with its value under every sign
    pattern (exactly when there are at most EXACT_FLIP_LIMIT non-zero clusters,
    else over `b` random patterns, with the (1 + count) / (1 + b) correction).
    """
    d = _as_float(differences)
    if len(d) != len(clusters):
        raise ValueError("differences and clusters differ in length")
    codes, k = cluster_codes(clusters)
    totals = np.bincount(codes, weights=d, minlength=k) if k else np.zeros(0)
    totals = totals[totals != 0.0]
    observed = abs(float(totals.sum()))
    m = len(totals)
    if m == 0:
        return TestResult(0.0, 1.0, len(d), k, unit, "sign-flip randomization (no non-zero clusters)")
    tol = 1e-9 * max(1.0, observed)
    if m <= EXACT_FLIP_LIMIT:
        patterns = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        stats = np.abs(patterns @ totals)
        p = float(np.mean(stats >= observed - tol))
        method = f"sign-flip randomization, exact over 2^{m} patterns"
    else:
        hits = 0
        step = max(1, _CHUNK_CELLS // m)
        for start in range(0, b, step):
            rows = min(step, b - start)
            signs = rng.integers(0, 2, size=(rows, m)) * 2 - 1
            hits += int(np.sum(np.abs(signs @ totals) >= observed - tol))
        p = (1 + hits) / (1 + b)
        method = f"sign-flip randomization, Monte Carlo B={b}"
    return TestResult(observed / len(d), min(1.0, p), len(d), k, unit, method)


def mcnemar_exact(a: Sequence[bool | int], b: Sequence[bool | int]) -> TestResult:
    """Exact McNemar test: a two-sided binomial test on the discordant pairs.

    `statistic` is the number of pairs where A succeeded and B did not;
    `detail` carries both discordant counts.
    """
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    if x.shape != y.shape:
        raise ValueError("paired sequences differ in length")
    a_only = int(np.sum(x & ~y))
    b_only = int(np.sum(~x & y))
    discordant = a_only + b_only
    from scipy import stats as sps

    p = 1.0 if discordant == 0 else float(sps.binomtest(a_only, discordant, 0.5).pvalue)
    return TestResult(
        float(a_only), min(1.0, p), len(x), len(x), "pair (assumed independent)",
        "exact McNemar (binomial on discordant pairs)",
        (("a_only", float(a_only)), ("b_only", float(b_only))),
    )


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    names: tuple[str, str] = ("A", "B"),
    binary: bool = False,
    boot: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
) -> PairedComparison:
    """Mean of A − B over aligned pairs: cluster-bootstrap interval, sign-flip test, and for
    binary outcomes the exact McNemar test. Pairs where either side is NaN are left out."""
    x, y = _as_float(a), _as_float(b)
    if not len(x) == len(y) == len(clusters):
        raise ValueError("a, b and clusters differ in length")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    kept = [c for c, ok in zip(clusters, keep, strict=True) if ok]
    d = x - y
    diff = cluster_bootstrap_mean(d, kept, rng, b=boot, level=level)
    flips = sign_flip_test(d, kept, rng, b=boot)
    mcn = mcnemar_exact(x, y) if binary else None
    return PairedComparison(names[0], names[1], diff, flips, mcn)


def net_ordinal_superiority(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    rng: np.random.Generator,
    *,
    boot: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
) -> Estimate:
    """P(A > B) − P(B > A) over aligned pairs of ordinal scores (e.g. 1-5 rubric), in [-1, 1],
    with a cluster-bootstrap interval. Pairs where either score is missing are left out."""
    x, y = _as_float(a), _as_float(b)
    if not len(x) == len(y) == len(clusters):
        raise ValueError("a, b and clusters differ in length")
    keep = ~(np.isnan(x) | np.isnan(y))
    signs = np.sign(x[keep] - y[keep])
    est = cluster_bootstrap_mean(signs, [c for c, ok in zip(clusters, keep, strict=True) if ok], rng,
                                 b=boot, level=level)
    return Estimate(est.value, est.interval, est.level, est.n, est.clusters, est.unit,
                    "net ordinal superiority on pairs, " + est.method)


# -- multiplicity ------------------------------------------------------------------------------
def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values, in input order; None/NaN entries stay None and do not
    count towards the family size."""
    present = [(i, float(p)) for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (i, p) in enumerate(sorted(present, key=lambda t: t[1])):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# -- agreement ---------------------------------------------------------------------------------
def _label_pairs(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> list[tuple[Hashable, Hashable]]:
    if len(a) != len(b):
        raise ValueError(f"sequences differ in length: {len(a)} and {len(b)}")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def percent_agreement(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> Estimate:
    """Share of items where both labels are present and equal (n = items with both labels)."""
    pairs = _label_pairs(a, b)
    value = sum(x == y for x, y in pairs) / len(pairs) if pairs else math.nan
    return Estimate(value, (math.nan, math.nan), math.nan, len(pairs), len(pairs), "item", "percent agreement")


def cohen_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> Estimate:
    """Unweighted Cohen's kappa over items both raters labelled; NaN when chance agreement is 1.

    The same statistic as `lsrep.judge.agreement.cohen_kappa` (a test holds them equal), computed
    here so that reports do not import the model layer.
    """
    pairs = _label_pairs(a, b)
    method = "Cohen's kappa"
    if not pairs:
        return Estimate(math.nan, (math.nan, math.nan), math.nan, 0, 0, "item", method)
    cats = {c: i for i, c in enumerate(sorted({x for p in pairs for x in p}, key=lambda v: (str(type(v)), v)))}
    table = np.zeros((len(cats), len(cats)))
    for x, y in pairs:
        table[cats[x], cats[y]] += 1
    table /= len(pairs)
    observed = float(np.trace(table))
    chance = float(table.sum(axis=1) @ table.sum(axis=0))
    value = math.nan if chance >= 1.0 else (observed - chance) / (1.0 - chance)
    return Estimate(value, (math.nan, math.nan), math.nan, len(pairs), len(pairs), "item", method)


def rng_for(seed: int, *labels: str) -> np.random.Generator:
    """A generator for one named statistic, so adding a statistic never shifts another's draws."""
    digest = hashlib.sha256("\x1f".join(labels).encode()).digest()
    words = [int.from_bytes(digest[i:i + 4], "big") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([seed % (2**32), *words]))

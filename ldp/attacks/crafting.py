r"""Crafted reports of one frequency oracle, and how they move its estimator.

The three kinds of fake report (Cao, Jia and Gong, USENIX Security 2021):

* ``"input"`` -- input manipulation: the fake user runs the honest randomizer on
  a target value (their *random item* attack, RIA).  Nothing on the server can
  tell her from an honest user holding the target;
* ``"RPA"`` -- random perturbed value: a report drawn uniformly from the
  oracle's output space, with no target (an untargeted baseline);
* ``"MGA"`` -- maximal gain: the report is built to support as many targets as
  the output can.  GRR reports a target (one per report, the targets in turn);
  OUE and the count-mean sketch set the bits of every target and fill the
  other bits so that the expected number of ones is an honest report's;
  the hashed oracles OLH and Hadamard response search ``trials`` hash seeds
  per report for the one whose hashes of the targets share an output
  (:func:`ldp.attacks.kernels.olh_search`, :func:`~ldp.attacks.kernels.hr_search`);
  FLH (:mod:`ldp.oracles.flh`) searches ``min(trials, h)`` distinct members
  of its public pool instead (:func:`_mga_flh`).  With ``trials=1`` the hash
  function (seed or pool member) is drawn as an honest device draws it and
  the report is its fullest cell: the targets hashed there.

A maximal-gain report may also be built for at most ``cap`` of the targets
(:func:`craft`'s ``cap``): each report aims at ``cap`` consecutive targets of
a random cyclic order, every starting point equally often, so every target is
aimed at by ``cap / r`` of the reports.  A server's detector of reports that
support improbably many released values (:class:`ldp.attacks.SupportCountDetector`)
sees a count no larger than ``cap`` (plus chance supports, as for an honest
report): the attacker who knows the detector's threshold picks ``cap`` below it.

FLH's pool index is the user's own draw (uniform, from her device's public
coins, :meth:`ldp.FLH.draw_noise`, sent in the clear and independent of her
value), so nothing on the server can tell a chosen index from a drawn one in
a single report: a fake user picks it freely.  With one target she draws it
uniformly as an honest user does (any member supports the target), so her
indices look honest; the search over ``T`` members with several targets
prefers the pool members on which the targets collide, so the indices of many
searched reports pile up on those members (a tally's row sums show it,
:func:`ldp.attacks.index_uniformity`), and a search of the whole pool
(``trials >= h``) makes every fake user send one of the few best reports of
the pool.  With ``trials=1`` and several targets her index is again uniform
(the honest law) and she reports the cell most targets hash to under it: the
index test cannot see her, at the price of fewer targets per report.

What a report does to an estimate
---------------------------------
The estimate of a value ``v`` from ``N`` reports is eq. (2) of the paper,
``c_v = (I_v - N q) / (p - q)``.  A report that supports ``v`` with
probability ``s`` adds 1 to ``N`` and a ``Bernoulli(s)`` to ``I_v``, so it moves
the estimate by

.. math:: g(s) = \frac{s - q}{p - q} \qquad (\text{the scale factor } 1/(p-q)
          \text{ of eq. (2) times the excess support probability } s - q)

in expectation: ``g(p) = 1`` for an honest holder of ``v`` (input manipulation),
``g(q) = 0`` for an honest user holding another value, and
``g(1) = (1 - q) / (p - q)`` for a report crafted to support ``v`` for sure
(:func:`gain`).  :func:`support_probability` gives ``s`` for each kind and
oracle, :func:`crafted_rho` the probability that a crafted report supports a
value it was *not* built for (the count engine's ``rho``, :mod:`ldp.engines.crafted`).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..oracles import CMS, FLH, GRR, HR, OLH, OUE, FrequencyOracle, Reports
from ..oracles.base import check_indices, uint_dtype
from ..validation import check_int, check_rng
from ..values import as_values, to_chunks32
from . import kernels

__all__ = ["KINDS", "check_kind", "craft", "support_matrix", "support_probability", "crafted_rho", "report_rho",
           "gain", "olh_search_support"]

#: the kinds of fake report
KINDS = ("input", "RPA", "MGA")
_CHUNK = 4096  # reports per batch when drawing bits


def check_kind(kind) -> str:
    """A valid attack kind (one of :data:`KINDS`, case-insensitive), in its canonical spelling."""
    if isinstance(kind, str):
        for k in KINDS:
            if kind.lower() == k.lower():
                return k
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _hashed(oracle) -> bool:
    return isinstance(oracle, (OLH, HR, CMS, FLH))


def _answers(oracle: Any, answers) -> np.ndarray:
    """The distinct answers, checked against the oracle's domain."""
    if _hashed(oracle):
        a = as_values(answers, oracle.m, name="answers")
        return np.unique(a, axis=0) if a.ndim == 2 else np.unique(a)
    d = oracle.domain_size
    return np.unique(check_indices(answers, d, "answers"))


def _balanced(r: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Which of ``r`` targets each of ``n`` fake users takes: every target ``n / r`` times (+-1), shuffled."""
    return rng.permutation(np.resize(np.arange(r), n))


def _bits(n: int, width: int, prob: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(n, width)`` independent bits, 1 with probability ``prob`` (per report), packed."""
    prob = np.broadcast_to(np.asarray(prob, dtype=float), (n,))
    out = np.empty((n, -(-width // 8)), dtype=np.uint8)
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        out[lo:hi] = np.packbits(rng.random((hi - lo, width)) < prob[lo:hi, None], axis=1)
    return out


def _set_bits(bits: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """Set bit ``cols`` of packed rows ``rows`` (in place)."""
    cols = cols.astype(np.int64)
    np.bitwise_or.at(bits, (rows, cols >> 3), (np.uint8(128) >> (cols & 7).astype(np.uint8)))


def _bit_at(bits: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Bit ``cols[i, j]`` of packed row ``i`` (``(n, A)`` bool)."""
    cols = cols.astype(np.int64)
    byte = np.take_along_axis(bits, cols >> 3, axis=1)
    return ((byte >> (7 - (cols & 7)).astype(np.uint8)) & np.uint8(1)).astype(bool)


def _hr_even(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    for sh in (8, 4, 2, 1):
        x = x ^ (x >> np.uint64(sh))
    return (x & np.uint64(1)) == 0


def _extra_ones(oracle, forced: np.ndarray, width: int) -> np.ndarray:
    """Probability of each other bit so that the expected number of ones is an honest report's.

    An honest OUE / CMS report has ``p + (width - 1) f`` ones on average
    (``f``: the other bits' probability); with ``forced`` bits set, the other
    ``width - forced`` are 1 with probability ``(p + (width - 1) f - forced) / (width - forced)``.
    """
    f = oracle.flip if isinstance(oracle, CMS) else oracle.q
    mean = oracle.p + (width - 1) * f
    return np.clip((mean - forced) / np.maximum(width - forced, 1), 0.0, 1.0)


def craft(oracle: FrequencyOracle, answers, n: int, *, kind: str, rng=None, trials: int = 64,
          cap: int | None = None) -> Reports:
    """``n`` fake reports of ``oracle`` of the given kind (see the module notes).

    Parameters
    ----------
    oracle : FrequencyOracle
        GRR, OUE, OLH (or BLH), HR, CMS or FLH.
    answers : array_like
        The targets (values the oracle takes: ``m``-bit values for the hashed
        oracles, indices for GRR and OUE); duplicates are merged.  Ignored by
        ``"RPA"``.
    n : int
        Number of reports, at least 1.
    kind : {"input", "RPA", "MGA"}
    rng : None, int, SeedSequence, BitGenerator or Generator
        The attacker's randomness (hash seeds, coins): a simulation.
    trials : int, default 64
        ``"MGA"`` with OLH or HR and more than one target: hash seeds each
        report tries (1 to 2**16); with FLH, distinct pool members (at most ``h``).
        1: the seed or pool member an honest device would draw, and its fullest cell.
    cap : int, optional
        ``"MGA"``: each report is built for at most this many of the targets
        (1 to 2**20; the module notes); default all of them.

    Returns
    -------
    Reports
        The oracle's reports class, ``n`` reports in random order.

    Examples
    --------
    >>> import ldp
    >>> from ldp.attacks import craft, support_matrix
    >>> cms = ldp.CMS(2.0, m=32)
    >>> targets = ldp.attacks.fresh_targets(32, 16, rng=1)
    >>> capped = craft(cms, targets, 1000, kind="MGA", cap=4, rng=2)
    >>> int(support_matrix(cms, capped, targets).sum(axis=1).min()) >= 4
    True
    """
    kind = check_kind(kind)
    n = check_int(n, "n", 1)
    trials = check_int(trials, "trials", 1, 2**16)
    cap = None if cap is None else check_int(cap, "cap", 1, 2**20)
    rng = check_rng(rng)
    if kind == "RPA":
        return _rpa(oracle, n, rng)
    a = _answers(oracle, answers)
    r = a.shape[0]
    if kind == "input":
        return oracle.privatize(a[_balanced(r, n, rng)], rng=rng)
    if cap is not None and cap < r:
        return _capped(oracle, a, n, rng, trials, cap)
    if isinstance(oracle, GRR):
        y = a[_balanced(r, n, rng)]
        return oracle.reports_class(oracle.params, y=y.astype(uint_dtype(oracle.domain_size - 1)))
    if isinstance(oracle, OUE):
        bits = _bits(n, oracle.domain_size, _extra_ones(oracle, r, oracle.domain_size), rng)
        _set_bits(bits, np.repeat(np.arange(n), r), np.tile(a, n))
        return oracle.reports_class(oracle.params, bits=bits)
    if isinstance(oracle, CMS):
        seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        cells = kernels.hash_cells(seeds, _chunks(oracle, a), oracle.width)  # (n, r)
        forced = _distinct_per_row(cells) if r > 1 else np.ones(n)
        bits = _bits(n, oracle.width, _extra_ones(oracle, forced, oracle.width), rng)
        _set_bits(bits, np.repeat(np.arange(n), r), cells.ravel())
        return oracle.reports_class(oracle.params, seed=seeds, bits=bits)
    if isinstance(oracle, FLH):
        return _mga_flh(oracle, a, n, rng, trials)
    if isinstance(oracle, (OLH, HR)):
        return _mga_hashed(oracle, a, n, rng, trials)
    raise TypeError(f"oracle must be a GRR, OUE, OLH, HR, CMS or FLH instance, got {type(oracle).__name__}")


def _distinct_per_row(cells: np.ndarray) -> np.ndarray:
    """How many distinct values each row of ``cells`` holds (``int64``)."""
    srt = np.sort(cells, axis=1)
    return 1 + np.count_nonzero(srt[:, 1:] != srt[:, :-1], axis=1).astype(np.int64)


def _capped(oracle, a: np.ndarray, n: int, rng: np.random.Generator, trials: int, cap: int) -> Reports:
    """Maximal-gain reports, each for ``cap`` consecutive targets of a random cyclic order (module notes)."""
    r = a.shape[0]
    order = rng.permutation(r)
    start = _balanced(r, n, rng)  # each report's first target in that order: every start n / r times
    parts, where = [], []
    for s in range(r):
        idx = np.flatnonzero(start == s)
        if idx.size:
            parts.append(craft(oracle, a[order[(s + np.arange(cap)) % r]], idx.size, kind="MGA", rng=rng,
                               trials=trials))
            where.append(idx)
    return type(parts[0]).concat(parts)[np.argsort(np.concatenate(where))]


def _chunks(oracle, answers: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(to_chunks32(answers, oracle.m))


def _mga_hashed(oracle, a: np.ndarray, n: int, rng: np.random.Generator, trials: int) -> Reports:
    r = a.shape[0]
    T = 1 if r == 1 else trials  # one target: any seed supports it
    seeds = rng.integers(0, 2**64, size=(n, T), dtype=np.uint64)
    ch = _chunks(oracle, a)
    if isinstance(oracle, OLH):
        if r == 1:
            seed = seeds[:, 0]
            y = kernels.hash_cells(seed, ch, oracle.d_prime)[:, 0]
        else:
            seed, y, _ = kernels.olh_search(seeds, ch, oracle.d_prime)
        return oracle.reports_class(oracle.params, seed=seed, y=y.astype(uint_dtype(oracle.d_prime - 1)))
    b = oracle.block_size
    if r == 1:  # a symbol of C_h other than position 0 (which supports the whole block), uniform
        seed = seeds[:, 0]
        blk, row = oracle.block_row(kernels.hash_cells(seed, ch, oracle.cells)[:, 0])
        low = row & (~row + np.uint64(1))  # flipping this bit of a position flips its parity
        t = np.zeros(n, dtype=np.uint64)
        redo = np.ones(n, dtype=bool)
        while redo.any():  # uniform on C_h (parity fixed as HR does), redrawn while at position 0
            u = rng.integers(0, b, size=int(redo.sum()), dtype=np.uint64)
            t[redo] = np.where(_hr_even(row[redo] & u), u, u ^ low[redo])
            redo = t == 0
        y = blk * np.uint64(b) + t
    else:
        seed, y, _ = kernels.hr_search(seeds, ch, oracle.blocks, b)
    return oracle.reports_class(oracle.params, seed=seed, y=y.astype(uint_dtype(oracle.K - 1)))


def distinct_indices(n: int, T: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, T)`` pool indices, distinct within each row: a uniform ``T``-subset of ``[h]`` per row, in random order.

    Sparse rows (``4 T <= h``): uniform draws, the repeats of a row redrawn
    until none is left (the law is invariant under permutations of ``[h]``, so
    each row's set is a uniform subset); dense rows: the first ``T`` of a
    random permutation (sorted random keys, a block of rows at a time).
    """
    if 4 * T > h:
        out = np.empty((n, T), dtype=np.int64)
        step = max(1, 2**22 // h)
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            out[lo:hi] = np.argsort(rng.random((hi - lo, h)), axis=1)[:, :T]
        return out
    idx = rng.integers(0, h, size=(n, T))
    while True:
        order = np.argsort(idx, axis=1, kind="stable")
        srt = np.take_along_axis(idx, order, axis=1)
        dup = np.zeros(idx.shape, dtype=bool)
        np.put_along_axis(dup, order[:, 1:], srt[:, 1:] == srt[:, :-1], axis=1)
        k = int(np.count_nonzero(dup))
        if not k:
            return idx
        idx[dup] = rng.integers(0, h, size=k)


def _mga_flh(oracle: FLH, a: np.ndarray, n: int, rng: np.random.Generator, trials: int) -> Reports:
    """FLH's maximal-gain reports: the pool index is the fake user's to choose (module notes).

    One target: a uniform index (what an honest device draws) and ``y =
    H_J(t)``.  Several: of ``T = min(trials, h)`` distinct uniform members of
    the pool, the one whose fullest hash bin holds most targets
    (:func:`ldp.attacks.kernels.olh_search` on the members' seeds), and that
    bin; ``T = 1``: a uniform index and its fullest bin.
    """
    h, dp = oracle.pool_size, oracle.d_prime
    T = 1 if a.shape[0] == 1 else min(trials, h)
    idx = distinct_indices(n, T, h, rng)
    seeds = np.ascontiguousarray(oracle.seeds[idx])  # (n, T): distinct members have distinct seeds
    ch = _chunks(oracle, a)
    if a.shape[0] == 1:
        j = idx[:, 0]
        y = kernels.hash_cells(np.ascontiguousarray(seeds[:, 0]), ch, dp)[:, 0]
    else:
        seed, y, _ = kernels.olh_search(seeds, ch, dp)
        j = idx[np.arange(n), np.argmax(seeds == seed[:, None], axis=1)]
    return oracle.reports_class(oracle.params, index=j.astype(uint_dtype(h - 1)), y=y.astype(uint_dtype(dp - 1)))


def _rpa(oracle, n: int, rng: np.random.Generator) -> Reports:
    """Reports drawn uniformly from the output space."""
    if isinstance(oracle, GRR):
        d = oracle.domain_size
        return oracle.reports_class(oracle.params, y=rng.integers(0, d, size=n).astype(uint_dtype(d - 1)))
    if isinstance(oracle, OUE):
        return oracle.reports_class(oracle.params, bits=_bits(n, oracle.domain_size, np.full(n, 0.5), rng))
    if isinstance(oracle, FLH):  # a uniform index and a uniform symbol
        h, dp = oracle.pool_size, oracle.d_prime
        return oracle.reports_class(oracle.params, index=rng.integers(0, h, size=n).astype(uint_dtype(h - 1)),
                                    y=rng.integers(0, dp, size=n).astype(uint_dtype(dp - 1)))
    seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    if isinstance(oracle, CMS):
        return oracle.reports_class(oracle.params, seed=seeds, bits=_bits(n, oracle.width, np.full(n, 0.5), rng))
    size = oracle.d_prime if isinstance(oracle, OLH) else oracle.K
    y = rng.integers(0, size, size=n).astype(uint_dtype(size - 1))
    return oracle.reports_class(oracle.params, seed=seeds, y=y)


def support_matrix(oracle: Any, reports: Any, answers) -> np.ndarray:
    """Which report supports which answer: ``(n_reports, n_answers)`` bool (answers as given, not merged).

    The aggregator's own test (a report supports ``v`` when the oracle's
    support counts it for ``v``), evaluated pair by pair; its column sums are
    ``oracle.support(reports, answers)``.
    """
    oracle.check_reports(reports)
    if _hashed(oracle):
        a = as_values(answers, oracle.m, name="answers")
    else:
        a = check_indices(answers, oracle.domain_size, "answers")
    if isinstance(oracle, GRR):
        return reports.y.astype(np.uint64)[:, None] == a[None, :]
    if isinstance(oracle, OUE):
        return _bit_at(reports.bits, np.broadcast_to(a[None, :].astype(np.int64), (reports.n, a.shape[0])))
    out = np.empty((reports.n, a.shape[0]), dtype=bool)
    ch = _chunks(oracle, a)
    for lo in range(0, reports.n, 2**16):
        part = reports[lo:lo + 2**16]
        seed = oracle.seeds[part.index.astype(np.int64)] if isinstance(oracle, FLH) else part.seed
        cells = kernels.hash_cells(seed, ch, oracle.cells)
        if isinstance(oracle, (OLH, FLH)):
            out[lo:lo + part.n] = cells == part.y.astype(np.uint64)[:, None]
        elif isinstance(oracle, HR):
            out[lo:lo + part.n] = oracle.in_set(cells, part.y.astype(np.uint64)[:, None])
        else:
            out[lo:lo + part.n] = _bit_at(part.bits, cells)
    return out


# ---------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------
def gain(oracle: FrequencyOracle, s: float) -> float:
    """Expected change of one estimate, eq. (2), per report supporting the value with probability ``s``.

    ``(s - q) / (p - q)``: 1 for an honest holder (``s = p``), 0 for an honest
    non-holder (``s = q``), ``(1 - q) / (p - q)`` for a crafted report (``s = 1``).
    """
    return (float(s) - oracle.q) / (oracle.p - oracle.q)


@lru_cache(maxsize=256)
def _max_load_cdf(r: int, d: int) -> np.ndarray:
    """``P(max load <= x)``, ``x = 0 .. r``: ``r`` balls thrown uniformly into ``d`` bins.

    ``r! / d^r`` times the coefficient of ``t^r`` in ``(sum_{i <= x} t^i / i!)^d``
    (the exponential generating function of the occupancy counts).
    """
    out = np.zeros(r + 1)
    logfac = np.array([math.lgamma(i + 1) for i in range(r + 1)])
    for x in range(1, r + 1):
        base = np.exp(-logfac[:x + 1])
        poly, res, e = base.copy(), np.zeros(r + 1), d
        res[0] = 1.0
        while e:  # (sum t^i / i!)^d truncated at degree r, by squaring
            if e & 1:
                res = np.convolve(res, poly)[:r + 1]
            poly = np.convolve(poly, poly)[:r + 1]
            e >>= 1
        coef = res[r] if res.shape[0] > r else 0.0
        out[x] = min(1.0, math.exp(math.log(max(coef, 1e-300)) + logfac[r] - r * math.log(d)))
    return out


def olh_search_support(r: int, d_prime: int, trials: int) -> float:
    """Expected share of ``r`` targets a searched OLH report supports (fully random hashing).

    Each of ``trials`` seeds throws the ``r`` targets into ``d'`` bins; the
    report takes the fullest bin of the best seed.  With ``L`` the maximum
    load of one seed (:func:`_max_load_cdf`), the best of ``T`` independent
    seeds has ``P(L_T <= x) = P(L <= x)^T`` and ``E[L_T] = sum_x P(L_T >= x)``;
    the share is ``E[L_T] / r``.  A model: the real family is pairwise
    independent, and the simulation checks the model.
    """
    r = check_int(r, "r", 1)
    if r == 1:
        return 1.0
    F = _max_load_cdf(r, int(d_prime)) ** int(trials)
    return float(np.sum(1.0 - F[:-1])) / r  # sum_{x=1}^{r} P(L_T >= x) = sum_{x=0}^{r-1} (1 - F(x))


def support_probability(oracle: FrequencyOracle, kind: str, r: int = 1, trials: int = 64) -> float:
    """``s``: the probability that a fake report supports a given one of ``r`` targets.

    * ``"input"``: the user holds one target (in turn), ``s = p / r + (1 - 1/r) q``;
    * ``"RPA"``: :func:`crafted_rho` (no target);
    * ``"MGA"``: GRR ``1 / r`` (one target per report); OUE, CMS ``1`` (every
      target's bit set); OLH ``1`` for one target, :func:`olh_search_support`
      for more; FLH the same with ``min(trials, h)`` searched members (over
      random pools: given the pool, the members' collisions are fixed); HR
      ``1`` for one target, and no closed form for more (``nan``: measure it,
      :func:`craft` and :func:`support_matrix`).
    """
    kind = check_kind(kind)
    r = check_int(r, "r", 1)
    if kind == "input":
        return oracle.p / r + (1 - 1 / r) * oracle.q
    if kind == "RPA":
        return crafted_rho(oracle, "RPA", r)
    if isinstance(oracle, GRR):
        return 1.0 / r
    if isinstance(oracle, (OUE, CMS)) or r == 1:
        return 1.0
    if isinstance(oracle, FLH):
        return olh_search_support(r, oracle.d_prime, min(trials, oracle.pool_size))
    if isinstance(oracle, OLH):
        return olh_search_support(r, oracle.d_prime, trials)
    return float("nan")


def crafted_rho(oracle: FrequencyOracle, kind: str, r: int = 1) -> float:
    """Probability that a fake report supports a value it was not built for (the count engine's ``rho``).

    * ``"input"``: ``q`` (an honest report of a target);
    * ``"RPA"``: the uniform output's: GRR ``1/d``, OUE and CMS ``1/2``, OLH
      ``1/d' = q``, HR ``(b/2) / K = 1/(2B)``;
    * ``"MGA"``: GRR ``0``; OUE the other bits' probability
      (:func:`_extra_ones`); CMS ``q`` (the expected number of ones is an
      honest report's, so a uniform cell is set with probability ``q``); OLH
      and FLH ``1/d' = q`` (FLH: over random pools; given the pool, a report
      for ``t`` supports ``c`` with the share of members on which they
      collide, :mod:`ldp.oracles.flh`); HR ``(b/2 - 1) / (B (b-1))``: the crafted symbol is in the
      target's set ``C_h`` but not at position 0 of its block (which is in the
      set of every cell of the block), and of the ``B (b-1)`` cells a uniform
      other value may hash to, ``b/2 - 1`` have it in their set (the nonzero
      rows with even parity against it).

    Exact for one target by the hash family's pairwise independence; for a
    searched seed (several targets) the unconditioned value (see
    :mod:`ldp.engines.crafted`).
    """
    kind = check_kind(kind)
    if kind == "input":
        return float(oracle.q)
    if kind == "RPA":
        if isinstance(oracle, GRR):
            return 1.0 / oracle.domain_size
        if isinstance(oracle, (OUE, CMS)):
            return 0.5
        if isinstance(oracle, (OLH, FLH)):
            return 1.0 / oracle.d_prime
        return (oracle.block_size / 2) / oracle.K  # type: ignore[attr-defined]
    if isinstance(oracle, GRR):
        return 0.0
    if isinstance(oracle, OUE):
        return float(_extra_ones(oracle, np.asarray(r), oracle.domain_size))
    if isinstance(oracle, CMS):
        return float(oracle.q)
    if isinstance(oracle, (OLH, FLH)):
        return 1.0 / oracle.d_prime
    return (oracle.block_size / 2 - 1) / oracle.cells  # type: ignore[attr-defined]


def report_rho(oracle: Any, kind: str, reports: Any) -> float:
    """:func:`crafted_rho` of these crafted reports: the mean over them of each one's share of supported values.

    For the reports whose share is known from the report alone (a count-mean
    sketch's ones, a Hadamard symbol's position), the exact mean; otherwise
    :func:`crafted_rho`.
    """
    kind = check_kind(kind)
    if kind == "MGA" and isinstance(oracle, CMS):
        ones = np.unpackbits(reports.bits, axis=1, count=oracle.width).sum(axis=1)
        return float(ones.mean() / oracle.width)
    if kind == "MGA" and isinstance(oracle, HR):
        at0 = (reports.y.astype(np.int64) % oracle.block_size) == 0
        b = oracle.block_size
        return float(np.where(at0, b - 1, b / 2 - 1).mean() / oracle.cells)
    return crafted_rho(oracle, kind, 1)

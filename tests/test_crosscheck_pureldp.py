"""A peer's code as a cross-check: pure-LDP 1.2's PEM, TreeHist and SFP against ours (chapter 08's protocols).

pure-LDP (PyPI ``pure-ldp``, Cormode, Maddock and Maple, PVLDB 2021) is the
only other public implementation of these protocols.  It is installed for
the tests only (``requirements-crosscheck.txt``, by ``make test``); every
test here is skipped, with the reason, when it is missing.

Setting (small, because pure-LDP is pure Python: about 100 us per user and
report): ``n = 5,000`` users, ``m = 8``-bit values from a Zipf law
(``s = 1.5``, 64 distinct values), ``k = 4``, fragments / levels of 2 bits.
Both sides use Apple's count-mean sketch as the frequency oracle, pure-LDP's
``CMSClient`` / ``CMSServer`` (32 public hash functions, width 256) and our
:class:`ldp.CMS` (one hash function per user, width 1024); pure-LDP's own
local-hashing oracle evaluates every user on the whole domain and is far too
slow for repeated runs.  Their heavy hitters are ranked by the estimates
they return and cut to the top ``k`` (their SFP returns every joined
candidate), then scored with the same F1 as ours.

Test: Mann-Whitney U on the F1 of ``R = 12`` runs per side, two-sided, at a
false-alarm rate ``ALPHA = 0.01`` per comparison.  With ``R = 12`` and F1
standard deviations around 0.15 it detects shifts of the F1 distribution of
about 0.2 (one F1 step is 0.25 at k = 4); the differences found below are
larger than that.  Where the designs differ the test is one-sided, in the
direction the difference predicts.

Findings (also in ``book/interpretation.md``, section "After PEM", ``after-pem-crosscheck``):

* **PEM** -- same algorithm (top-k prefixes per round, one group per round):
  the F1 distributions agree.
* **TreeHist** -- two design differences, both making pure-LDP's version
  weaker, and a one-sided test for each.  (1) Every user's padded prefix
  (``"01******"``, ``"0110****"``, ...) goes into *one* count-mean sketch
  shared by all levels, so a level's estimates carry the noise of all ``n``
  users while their signal comes from the ``n / L`` who drew that level; a
  one-oracle-per-level design (PEM at ``eps/2``) has ``sqrt(L)`` times less
  noise.  (2) It keeps the top ``k`` prefixes at every level *including the
  leaf level* and returns the leaf level's top ``k``; the whole-value reports
  every user sends at ``eps/2`` only supply the returned frequencies.  Ours
  selects the final top ``k`` with every user's whole-value report.
* **SFP** -- same algorithm up to the oracle's details: agreement.
"""
from __future__ import annotations

import random
import types
import warnings

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets, metrics

pure_ldp = pytest.importorskip("pure_ldp", reason="pure-LDP is installed by `make test` from requirements-crosscheck"
                                                  ".txt; without it there is no peer to compare with")

M, N, K, F = 8, 5_000, 4, 2
R = 12
ALPHA = 0.01
CMS_HASHES, CMS_WIDTH = 32, 256


def _numpy2_shim():
    """pure-LDP 1.2 builds ``np.zeros(None)`` (accepted by numpy < 2 as a 0-d array); numpy 2 refuses it."""
    import pure_ldp.core._freq_oracle_server as fos

    real = np

    class _NP(types.ModuleType):
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def zeros(shape, *args, **kwargs):
            return real.zeros(() if shape is None else shape, *args, **kwargs)

    fos.np = _NP("numpy")


@pytest.fixture(scope="module")
def data():
    _numpy2_shim()
    ds = datasets.zipf(N, s=1.5, m=M, n_distinct=64, rng=11)
    strings = [format(int(v), f"0{M}b") for v in ds.values]
    return ds, strings


def run_pureldp(name: str, eps: float, strings, seed: int) -> np.ndarray:
    """One run of pure-LDP's protocol; the top-K values by the estimates it returns."""
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.heavy_hitters.apple_sfp import SFPClient, SFPServer
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer
    from pure_ldp.heavy_hitters.treehistogram import TreeHistClient, TreeHistServer

    np.random.seed(seed)  # pure-LDP draws from the global generators
    random.seed(seed)
    srv = CMSServer(eps, CMS_HASHES, CMS_WIDTH)
    cli = CMSClient(eps, srv.get_hash_funcs(), CMS_WIDTH)
    binary = ["0", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "PEM":
            client = PEMClient(eps, 0, M, F, alphabet=binary, fo_client=cli)
            server = PEMServer(eps, 0, M, F, alphabet=binary, fo_server=srv)
        elif name == "TreeHist":
            client = TreeHistClient(eps, F, M, alphabet=binary, fo_client=cli)
            server = TreeHistServer(eps, M, F, alphabet=binary, fo_server=srv)
        else:
            client = SFPClient(eps, F, M, alphabet=set(binary), fo_client=cli)
            server = SFPServer(eps, F, M, alphabet=set(binary), fo_server=srv)
        for s in strings:
            server.aggregate(client.privatise(s))
        hh, freq = server.find_heavy_hitters(k=K)
    hh, freq = list(hh), np.asarray(list(freq), dtype=float)
    order = np.argsort(-freq, kind="stable")[:K]
    return np.array([int(hh[i].replace("*", ""), 2) for i in order], dtype=np.uint64)


def f1_pureldp(name, eps, data):
    ds, strings = data
    top = ds.top(K)
    return np.array([metrics.f1(top, run_pureldp(name, eps, strings, 1000 + s)) for s in range(R)])


def f1_ours(P, data, reps=R):
    ds, _ = data
    top = ds.top(K)
    return np.array([metrics.f1(top, P.run(ds.values, rng=s, engine="protocol").heavy_hitters) for s in range(reps)])


def agree(a, b):
    return stats.mannwhitneyu(a, b, alternative="two-sided").pvalue > ALPHA


@pytest.mark.slow
def test_pem_agrees_with_pureldp(data):
    eps = 2.0
    theirs = f1_pureldp("PEM", eps, data)
    ours = f1_ours(ldp.PEM(eps, K, M, gamma=0, eta=F, oracle="CMS"), data)
    assert agree(theirs, ours), (theirs.mean(), ours.mean())


@pytest.mark.slow
def test_treehist_pureldp_pools_levels(data):
    """pure-LDP's TreeHist is below PEM at eps/2 (its levels share one sketch) and below ours."""
    eps = 4.0
    theirs = f1_pureldp("TreeHist", eps, data)
    pem_half = f1_ours(ldp.PEM(eps / 2, K, M, gamma=0, eta=F, oracle="CMS"), data)
    assert stats.mannwhitneyu(pem_half, theirs, alternative="greater").pvalue < ALPHA, (pem_half.mean(),
                                                                                        theirs.mean())
    ours = f1_ours(ldp.TreeHist(eps, K, M, bits_per_level=F, oracle="CMS", min_keep=K, max_keep=K), data)
    assert stats.mannwhitneyu(ours, theirs, alternative="greater").pvalue < ALPHA, (ours.mean(), theirs.mean())


@pytest.mark.slow
def test_sfp_agrees_with_pureldp(data):
    eps = 4.0
    theirs = f1_pureldp("SFP", eps, data)
    ours = f1_ours(ldp.SFP(eps, K, M, fragment_bits=F, hash_bits=8, fragments_kept=K, check_hash=False,
                           oracle="CMS"), data)
    assert agree(theirs, ours), (theirs.mean(), ours.mean())

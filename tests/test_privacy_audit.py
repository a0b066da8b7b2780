r"""End-to-end privacy audit: an attacker holding everything the server holds tries to tell two values apart.

The attacker has the published plan (or the bare oracle's parameters), every report's bytes and the client's
code (:mod:`ldp.client`, the hash family).  For one user and two candidate values :math:`v_0, v_1` he picks
an event :math:`S` of the report; eps-LDP means :math:`\Pr[S \mid v_0] \le e^\varepsilon \Pr[S \mid v_1]`
for every :math:`S`, so over :math:`N` reports of each value the counts :math:`k_0, k_1` of reports in
:math:`S` give an empirical lower bound on the privacy loss,

.. math:: \hat\varepsilon = \ln \frac{\underline{p}_0}{\overline{p}_1},

with :math:`\underline{p}_0` the lower Clopper-Pearson bound of :math:`k_0 / N` and :math:`\overline{p}_1`
the upper one of :math:`k_1 / N`, each at level :math:`\alpha`: :math:`\hat\varepsilon \le \varepsilon` holds
with probability at least :math:`1 - 2\alpha` whenever the reports are eps-LDP (both directions of the
ratio are tried, each at :math:`\alpha / 2`).  The events are the optimal ones for each oracle (their
ratio is exactly :math:`e^\varepsilon`: e.g. for OLH "the report supports :math:`v_0` and not
:math:`v_1`"), so the bound comes close to :math:`\varepsilon` from below: the test also asserts that, so
an attacker that saw nothing could not pass it.

With the seeded simulation and a *known* seed, the same attacker replays the simulation with :math:`v_1`:
under :math:`v_1` the replay reproduces the report exactly, so :math:`k_1 = 0` and :math:`v_1` is ruled out
**with certainty** for every report that differs; the bound then exceeds :math:`\varepsilon` (and grows
with :math:`N` without limit).  That is why the seed of a simulation is every user's secret, and why a
device draws from the operating system.

The audit itself is the library's (:mod:`ldp.attacks.audit`: the Clopper-Pearson bounds, the events, the
client's reports of one user); these tests run it and also the known-seed attack that breaks a simulation.
"""
from __future__ import annotations

import numpy as np
import pytest

import ldp
from ldp.attacks.audit import audit_group, audit_oracle, epsilon_lower_bound
from ldp.values import prefix

ALPHA = 1e-7  # per bound: the client's audit fails by chance with probability < 4e-7
EPS = 1.0
N = 100_000  # reports of each value (client audit)
N_SEED = 20_000  # reports of each value (known-seed simulation)


ORACLES = {
    "GRR": lambda: ldp.GRR(EPS, 10),
    "OLH": lambda: ldp.OLH(EPS, m=16),
    "OUE": lambda: ldp.OUE(EPS, 20),
    "HR": lambda: ldp.HR(EPS, m=16),
    "CMS": lambda: ldp.CMS(EPS, m=16, width=64),
    "FLH": lambda: ldp.FLH(EPS, m=16, pool_size=64, pool_seed=9),
}


@pytest.mark.parametrize("name", list(ORACLES))
def test_client_reports_keep_the_privacy_budget(name):
    o = ORACLES[name]()
    bound = audit_oracle(o, n=N, v0=3, v1=7, alpha=ALPHA)["eps_lower"]  # N reports of each value, one user
    print(f"{name}: empirical epsilon lower bound {bound:.3f} (epsilon = {EPS}; {N:,} reports of each value)")
    assert bound <= EPS  # what eps-LDP guarantees, end to end through the client and the wire
    assert bound >= EPS - 0.2  # the event is optimal (ratio exactly e^eps): the audit has power


@pytest.mark.parametrize("name", list(ORACLES))
def test_a_known_seed_undoes_the_simulation(name):
    o = ORACLES[name]()
    v0, v1 = 3, 7
    seed = 2024

    def replay_differs(truth: int) -> np.ndarray:
        seen = o.privatize(np.full(N_SEED, truth, dtype=np.uint64), rng=seed)  # the simulation
        again = o.privatize(np.full(N_SEED, v1, dtype=np.uint64), rng=seed)  # the attacker: same seed, v1
        return ~np.all(np.column_stack([np.asarray(a).reshape(N_SEED, -1) == np.asarray(b).reshape(N_SEED, -1)
                                        for a, b in zip(seen.arrays.values(), again.arrays.values())]), axis=1)

    in0, in1 = replay_differs(v0), replay_differs(v1)
    assert in1.sum() == 0  # under v1 the replay is exact: v1 is ruled out with certainty whenever they differ
    bound = epsilon_lower_bound(in0, in1, ALPHA)
    print(f"{name} simulation, seed known: v1 ruled out with certainty for {in0.mean():.0%} of the users; "
          f"empirical epsilon lower bound {bound:.2f} > epsilon = {EPS}")
    assert in0.mean() > 0.3 and bound > EPS + 1  # eps-LDP is broken: the audit fails, as it must


# ---------------------------------------------------------------------------
# PEM: one user of each group, through the published plan
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pem_plan():
    pem = ldp.PEM(2.0, 4, 64)
    return pem, pem.plan(2000, rng=5)  # four groups: prefixes of 17, 32, 48 and 64 bits


def _group_values(plan, g):
    """Two values whose answers to group ``g``'s question differ (they differ in the first bit)."""
    v0 = 0x1234_5678_9ABC_DEF0
    v1 = v0 | 1 << 63
    q = plan.questions[g][0]
    a0, a1 = (int(q.answer(np.array([v], dtype=np.uint64), plan.m)[0]) for v in (v0, v1))
    assert a0 != a1 and int(prefix(np.array([v0], dtype=np.uint64), 64, 1)[0]) == 0
    return v0, v1, a0, a1


def test_one_user_of_each_pem_group(pem_plan):
    pem, plan = pem_plan
    labels = plan.labels()
    n_each = 30_000
    for g in range(plan.n_groups):
        user = int(np.flatnonzero(labels == g)[0])
        v0, v1, a0, a1 = _group_values(plan, g)
        bound = audit_group(plan, g, n=n_each, alpha=ALPHA, v0=v0, v1=v1)["eps_lower"]  # the group's first user
        print(f"PEM group {g} (user {user}, prefix of {plan.questions[g][0].stop} bits): empirical epsilon "
              f"lower bound {bound:.3f} (epsilon = {pem.epsilon})")
        assert pem.epsilon - 0.3 <= bound <= pem.epsilon


def test_a_known_seed_undoes_every_pem_group(pem_plan):
    # the simulation privatizes every user from one seed; whoever holds it replays any user with another value
    pem, plan = pem_plan
    labels = plan.labels()
    seed = 99

    def replay_differs(g: int, truth: int, guess: int) -> np.ndarray:
        """Whether each user of group ``g`` holding ``truth`` gets another report than the replay with ``guess``."""
        members = np.flatnonzero(labels == g)
        seen = pem.privatize(np.full(plan.n, truth, dtype=np.uint64), plan=plan, rng=seed)  # the simulation
        again = pem.privatize(np.full(members.size, guess, dtype=np.uint64), plan=plan, users=members, rng=seed)
        a, b = seen.group_reports(g)[0], again.group_reports(g)[0]
        return (a.seed != b.seed) | (a.y != b.y)

    for g in range(plan.n_groups):
        v0, v1, _, _ = _group_values(plan, g)
        in0, in1 = replay_differs(g, v0, v1), replay_differs(g, v1, v1)
        assert in1.sum() == 0 and in0.mean() > 0.3
        print(f"PEM group {g}, seed known: v1 ruled out with certainty for {in0.mean():.0%} of its users")

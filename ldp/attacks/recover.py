r"""A defence on aggregates: the release's genuine counts recovered as LDPRecover does, and what may be fake withheld.

The method (Sun et al., 2024)
-----------------------------
LDPRecover (X. Sun, Q. Ye, H. Hu, J. Duan, T. Wo, J. Xu, R. Yang, "LDPRecover:
Recovering Frequencies from Poisoning Attacks against Local Differential
Privacy", ICDE 2024, arXiv:2403.09351) works on the aggregate alone, without
knowing the attack.  With a share :math:`\eta` of fake reports, a poisoned
frequency estimate mixes the genuine users' frequency :math:`f_X(v)` and the
fake users' :math:`f_Y(v)` (each the frequency oracle's estimator applied to
that part of the reports):

.. math:: \hat f_Z(v) = (1 - \eta)\, f_X(v) + \eta\, f_Y(v),
          \qquad\text{so}\qquad
          f_X(v) = \frac{\hat f_Z(v) - \eta\, f_Y(v)}{1 - \eta}

(its *genuine frequency estimator*).  The fake users' frequencies are
unknown, but the oracle bounds them: one report supports ``v`` with a
probability ``s`` in ``[0, 1]``, so by eq. (2) it moves ``v``'s estimate by
``(s - q) / (p - q)``, between ``-q / (p - q)`` and the maximal gain
``g = (1 - q) / (p - q)`` (:func:`ldp.attacks.gain`).  LDPRecover then
projects the recovered vector onto consistent frequencies (non-negative,
summing to one).

What this module does with it
-----------------------------
:func:`recover` applies the estimator to the **release** of a heavy-hitter
run (its last step's estimates, scaled to the population ``n``) for a share
``eta`` of fake reports in that step:

* ``genuine``: the recovered count of each released value if the fake users
  did not aim at it (``f_Y = 0``: they support it as an honest non-holder
  does, which the library's crafted reports and any attacker who keeps an
  honest report's number of supported cells do), ``est / (1 - eta)``,
  clipped at 0 (the projection's non-negativity);
* ``lower``: the smallest genuine count the estimate allows if the value
  *may* be a target (``f_Y = g``, every fake report supporting it), at
  confidence ``1 - alpha`` (normal approximation, the estimate's variance
  from eq. (2), Bonferroni over the released values):
  ``(est - eta n g - z sigma) / (1 - eta)``;
* the defended release keeps the released values whose ``lower`` is
  positive, in their order, and **withholds** the others: their counts could
  be the fake users' doing alone.

So a value nobody holds, lifted by fake users who make at most a share
``eta`` of the last step's reports, is released with probability at most
``alpha`` (up to the normal approximation): to plant it an attacker needs
more than about ``eta`` of the users (:func:`ldp.attacks.smallest_fraction`
with a :class:`ldp.attacks.Server` that applies the defence measures how
many), and the price is paid by honest values whose counts are below
``eta n g + z sigma``, which are withheld too.

Where this simplifies LDPRecover (honestly)
-------------------------------------------
* ``eta`` is the server's stated bound on the share of fake reports (e.g.
  from its account records), a parameter.  LDPRecover learns the fake users'
  statistics from the sum of the poisoned frequencies over the whole domain;
  a heavy-hitter step estimates a few candidates out of ``2**m`` values, so
  that sum is not available here.
* Without the targets, the estimator shifts every value alike (``f_Y`` is the
  same for all), so it cannot reorder a top-``k`` release: what it can do is
  refuse values whose genuine count may be zero, which is the ``lower`` bound
  above (the worst case of LDPRecover's constraint on ``f_Y``).  LDPRecover's
  variant that knows the targets (LDPRecover*) would subtract ``eta g`` from
  them only; that needs knowledge the server does not have.
* The projection is the clipping at zero; the sum-to-one constraint concerns
  the whole domain, which the release does not estimate.
* Only the last step is recovered; an attacker who places more than a share
  ``eta`` of that step's users in it (chosen groups) is outside the bound,
  which :func:`ldp.attacks.consistency_check` is there to see.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from ..core import HeavyHitterResult
from ..validation import check_fraction, check_real
from .crafting import gain
from .defences import estimate_variance

__all__ = ["Recovery", "recover"]


@dataclass(frozen=True, eq=False)
class Recovery:
    """What :func:`recover` did to a release.

    Attributes
    ----------
    result : HeavyHitterResult
        The defended release: the original one without the withheld values.
    genuine : numpy.ndarray
        Recovered genuine count of each originally released value (population scale) if it is no target.
    lower : numpy.ndarray
        Lower confidence bound of its genuine count if it may be a target of every fake report.
    withheld : numpy.ndarray
        Whether each originally released value was withheld (``lower <= 0``).
    eta : float
        The share of fake reports guarded against.
    alpha : float
        The level of the lower bounds (family-wise over the release).
    gain : float
        The largest move of one fake report on a released estimate (``(1 - q) / (p - q)`` of the last step).
    """

    result: HeavyHitterResult
    genuine: np.ndarray
    lower: np.ndarray
    withheld: np.ndarray
    eta: float
    alpha: float
    gain: float

    @property
    def n_withheld(self) -> int:
        return int(np.count_nonzero(self.withheld))


def recover(result: HeavyHitterResult, *, eta: float, alpha: float = 1e-3) -> Recovery:
    """The release with LDPRecover's genuine-count recovery, values that may be fake withheld (module notes).

    Parameters
    ----------
    result : HeavyHitterResult
        A heavy-hitter release (any protocol, either engine) with its steps.
    eta : float
        Share of fake reports in the release's last step guarded against, in ``[0, 1)``
        (0: only values whose estimate is not significantly positive are withheld).
    alpha : float
        Probability that a value nobody holds, lifted by at most ``eta`` fake reports, is
        released anyway (family-wise over the released values), in (0, 1).

    Returns
    -------
    Recovery

    Examples
    --------
    >>> import ldp
    >>> data = ldp.datasets.exponential(n=200_000, m=64, rng=0)
    >>> res = ldp.PEM(2.0, 16, 64).run(data, rng=1, engine="counts")
    >>> rec = ldp.attacks.recover(res, eta=0.01)
    >>> len(res), len(rec.result), rec.n_withheld
    (16, 6, 10)
    """
    if not isinstance(result, HeavyHitterResult):
        raise TypeError(f"result must be a HeavyHitterResult, got {type(result).__name__}")
    eta = check_real(eta, "eta", lo=0.0)
    if not eta < 1:
        raise ValueError(f"eta must be a real number in [0, 1), got {eta!r}")
    alpha = check_fraction(alpha, "alpha")
    last = result.rounds[-1]
    if last.question is None:
        raise ValueError("result's last step has no question (no estimates to recover)")
    o = last.question.oracle()
    g = gain(o, 1.0)
    n, est = result.n, np.asarray(result.estimates, dtype=float)
    A = est.shape[0]
    if A == 0:
        empty = np.zeros(0)
        return Recovery(result, empty, empty, np.zeros(0, dtype=bool), eta, alpha, g)
    sd = np.sqrt(estimate_variance(last.question, last.n_users, n, est))
    z = float(stats.norm.isf(alpha / A))
    genuine = np.maximum(est, 0.0) / (1.0 - eta)
    lower = (est - eta * n * g - z * sd) / (1.0 - eta)
    withheld = ~(lower > 0)
    keep = ~withheld
    defended = replace(result, heavy_hitters=result.heavy_hitters[keep], estimates=result.estimates[keep],
                       support=result.support[keep])
    return Recovery(defended, genuine, lower, withheld, eta, alpha, g)

"""Frequency oracles (paper section 2.2): GRR, OLH, OUE and BLH; HR and CMS (issue 14).

Every oracle has the same interface:

* ``privatize(values, rng=None)`` -- what each user sends, as a
  :class:`Reports` object (compact numpy arrays that record the oracle's
  parameters; sliceable, concatenable, ``save``/``load`` to ``.npz``);
* ``support(reports, candidates)`` -- the number of reports supporting each
  candidate value (``int64``);
* ``estimate(reports, candidates)`` -- unbiased counts
  ``(I_v - n q) / (p - q)`` (paper eq. ``eqn:est``);
* ``p``, ``q`` and ``variance(n)`` (paper eqs. ``var_grr``, ``var_olh``).

OLH's aggregation runs in a compiled, multi-threaded numba kernel
(:mod:`ldp.oracles._kernels`) over the strongly universal hash family of
:mod:`ldp.oracles.hashing`.
"""
from .base import FrequencyOracle, Reports, ReportsFileError, concat_reports, load_reports
from .grr import GRR, GRRReports
from .olh import BLH, OLH, OLHReports, default_d_prime
from .oue import OUE, OUEReports
from .hr import HR, HRReports
from .cms import CMS, CMSReports

__all__ = [
    "FrequencyOracle",
    "Reports",
    "ReportsFileError",
    "GRR",
    "GRRReports",
    "OLH",
    "BLH",
    "OLHReports",
    "OUE",
    "OUEReports",
    "HR",
    "HRReports",
    "CMS",
    "CMSReports",
    "load_reports",
    "concat_reports",
    "default_d_prime",
]

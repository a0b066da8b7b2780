"""Questions answered with a frequency oracle other than OLH (HR, Hashtogram, CMS).

:class:`ldp.protocols.Question` always answers with OLH.  :class:`OracleQuestion`
is the same question (same bits, same channel pairing, same answers) answered
with another hashed oracle, named by a short *spec*:

* ``"OLH"`` -- :class:`ldp.OLH` with ``d' = ceil(e^eps + 1)`` (the default);
* ``"HR"`` -- :class:`ldp.HR` (Hadamard response, Acharya et al.'s block rule);
* ``"Hashtogram"`` -- :class:`ldp.HR` with one block (``blocks=1``): the support
  law of the one-bit Hadamard randomizer of Bassily et al.'s Hashtogram;
* ``"CMS"`` -- :class:`ldp.CMS` (Apple's count-mean sketch randomizer).

Every one of these has a value-independent support probability ``q``, so both
engines (:mod:`ldp.engines`) treat them alike: the protocol engine calls the
oracle's ``support``, the count engine draws law 1 with the oracle's ``p`` and
``q``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ._core import Plan, Question, olh_for
from ._result import ProtocolReports

__all__ = ["ORACLES", "OracleQuestion", "make_question", "oracle_for", "check_oracle", "retype_reports"]

#: oracle specs a protocol accepts
ORACLES = ("OLH", "HR", "Hashtogram", "CMS")


def check_oracle(oracle) -> str:
    """A valid oracle spec (case-insensitive), in its canonical spelling."""
    if not isinstance(oracle, str):
        raise TypeError(f"oracle must be one of {ORACLES}, got {oracle!r}")
    for name in ORACLES:
        if oracle.lower() == name.lower():
            return name
    raise ValueError(f"oracle must be one of {ORACLES}, got {oracle!r}")


@lru_cache(maxsize=512)
def oracle_for(spec: str, epsilon: float, width: int):
    """Cached oracle instance for a spec, budget and answer width."""
    if spec == "OLH":
        return olh_for(epsilon, width)
    from ..oracles import CMS, HR

    if spec == "HR":
        return HR(epsilon, m=width)
    if spec == "Hashtogram":
        return HR(epsilon, m=width, blocks=1)
    if spec == "CMS":
        return CMS(epsilon, m=width)
    raise ValueError(f"oracle must be one of {ORACLES}, got {spec!r}")  # pragma: no cover


@dataclass(frozen=True)
class OracleQuestion(Question):
    """A :class:`Question` answered with the oracle named by ``spec``."""

    spec: str = "OLH"

    def oracle(self):
        return oracle_for(self.spec, self.epsilon, self.width)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "oracle": self.spec}


def make_question(start: int, stop: int, epsilon: float, spec: str = "OLH", channels: int = 0,
                  seed: int = 0) -> Question:
    """A plain :class:`Question` for OLH (so PEM-style plans are unchanged), else an :class:`OracleQuestion`."""
    if spec == "OLH":
        return Question(start, stop, epsilon, channels, seed)
    return OracleQuestion(start, stop, epsilon, channels, seed, spec)


def retype_reports(expected: Plan, reports: ProtocolReports) -> ProtocolReports:
    """Give loaded reports the oracle questions of ``expected`` when they are otherwise identical.

    :meth:`ProtocolReports.load` rebuilds plans with plain (OLH) questions; a
    plan saved with :class:`OracleQuestion` s differs from the protocol's only
    in the question type.  The oracle itself is checked later against the
    reports' recorded parameters (``kind``, ``epsilon``, ``m``, ...).
    """
    if not isinstance(reports, ProtocolReports) or reports.plan == expected:
        return reports
    plain = Plan.from_dict(expected.to_dict())
    if plain != reports.plan:
        return reports  # a real mismatch: let the caller's check report it
    return ProtocolReports(reports.protocol, reports.params, expected, reports.labels,
                           [reports.group_reports(g) for g in range(expected.n_groups)])

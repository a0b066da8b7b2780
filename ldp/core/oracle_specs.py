"""Which frequency oracle answers a question: the oracle *specs* a protocol accepts.

A :class:`ldp.core.Question` names its oracle in ``oracle_name`` (default
``"OLH"``); the name is one of these specs:

* ``"OLH"`` -- :class:`ldp.OLH` with ``d' = ceil(e^eps + 1)`` (the paper's choice,
  section 2.2.2);
* ``"HR"`` -- :class:`ldp.HR` (Hadamard response, Acharya et al.'s block rule);
* ``"Hashtogram"`` -- :class:`ldp.HR` with one block (``blocks=1``): the support
  law of the one-bit Hadamard randomizer of Bassily et al.'s Hashtogram;
* ``"CMS"`` -- :class:`ldp.CMS` (Apple's count-mean sketch randomizer);
* ``"FLH"`` -- :class:`ldp.FLH` (fast local hashing: OLH with a public pool of
  ``pool_size`` hash functions, whose ``pool_seed`` the plan draws from its
  public randomness).

OLH, HR, Hashtogram and CMS have a value-independent support probability
``q``, so both engines (:mod:`ldp.engines`) treat them alike: the protocol
engine calls the oracle's ``support``, the count engine draws law 1 with the
oracle's ``p`` and ``q``.  FLH's ``q`` is value-independent only on average over
pools; given the plan's pool the count engine draws its exact law through the
tally of reports (:meth:`ldp.FLH.draw_tally`).  Every one splits its randomness from the values (``draw_noise`` /
``apply_noise``), which is what batch privatization
(:meth:`ldp.protocols.HeavyHitterProtocol.privatize`) needs.

Each spec has a largest budget per report (:func:`report_epsilon_limit`),
from the oracle's real numeric constraint; a protocol multiplies it by its
budget split to get its ``max_epsilon``.
"""
from __future__ import annotations

from ..oracles import CMS, FLH, HR, OLH
from ..oracles.flh import DEFAULT_POOL_SIZE, MAX_POOL_SIZE
from ..oracles.flh import max_epsilon as flh_max_epsilon
from ..oracles.hr import DEFAULT_BLOCK_SIZE
from ..oracles.hr import max_epsilon as hr_max_epsilon
from ..oracles.olh import MAX_EPSILON as OLH_MAX_EPSILON
from ..validation import EXP_MAX_EPSILON, check_int
from .bytecache import ByteCache

__all__ = ["ORACLES", "ORACLE_CACHE_BYTES", "ORACLE_CACHE", "check_oracle", "check_pool_size", "oracle_for",
           "report_epsilon_limit"]

#: oracle specs a protocol accepts
ORACLES = ("OLH", "HR", "Hashtogram", "CMS", "FLH")


def check_oracle(oracle) -> str:
    """A valid oracle spec (case-insensitive), in its canonical spelling.

    Parameters
    ----------
    oracle : str
        One of :data:`ORACLES`, in any letter case.

    Returns
    -------
    str
        The canonical spelling.
    """
    if not isinstance(oracle, str):
        raise TypeError(f"oracle must be one of {ORACLES}, got {oracle!r}")
    for name in ORACLES:
        if oracle.lower() == name.lower():
            return name
    raise ValueError(f"oracle must be one of {ORACLES}, got {oracle!r}")


def check_pool_size(spec: str, pool_size) -> int:
    """The pool size a protocol's reports use: FLH's ``h`` (default :data:`ldp.oracles.flh.DEFAULT_POOL_SIZE`), else 0.

    Parameters
    ----------
    spec : str
        An oracle spec (canonical spelling, :func:`check_oracle`).
    pool_size : int or None
        FLH's pool size, 1 to ``2**24``; must be None for the other oracles.

    Returns
    -------
    int
    """
    if spec != "FLH":
        if pool_size is not None:
            raise ValueError(f"pool_size is FLH's parameter (the number of public hash functions); "
                             f"oracle = {spec!r} takes none")
        return 0
    return DEFAULT_POOL_SIZE if pool_size is None else check_int(pool_size, "pool_size", lo=1, hi=MAX_POOL_SIZE)


#: bytes of oracles :func:`oracle_for` keeps (an FLH oracle weighs its pool, ``8 pool_size`` bytes, built or
#: not; the others a kilobyte): 256 MiB, two of the largest pools
ORACLE_CACHE_BYTES = 2**28
#: the oracles :func:`oracle_for` keeps, least recently used evicted first
ORACLE_CACHE: ByteCache = ByteCache(ORACLE_CACHE_BYTES, lambda o: 1024 + (o.nbytes if isinstance(o, FLH) else 0))


def oracle_for(spec: str, epsilon: float, width: int, pool_size: int = 0, pool_seed: int = 0):
    """The oracle instance of a spec at a budget and answer width (cached: plans reuse a few).

    The cache (:data:`ORACLE_CACHE`) is bounded in bytes (:data:`ORACLE_CACHE_BYTES`),
    not in entries.

    Parameters
    ----------
    spec : str
        One of :data:`ORACLES` (canonical spelling).
    epsilon : float
        Budget of the report.
    width : int
        Bit width of the answers (the oracle's ``m``).
    pool_size, pool_seed : int
        FLH's pool (``h`` and the public seed it expands from); 0 for the others.

    Returns
    -------
    ldp.oracles.FrequencyOracle
    """
    return ORACLE_CACHE.get((spec, epsilon, width, pool_size, pool_seed),
                            lambda: _make_oracle(spec, epsilon, width, pool_size, pool_seed))


def _make_oracle(spec: str, epsilon: float, width: int, pool_size: int, pool_seed: int):
    if spec == "OLH":
        return OLH(epsilon, m=width)
    if spec == "HR":
        return HR(epsilon, m=width)
    if spec == "Hashtogram":
        return HR(epsilon, m=width, blocks=1)
    if spec == "CMS":
        return CMS(epsilon, m=width)
    if spec == "FLH":
        return FLH(epsilon, m=width, pool_size=pool_size, pool_seed=pool_seed)
    raise ValueError(f"oracle must be one of {ORACLES}, got {spec!r}")


def report_epsilon_limit(spec: str, pool_size: int = DEFAULT_POOL_SIZE) -> tuple[float, str]:
    """Largest budget of one report answered with ``spec``, and the constraint it comes from.

    * ``"OLH"``: ``ln(2**31 - 1) = 21.49`` (``d' = ceil(e^eps + 1) <= 2**31``);
    * ``"HR"``: ``26 ln 2 = 18.02`` (default blocks ``2^floor(log2 e^eps)``
      times ``block_size - 1 = 63`` at most ``2**31``, :func:`ldp.oracles.hr.max_epsilon`);
    * ``"Hashtogram"``: ``ln(DBL_MAX / 32) = 706.3`` (``32 e^eps`` a finite double);
    * ``"CMS"``: ``ln(DBL_MAX) = 709.78`` (``e^eps`` a finite double);
    * ``"FLH"``: ``ln(floor(2**24 / h) - 1)`` (the tally of ``h d'`` cells at most
      ``2**24``, :func:`ldp.oracles.flh.max_epsilon`): ``8.32`` for ``h = 4096``.

    Parameters
    ----------
    spec : str
        One of :data:`ORACLES` (canonical spelling).
    pool_size : int
        FLH's ``h`` (ignored by the others).

    Returns
    -------
    limit : float
    why : str
        The constraint, as a sentence for error messages.
    """
    if spec == "OLH":
        return OLH_MAX_EPSILON, (f"OLH's hash range d' = ceil(e^budget + 1) must be at most 2**31, so "
                                 f"budget <= ln(2**31 - 1) = {OLH_MAX_EPSILON:.4f}")
    if spec == "HR":
        lim = hr_max_epsilon(DEFAULT_BLOCK_SIZE, True)
        return lim, (f"HR's hashed domain 2^floor(log2 e^budget) * {DEFAULT_BLOCK_SIZE - 1} must be at most "
                     f"2**31, so budget < 26 ln 2 = {lim:.4f}")
    if spec == "Hashtogram":
        lim = hr_max_epsilon(DEFAULT_BLOCK_SIZE, False)
        return lim, (f"Hashtogram's normaliser {DEFAULT_BLOCK_SIZE // 2} e^budget must be a finite double, so "
                     f"budget <= ln(DBL_MAX / {DEFAULT_BLOCK_SIZE // 2}) = {lim:.4f}")
    if spec == "CMS":
        return EXP_MAX_EPSILON, (f"CMS's e^budget must be a finite double, so budget <= ln(DBL_MAX) = "
                                 f"{EXP_MAX_EPSILON:.4f}")
    if spec == "FLH":
        lim = flh_max_epsilon(pool_size)
        return lim, (f"FLH's tally of pool_size * d' cells, d' = ceil(e^budget + 1), must be at most 2**24, so "
                     f"with pool_size = {pool_size} budget <= {lim:.4f}")
    raise ValueError(f"oracle must be one of {ORACLES}, got {spec!r}")

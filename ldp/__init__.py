"""ldp: locally differentially private heavy-hitter identification.

A reproduction of Wang, Li and Jha, *Locally Differentially Private Heavy
Hitter Identification*: frequency oracles (GRR, OLH, OUE, BLH), the heavy
hitter protocols PEM, SPM, MCM and the strawman, each runnable as a real
client/server protocol or with a count-level engine, and the paper's analysis.

Layout (reads like the paper): ``values`` (m-bit strings) -> ``oracles`` ->
``protocols`` -> ``engines`` -> ``analysis`` -> ``metrics`` -> ``datasets`` ->
``experiments`` -> ``plotting``.
"""
from importlib import import_module

from .paths import configure_numba_cache as _configure_numba_cache
from .values import decode, encode

_configure_numba_cache()  # an installed package keeps numba's kernel cache out of site-packages

__version__ = "0.1.0"

# public name -> module that defines it (imported on first use)
_LAZY = {
    "GRR": "ldp.oracles",
    "OLH": "ldp.oracles",
    "OUE": "ldp.oracles",
    "BLH": "ldp.oracles",
    "HR": "ldp.oracles",
    "CMS": "ldp.oracles",
    "PEM": "ldp.protocols",
    "SPM": "ldp.protocols",
    "MCM": "ldp.protocols",
    "Strawman": "ldp.protocols",
    "TreeHist": "ldp.protocols",
    "SFP": "ldp.protocols",
}
_SUBMODULES = {"values", "validation", "oracles", "protocols", "engines", "analysis", "metrics",
               "datasets", "experiments", "plotting"}

__all__ = ["encode", "decode", "__version__", *_LAZY, *sorted(_SUBMODULES)]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return import_module(f"ldp.{name}")
    raise AttributeError(f"module 'ldp' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

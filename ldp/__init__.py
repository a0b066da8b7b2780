"""ldp: locally differentially private heavy-hitter identification.

A reproduction of Wang, Li and Jha, *Locally Differentially Private Heavy
Hitter Identification*: frequency oracles (GRR, OLH, OUE, BLH), the heavy
hitter protocols PEM, SPM, MCM and the strawman, each runnable as a real
client/server protocol or with a count-level engine, and the paper's analysis.

The layer contract
------------------
The package is built in layers; a module imports only from its own layer or
lower ones, never upwards, at module level or inside a function.  The library
is L0 to L7: what a user of ``ldp`` imports to run the protocols.  Above it,
:mod:`ldp.book` holds the book's code (claims, chapters, report, reruns: L8 to
L10, see its docstring); the library never imports it.

====  ======================================================================
L11   ``__main__``: the command line (``python -m ldp rerun|report|kernel``)
L8+   ``book``: the Jupyter Book's code: L8 ``book.claims``, ``book.plotting``;
      L9 ``book.chapters`` (one package per chapter: what it computes, draws
      and claims; the claims registry); L10 ``book.glue``, ``book.pages``,
      ``book.answer``, ``book.report``,
      ``book.rerun``
L7    ``experiments``: grids of runs (protocol x dataset x parameters) with
      seeds from the points' content, run in parallel, cached, summarised
L6    ``attacks``: fake users' reports (input manipulation, random
      perturbed values, maximal gain), how many it takes to plant a value,
      and the server's checks; ``datasets``: synthetic (Zipf, exponential),
      URL and AOL data (the two import neither each other)
L5    ``protocols``: PEM, SPM, MCM, strawman, TreeHist, SFP on one base
L4    ``client``: the user's device (a value and OS randomness in, wire
      bytes out) and the wire format a server checks; ``engines``: where
      the support counts come from (reports in memory, streamed from a
      report store or counted on a dask cluster, or counts)
L3    ``core``: question and plan, candidates, selection, results, the
      ``Dataset`` tally type, protocol reports in memory and on disk
L2    ``analysis``: the model of section 4.2, the optimizer of section 4.3,
      the appendix, the Monte Carlo of the section 4.2.3 model
L1    ``oracles``: GRR, OLH (and BLH), OUE, HR, CMS, FLH, their p, q, d' and
      variance formulas (eqs. (1) and (3)) and kernels
L0    ``values``, ``validation``, ``paths``, ``numeric``, ``randomness``,
      ``reportfile``, ``safefiles``, ``metrics``: m-bit values, argument
      checks, folders and the atomic writer, coin sources (seeded simulation
      or the OS's CSPRNG), the reports file format, reading untrusted files
      (regular files only, bounded JSON), the F1, NCR and squared-error metrics
====  ======================================================================

Besides the order: no import cycle between sibling modules anywhere; no
module imports another module's private name (``from .x import _y``), and a
private module is used only inside its own subpackage; each oracle (``grr``,
``olh``, ``oue``, ``hr``, ``cms``, ``flh``) and each protocol (``pem``, ``spm``,
``mcm``, ``strawman``, ``treehist``, ``sfp``) imports none of its peers; a
chapter imports earlier chapters only; the library (L0 to L7) imports no
drawing or notebook machinery (matplotlib, IPython, papermill, nbformat,
myst-nb); an upper layer's types are never duck-typed below
(``hasattr(x, "user_index")``): a lower layer imports the type it needs.  The
contracts are ``[tool.importlinter]`` in ``pyproject.toml``, checked by
``make lint`` (part of ``make test``) and by ``tests/test_layers.py``.
"""
from importlib import import_module

from .paths import configure_numba_cache as _configure_numba_cache
from .values import decode, encode

_configure_numba_cache()  # an installed package keeps numba's kernel cache out of site-packages

#: the package's version: the same in pyproject.toml, CITATION.cff, .zenodo.json and CHANGELOG.md
__version__ = "0.2.0"

# public name -> module that defines it (imported on first use)
_LAZY = {
    "GRR": "ldp.oracles",
    "OLH": "ldp.oracles",
    "OUE": "ldp.oracles",
    "BLH": "ldp.oracles",
    "HR": "ldp.oracles",
    "CMS": "ldp.oracles",
    "FLH": "ldp.oracles",
    "PEM": "ldp.protocols",
    "SPM": "ldp.protocols",
    "MCM": "ldp.protocols",
    "Strawman": "ldp.protocols",
    "TreeHist": "ldp.protocols",
    "SFP": "ldp.protocols",
}
_SUBMODULES = {"values", "validation", "randomness", "oracles", "analysis", "core", "client", "engines",
               "protocols", "metrics", "attacks", "datasets", "experiments", "book"}

__all__ = ["encode", "decode", "__version__", *_LAZY, *sorted(_SUBMODULES)]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return import_module(f"ldp.{name}")
    raise AttributeError(f"module 'ldp' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

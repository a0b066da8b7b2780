"""Core types shared by the engines and the protocols (layer above oracles and analysis).

* :class:`Dataset` -- users' values with their true tally and ranking.
"""
from .dataset import Dataset

__all__ = ["Dataset"]

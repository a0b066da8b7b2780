"""Section 5 (validation of the analysis): the default settings of its three figures.

The text and the captions of section 5 differ in one place (the population of
Figure 2); :func:`validation_setting` gives either reading.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", section 5 (Figures 2, 3 and 4).
"""
from __future__ import annotations

from .config import pem_config

__all__ = ["validation_setting"]


def validation_setting(figure: str, *, reading: str = "caption") -> dict:
    """Default parameters of the section 5 validation figures.

    Parameters
    ----------
    figure : {"identification", "configurations", "optimal"}
        Figure 2 (section 5.1), Figure 3 (section 5.2) or Figure 4 (section 5.3).
    reading : {"caption", "text"}
        Section 5.1's text says ``n = 100000`` while the caption of Figure 2
        says ``n = 1000000``; the other figures agree.

    Returns
    -------
    dict
        ``n, m, epsilon, k`` and, where the paper fixes it, ``config``
        (a :class:`ldp.analysis.PEMConfig`) and ``zipf_exponent`` of the data (1.5).
    """
    if reading not in ("caption", "text"):
        raise ValueError(f"reading must be 'caption' or 'text', got {reading!r}")
    if figure == "identification":
        n = 1_000_000 if reading == "caption" else 100_000
        return dict(n=n, m=64, epsilon=1.0, k=32, zipf_exponent=1.5,
                    config=pem_config(32, 64, gamma=5, eta=10, cand_sizes=(32,) * 6))
    if figure == "configurations":
        return dict(n=100_000, m=16, epsilon=1.0, k=16, zipf_exponent=1.5, gamma=4)
    if figure == "optimal":
        return dict(n=1_000_000, m=64, epsilon=1.0, k=32, zipf_exponent=1.5, target="f1")
    raise ValueError(f"figure must be 'identification', 'configurations' or 'optimal', got {figure!r}")

"""Result tables for the page: compact number formats, flat headers, no ``nan``.

A chapter shows a results frame through :func:`compact_table` (or
:func:`table_view`, which first turns named index levels into columns), a pandas
``Styler`` that prints every number to a few significant digits without
scientific notation unless it is very large or small, integers with thousands
separators, missing values as a dash, and the index only when asked; :func:`share` and
:func:`compress` write a report's budget (``ε/3``) and a list of sizes (``65,536 ×2 + 1,536``).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

__all__ = ["format_number", "compact_table", "table_view", "TABLE_CSS", "share", "compress"]

#: cell padding of a compact table (the book's default CSS leaves none between numbers)
TABLE_CSS = [{"selector": "th, td", "props": [("padding", "2px 8px")]},
             {"selector": "caption", "props": [("caption-side", "top"), ("text-align", "left")]}]


def format_number(value, digits: int = 3) -> str:
    """``value`` as the page shows it: ``digits`` significant digits, ``1,234`` for integers, ``–`` for NaN.

    Floats between ``1e-4`` and ``1e7`` in magnitude are printed in fixed
    notation (``0.000123``, ``4,222.6`` -> ``4,223``), others in scientific
    notation (``3.16e+07``); booleans and strings unchanged.
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,d}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return "–"
        if v == 0:
            return "0"
        if 1e-4 <= abs(v) < 1e7:
            decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
            return f"{v:,.{decimals}f}"
        return f"{v:.{digits - 1}e}"
    return str(value)


def compact_table(frame: pd.DataFrame, *, digits: int = 3, index: bool = False, caption: str | None = None):
    """A ``Styler`` of ``frame`` for the page (see :func:`format_number`); a MultiIndex header is flattened.

    Parameters
    ----------
    frame : pandas.DataFrame
    digits : int
        Significant digits of the floats.
    index : bool
        Show the index (default: hidden; put identifying columns first instead).
    caption : str, optional
        A caption above the table.
    """
    out = frame.copy()
    if isinstance(out.columns, pd.MultiIndex):
        out.columns = [" ".join(str(x) for x in col if str(x)) for col in out.columns]
    style = out.style.format(lambda v: format_number(v, digits)).set_table_styles(TABLE_CSS)
    if not index:
        style = style.hide(axis="index")
    if caption:
        style = style.set_caption(caption)
    return style


def table_view(frame: pd.DataFrame, *, digits: int = 3):
    """:func:`compact_table` of ``frame`` with its named index levels as columns (no empty header rows)."""
    flat = frame.reset_index() if any(name is not None for name in frame.index.names) else frame
    return compact_table(flat.rename_axis(columns=None), digits=digits)


def share(eps_q: float, eps: float) -> str:
    """A report's budget as a share of the user's budget, e.g. ``'ε/3'``."""
    f = Fraction(eps_q / eps).limit_denominator(12)
    return "ε" if f == 1 else (f"ε/{f.denominator}" if f.numerator == 1 else f"{f}ε")



def compress(xs) -> str:
    """``[65536, 65536, 1536]`` -> ``'65,536 ×2 + 1,536'``."""
    parts, i = [], 0
    while i < len(xs):
        j = i
        while j < len(xs) and xs[j] == xs[i]:
            j += 1
        parts.append(f"{xs[i]:,}" + (f" ×{j - i}" if j - i > 1 else ""))
        i = j
    return " + ".join(parts)


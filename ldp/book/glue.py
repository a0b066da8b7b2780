"""What a chapter notebook needs from the book machinery: one call to glue its numbers, one for its claims.

A chapter computes its results with the library, collects the values its prose
and captions quote in one mapping (a results object), and glues them with one
call, :func:`glue_all`, at the end of a cell (usually tagged ``remove-cell``).
The book's markdown then cites them as ``{glue:text}`name` `` (numbers, with an
optional format) or ``{glue:md}`name` `` (sentences).

A sentence about one of the paper's claims never types its verdict: the chapter
adds :func:`claim_values` (the claims registry's decision on every claim it
measures, its verdict and the numbers that decided it) to what it glues.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

__all__ = ["glue_all", "claim_values", "claim_key", "ChapterClock"]


def glue_all(values: Mapping[str, Any], *, prefix: str = "") -> list[str]:
    """Glue every ``name: value`` of ``values`` into the running notebook (myst-nb), without displaying it.

    Parameters
    ----------
    values : mapping of str to object
        The numbers and sentences the chapter's text quotes: numbers stay numbers
        (the markdown formats them, ``{glue:text}`name:.3f` ``), sentences are
        strings (numpy scalars become Python numbers).  ``None`` or a float NaN is
        refused: prose must never print ``nan``; glue a sentence that says what is missing instead.
    prefix : str
        Prepended to every name (e.g. ``"fig5_"``).

    Returns
    -------
    list of str
        The glued names, in the given order.

    Raises
    ------
    ValueError
        If a name is empty or not an identifier-like string, or a value is None/NaN.
    """
    from myst_nb import glue  # the book's notebook layer; imported on use so the library runs without it

    bad = [k for k, v in values.items() if v is None or (isinstance(v, float) and v != v)]
    if bad:
        raise ValueError(f"glue_all: values {bad} are None or NaN; glue a sentence saying the input is missing")
    names = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        if type(value).__module__ == "numpy":  # a numpy scalar: glue the Python number (its repr is np.float64(...))
            value = value.item()
        if not isinstance(key, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"glue_all: name {name!r} must be letters, digits, '_' or '-'")
        glue(name, value, display=False)
        names.append(name)
    return names


def claim_key(claim_id: str) -> str:
    """The glue names' stem of a claim: ``"fig5-pem-best"`` -> ``"claim_fig5_pem_best"``."""
    return "claim_" + claim_id.replace("-", "_")


def claim_values(chapter: str, store=None) -> dict[str, Any]:
    """The registry's decision on every claim ``chapter`` measures, as values to glue.

    Each claim is evaluated by :func:`ldp.book.claims.evaluate_claim`, against the
    results this run saved (``store``, default
    :meth:`ldp.book.claims.ResultStore.from_environment`), exactly as the
    reproduction report evaluates it.  Call it once the chapter has saved every
    figure and table (its last cell).

    Returns
    -------
    dict
        For claim ``fig5-pem-best`` (stem :func:`claim_key`): ``claim_fig5_pem_best_verdict``
        (one of :data:`ldp.book.claims.VERDICTS`), ``..._measured`` (what was measured, in
        words), ``..._explanation`` (why this verdict), and one value per number its rule
        decided on (``..._holds``, ``..._points``, ``..._max_abs_z``, ...; NaN ones left out).
    """
    from .chapters import REGISTRY  # the registry and the report sit below this module
    from .claims import ResultStore, evaluate_claim

    store = ResultStore.from_environment() if store is None else store
    out: dict[str, Any] = {}
    for claim in REGISTRY.claims:
        if claim.chapter != chapter:
            continue
        row, key = evaluate_claim(claim, store), claim_key(claim.id)
        out |= {f"{key}_verdict": row["verdict"], f"{key}_measured": row["measured"] or "not measured",
                f"{key}_explanation": row["explanation"]}
        for name, value in row["numbers"].items():
            value = value.item() if hasattr(value, "item") else value
            if isinstance(value, (int, float, str)) and value == value:
                out[f"{key}_{name}"] = value
    if not out:
        raise ValueError(f"no claim of the registry is measured in chapter {chapter!r}")
    return out


#: which settings a chapter ran with, by its ``quick`` parameter: how its opening's "Executing this chapter took" ends
SETTINGS_NOTE = {True: "in this quick build (small settings, not the paper's)", False: "with the paper's settings"}


class ChapterClock:
    """The chapter's wall time, started in its first code cell and glued in its last.

    >>> clock = ChapterClock()          # first code cell
    >>> clock.text()                    # doctest: +SKIP
    '12 s'
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()

    def seconds(self) -> float:
        """Seconds since the clock started."""
        return time.perf_counter() - self._t0

    def text(self, *, quick: bool | None = None) -> str:
        """The elapsed time as the chapter openings print it: ``"12 s"`` or ``"3.4 min"``.

        Parameters
        ----------
        quick : bool, optional, keyword-only
            The chapter's ``quick`` parameter: when given, the text goes on to say which settings ran
            (:data:`SETTINGS_NOTE`), ``"12 s in this quick build (small settings, not the paper's)"``.
        """
        s = self.seconds()
        text = f"{s:,.0f} s" if s < 120 else f"{s / 60:.1f} min"
        return text if quick is None else f"{text} {SETTINGS_NOTE[bool(quick)]}"

"""What a chapter notebook needs from the book machinery: one call to glue its numbers.

A chapter computes its results with the library, collects the values its prose
and captions quote in one mapping (a results object), and glues them with one
call, :func:`glue_all`, at the end of a cell (usually tagged ``remove-cell``).
The book's markdown then cites them as ``{glue:text}`name` `` (numbers, with an
optional format) or ``{glue:md}`name` `` (sentences).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

__all__ = ["glue_all", "ChapterClock"]


def glue_all(values: Mapping[str, Any], *, prefix: str = "") -> list[str]:
    """Glue every ``name: value`` of ``values`` into the running notebook (myst-nb), without displaying it.

    Parameters
    ----------
    values : mapping of str to object
        The numbers and sentences the chapter's text quotes: numbers stay numbers
        (the markdown formats them, ``{glue:text}`name:.3f` ``), sentences are
        strings.  ``None`` or a float NaN is refused: prose must never print
        ``nan``; glue a sentence that says what is missing instead.
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
        if not isinstance(key, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"glue_all: name {name!r} must be letters, digits, '_' or '-'")
        glue(name, value, display=False)
        names.append(name)
    return names


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

    def text(self) -> str:
        """The elapsed time as the chapter openings print it: ``"12 s"`` or ``"3.4 min"``."""
        s = self.seconds()
        return f"{s:,.0f} s" if s < 120 else f"{s / 60:.1f} min"

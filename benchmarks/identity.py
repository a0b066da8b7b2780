"""Record a computation's outputs, or compare them with a recording, exactly: the shared step of the
``check_identical_*.py`` scripts (run one before a change with ``--record``, after it with ``--compare``)."""
from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping

import numpy as np


def same(a, b) -> bool:
    """Whether ``a`` and ``b`` are equal, nested dicts and sequences followed, arrays in dtype, shape and bits."""
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())
    return bool(a == b)


def record_or_compare(compute: Callable[[], dict], *, record: str | None, compare: str | None,
                      unit: str = "outputs") -> int:
    """Pickle ``compute()`` (a dict) to ``record``; and/or compare it with the dict pickled in ``compare``.

    Returns 0, or 1 when a key's value differs (:func:`same`) or the keys differ; prints how many were compared.
    """
    if record:
        with open(record, "wb") as f:
            pickle.dump(compute(), f)
    if not compare:
        return 0
    with open(compare, "rb") as f:
        ref = pickle.load(f)
    now = compute()
    bad = [k for k in ref if k not in now or not same(ref[k], now[k])]
    print(f"{len(ref)} {unit} compared, {len(bad)} differ" + "".join(f"\n  {k}" for k in bad[:20]))
    return 1 if bad or ref.keys() != now.keys() else 0

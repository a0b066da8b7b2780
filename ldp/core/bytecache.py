"""A least-recently-used memo bounded in bytes, not in entries.

``functools.lru_cache(maxsize=512)`` bounds the number of entries, so its
memory is whatever the entries weigh: 512 FLH oracles with pools of ``2**22``
functions held 16 GiB.  :class:`ByteCache` counts what each entry weighs (a
function of the value given by the caller, taken when the entry is stored and
again when it is used: an oracle's pool is built lazily) and evicts the least
recently used entries until the total is within the budget; an entry heavier
than the whole budget is returned uncached.  The weight is taken once, when
the entry is stored, so it must bound what the value may come to hold (an
FLH oracle's pool, built on first use, counts from the start).  Thread-safe.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ByteCache"]

V = TypeVar("V")


class ByteCache(Generic[V]):
    """Values by key, at most ``limit`` bytes of them (``weigh(value)`` each), least recently used evicted first.

    Parameters
    ----------
    limit : int
        The budget in bytes.
    weigh : callable
        Bytes of a value: what it holds or may come to hold.
    """

    def __init__(self, limit: int, weigh: Callable[[V], int]):
        self.limit = int(limit)
        self._weigh = weigh
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value of ``key``, made by ``make()`` (outside the lock) when it is not held."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
        value = make()
        size = int(self._weigh(value))
        if size > self.limit:
            return value
        with self._lock:
            if key in self._items:  # another thread made it meanwhile: keep the first
                self._items.move_to_end(key)
                return self._items[key][0]
            self._items[key] = (value, size)
            self.nbytes += size
            self._evict()
        return value

    def _evict(self) -> None:
        while self.nbytes > self.limit and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self.nbytes -= size

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()
            self.nbytes = 0

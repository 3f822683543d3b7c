"""The in-memory side of the semantic lookup: stored question vectors as a matrix.

Kept apart from the SQLite backend because it is pure numpy bookkeeping (growth,
masking of deleted rows, normalisation) with no knowledge of where rows come
from; the backend decides what to load and when.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


class Matrix:
    """One scope's stored vectors of one dimension, as loaded by this instance.

    Rows only ever get appended (a replaced entry gets a new id), so new entries
    are picked up with an ``id > max_id`` range query instead of a reload, into
    buffers that double: a store-then-lookup cycle does not copy the matrix. Rows
    deleted by anyone stay until they come up as a candidate, are found missing
    and masked; they cost a little arithmetic meanwhile, and a reload once the
    matrix has doubled since the last full load bounds them.
    """

    def __init__(self, dim: int) -> None:
        self.size = 0
        self.loaded = 0  # rows at the last full load
        self.max_id = -1
        self._ids = np.zeros(0, dtype=np.int64)
        self._rows = np.zeros((0, dim), dtype=np.float32)
        self._dead = np.zeros(0, dtype=np.bool_)

    @property
    def ids(self) -> npt.NDArray[np.int64]:
        return self._ids[: self.size]

    @property
    def rows(self) -> npt.NDArray[np.float32]:
        return self._rows[: self.size]

    @property
    def dead(self) -> npt.NDArray[np.bool_]:
        return self._dead[: self.size]

    def append(self, ids: npt.NDArray[np.int64], rows: npt.NDArray[np.float32]) -> None:
        end = self.size + len(ids)
        if end > len(self._ids):
            capacity = max(end, 2 * len(self._ids), 64)
            self._ids = _grown(self._ids, self.size, capacity)
            self._rows = _grown(self._rows, self.size, capacity)
            self._dead = _grown(self._dead, self.size, capacity)
        self._ids[self.size : end] = ids
        self._rows[self.size : end] = rows
        self._dead[self.size : end] = False
        self.size = end
        if len(ids):
            self.max_id = int(ids[-1])

    def mark_dead(self, entry_ids: list[int]) -> None:
        self._dead[: self.size] |= np.isin(self.ids, entry_ids)

    def matches(self, query: npt.NDArray[np.float32], threshold: float) -> list[tuple[int, float]]:
        """Ids of the live rows whose cosine with unit ``query`` is at least ``threshold``,
        best first, with their scores."""
        if self.size == 0:
            return []
        scores = self.rows @ query
        scores[self.dead] = -np.inf
        above = np.flatnonzero(scores >= threshold)
        best = above[np.argsort(-scores[above], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in best]


def unit_vector(vector: npt.NDArray[Any] | None) -> npt.NDArray[np.float32] | None:
    """``vector`` as a flat unit-length float32 row, or None if absent or all zero.

    Embedders already normalise; doing it again keeps a dot product a cosine for
    any caller, and accepts both the (dim,) and the (1, dim) shape.
    """
    if vector is None:
        return None
    flat = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(flat))
    if flat.size == 0 or not np.isfinite(norm) or norm == 0.0:
        return None
    unit: npt.NDArray[np.float32] = (flat / norm).astype(np.float32)
    return unit


def _grown(array: npt.NDArray[Any], size: int, capacity: int) -> npt.NDArray[Any]:
    grown: npt.NDArray[Any] = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:size] = array[:size]
    return grown

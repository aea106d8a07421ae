"""Set operations on int64 NumPy arrays that the KG algorithms share: sorted distinct values and membership in a
sorted array, without NumPy's hash-table path (slow on large int64 arrays)."""

from __future__ import annotations

import numpy as np

__all__ = ["DENSE_SLACK", "in_sorted", "sorted_unique"]

#: Integer values spanning at most this many slots more than 4x their count are handled with a lookup table
#: (linear time) instead of a sort; entity ids of a warehouse are dense, so id arrays usually qualify.
DENSE_SLACK = 1 << 16


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.unique without its hash-table path, which is slow on large int64 arrays)."""
    values = np.asarray(values, dtype=np.int64).ravel()
    if len(values) == 0:
        return values
    low = int(values.min())
    span = int(values.max()) - low + 1
    if span <= 4 * len(values) + DENSE_SLACK:
        present = np.zeros(span, dtype=bool)
        present[values - low] = True
        return np.flatnonzero(present) + low
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def in_sorted(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A mask over ``keys``: which of them are in the sorted array ``sorted_keys``."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[pos] == keys

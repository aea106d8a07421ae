"""Standard splits of a benchmark KG (train / valid / test): which of them a load left out.

A KG released in splits (FB15k-237, CoDEx, YAGO3-10, WN18RR) states its facts across all of them; a check that a
triple is false against the train split alone lets through facts of valid and test (on FB15k-237 train, about 1%
of verified negatives are true in valid or test). :func:`missing_splits` names the split files beside the loaded
ones that were not loaded, so a caller can warn before verifying against part of the KG.

    >>> missing_splits(["/data/fb15k-237/train.txt"])  # valid.txt and test.txt exist beside it
    ['/data/fb15k-237/test.txt', '/data/fb15k-237/valid.txt']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SPLITS", "missing_splits", "snapshot_sources"]

#: The names a split file may have (before its extensions).
SPLITS: dict[str, tuple[str, ...]] = {"train": ("train",), "valid": ("valid", "validation", "dev"), "test": ("test",)}
_SPLIT_NAME = re.compile(r"^(?P<prefix>.*?)(?P<split>train|valid|validation|dev|test)(?P<suffix>(?:\.[A-Za-z0-9]+)*)$")


def missing_splits(sources: Iterable[str | Path]) -> list[str]:
    """The split files that exist beside a loaded split file (same folder, same prefix and extensions, e.g.
    ``codex-m-train.tsv`` -> ``codex-m-valid.tsv``; a gzipped sibling counts) and were not among ``sources``;
    sorted. Empty when no loaded file is named as a split."""
    loaded = {Path(s).resolve() for s in sources}
    missing: set[str] = set()
    for path in loaded:
        m = _SPLIT_NAME.match(path.name)
        if not m:
            continue
        suffix = m.group("suffix")
        bare = suffix[:-3] if suffix.endswith(".gz") else suffix
        for split, names in SPLITS.items():
            candidates = [path.with_name(f"{m.group('prefix')}{n}{ext}") for n in names for ext in (bare, bare + ".gz")]
            present = [c for c in candidates if c.is_file()]
            if present and not any(c.resolve() in loaded for c in present):
                missing.add(str(present[0]))
    return sorted(missing)


def snapshot_sources(con, snapshot_id: str | None = None) -> list[str]:
    """The input files recorded for the KG's snapshot (every snapshot when ``snapshot_id`` is None) in the
    ``snapshots`` table ``con`` reads; empty when there is none."""
    try:
        rows = con.execute("SELECT snapshot_id, source FROM snapshots").fetchall()
    except Exception:  # a KG built by hand has no snapshots table
        return []
    out: list[str] = []
    for sid, source in rows:
        if snapshot_id and sid != snapshot_id:
            continue
        try:
            value = json.loads(source)
        except (TypeError, ValueError):
            value = source
        out.extend(str(v) for v in (value if isinstance(value, list) else [value]))
    return out

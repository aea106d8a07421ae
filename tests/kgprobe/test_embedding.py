"""The offline embedder: bundled all-MiniLM-L6-v2, unit vectors, cached per text."""

from __future__ import annotations

import numpy as np
import pytest

from kgprobe.embedding import Embedder, cosine_matrix


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_vectors_are_unit_length_and_meaning_ranks_above_chance(embedder: Embedder) -> None:
    sims = embedder.similarity(["spouse of", "located in"], ["married to", "situated in", "born on"])
    assert sims.shape == (2, 3)
    assert sims[0, 0] > sims[0, 2] and sims[1, 1] > sims[1, 2]
    norms = np.linalg.norm(embedder.embed(["Paris", "Vienna"]), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_cache_avoids_re_encoding_and_round_trips_to_disk(embedder: Embedder, tmp_path) -> None:
    before = embedder.encoded
    embedder.embed(["a text seen once", "a text seen once", "another"])
    assert embedder.encoded - before == 2  # duplicates within a call are encoded once
    embedder.embed(["another"])
    assert embedder.encoded - before == 2
    path = embedder.save(tmp_path / "cache.npz")
    fresh = Embedder()
    assert fresh.load_cache(path) >= 2
    assert np.allclose(fresh.embed(["another"]), embedder.embed(["another"]))
    assert fresh.encoded == 0  # served from the loaded cache, the model never loaded


def test_empty_inputs() -> None:
    assert Embedder().embed([]).shape == (0, 384)
    assert cosine_matrix(np.zeros((0, 4)), np.ones((2, 4))).shape == (0, 2)


def _save_many(path: str, worker: int, rounds: int) -> None:
    e = Embedder()
    for i in range(rounds):
        e._cache[f"w{worker}-{i}"] = np.full(384, worker + i / 1000, np.float32)
        e.save(path)


def test_concurrent_saves_from_several_processes_lose_no_vector(tmp_path) -> None:
    import multiprocessing

    path = tmp_path / "shared.npz"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_save_many, args=(str(path), w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    fresh = Embedder()
    assert fresh.load_cache(path) == 100  # every worker's every vector, whichever save came last
    assert float(fresh._cache["w3-24"][0]) == pytest.approx(3.024)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp.npz")]

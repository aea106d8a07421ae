"""The triple scorer s_G(h, r, t): a link-prediction model trained on the KG, with outputs in [0, 1].

OKGQA-P needs a plausibility score for any triple of the KG's id space: ATS (the aggregated triple score of a
perturbed subgraph) is the mean of s_G over its triples, and relation replacement (RR) swaps each chosen edge's
relation for the one s_G finds least plausible. This module trains a KG embedding model for that with PyTorch
(DistMult, or ComplEx) and keeps the trained weights as plain numpy arrays, so that scoring needs no torch:

    >>> scorer = train_scorer(train, num_entities, num_relations, TrainConfig(), log=print)
    >>> scorer.score([h], [r], [t])              # array([0.93...])
    >>> evaluate(scorer, test, all_known)        # {'mrr': 0.27..., 'hits@10': 0.45..., ...}

Training is ``balanced`` by default, the objective of the OKGQA authors' s_G: binary cross-entropy of every
training triple (target 1) against as many uniformly random (h, r, t) triples (target 0, drawn afresh each step; a
draw that is a training triple is left out), the two classes weighted equally. s_G is then the probability that a
triple is a KG triple rather than a random one at 1:1 odds, the scale of the authors' ``comprehensive_metrics.csv``:
a KG's own triples score about 0.98 and ATS falls from there as perturbations replace them (the authors fit
DistilBERT on the triples' text; kgprobe fits the embedding model below). ``training="1-N"`` is the stricter link
predictor ("KvsAll", as in Dettmers et al.'s ConvE paper): every (head, relation) query of the training set is
scored against all entities at once and fitted with binary cross-entropy to the multi-hot vector of its known tails
(optionally label-smoothed), so s_G is the probability of one answer among all entities (a true triple of the
bundled sample scores about 0.18, ATS of the clean sample 0.22) and its ranks give the better MRR.
``training="negative-sampling"`` fits each training triple against ``negatives`` uniformly corrupted tails (lighter
on memory than 1-N for very large KGs, slower to converge). A per-entity bias absorbs each entity's popularity.
Reciprocal relations (``r + R`` for ``r^-1``) turn head prediction into tail prediction, so every triple trains
both directions. s_G is the sigmoid of the model's logit; with reciprocal relations that logit is the mean of the
forward (h, r, ?) and backward (?, r, t) logits, so one triple gets one score whichever direction it is asked in.

A trained scorer is saved as a versioned artifact (a folder: ``weights.npz`` and ``scorer.json`` with the
training config, seed, entity and relation counts, kgprobe version and a SHA-256 content hash of all of it),
and :func:`evaluate` gives the standard filtered MRR and Hits@k over head and tail prediction.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy.special import expit

from kgprobe.errors import KGProbeError

__all__ = [
    "FORMAT_VERSION",
    "MODELS",
    "TRAININGS",
    "ScorerError",
    "TrainConfig",
    "TripleScorer",
    "evaluate",
    "train_scorer",
    "train_scorer_on",
]

#: Embedding models :func:`train_scorer` can fit.
MODELS: tuple[str, ...] = ("distmult", "complex")
#: Training objectives: true triples against as many random triples (the default, the OKGQA authors'), 1-N scoring
#: with BCE against all entities, or BCE against sampled negative tails.
TRAININGS: tuple[str, ...] = ("balanced", "1-N", "negative-sampling")
#: Optimisers: Adam on the rows a step touches (the default: a step costs the batch, not the entity table) or Adam
#: on every row at every step (torch's dense Adam, the weights of kgprobe before 0.4 and of most KGE code).
OPTIMIZERS: tuple[str, ...] = ("lazy-adam", "adam")
#: Version of the saved artifact's layout; :meth:`TripleScorer.load` refuses other versions.
FORMAT_VERSION = 1

_FORMAT_NAME = "kgprobe.triple_scorer"
_WEIGHTS = "weights.npz"
_META = "scorer.json"
# Rows per inference block: small (rows x dim) temporaries stay in cache and in malloc's reused memory; large ones
# cost a page fault per 4 KiB on every call, which made scoring several times slower.
_ROWS = 1024
# Rows per matrix product against all relations: BLAS calls below a few thousand rows are mostly overhead.
_MATMUL_ROWS = 4096

EpochLog = Callable[[int, float, float], object]


class ScorerError(KGProbeError):
    """A scorer input is unusable: a bad config value, ids outside the model, a missing or tampered artifact."""


@dataclass(frozen=True)
class TrainConfig:
    """How :func:`train_scorer` fits s_G. The defaults train on FB15k-237 in about three CPU-minutes.

    ``dim``, ``lr``, ``dropout`` and ``epochs`` are tuned for ``1-N`` on FB15k-237's validation set: filtered MRR
    rises to about 0.24 by epoch 6-8 and falls after (DistMult starts to memorise the training triples), so
    ``epochs`` is 7. A KG of a few thousand triples gets only a few dozen steps per epoch: give it more epochs (the
    bundled sample trains 40). CPU training is bit-for-bit deterministic for a given seed (``lazy-adam`` trains on one
    thread; ``adam`` and ``1-N`` for a given seed and thread count).
    """

    model: str = "distmult"
    """The embedding model: ``distmult`` or ``complex``."""
    dim: int = 200
    """Embedding dimension (``complex``: the complex dimension, 2 * dim reals per embedding)."""
    epochs: int = 7
    """Passes over the training triples."""
    batch_size: int = 256
    """Examples per optimiser step: true triples with ``balanced``, (head, relation) queries with ``1-N``, triples
    with ``negative-sampling``."""
    lr: float = 0.01
    """Adam's learning rate."""
    optimizer: str = "lazy-adam"
    """``lazy-adam`` (the default: Adam's moments and update for the entity rows a step's triples name only, as
    torch's ``SparseAdam``; a step costs the batch, so an epoch is linear in the training triples however many
    entities there are) or ``adam`` (torch's dense Adam: every entity row moves at every step by its decaying
    momentum, so a step costs the whole entity table and an epoch triples x entities). Relations always use dense
    Adam (there are few). ``1-N`` scores every entity at every step, so it always uses dense Adam."""
    training: str = "balanced"
    """``balanced`` (the default: BCE of each training triple against one uniformly random (head, relation, tail)
    triple, the classes weighted equally, as the OKGQA authors train their s_G; ``batch_size`` counts true
    triples, ``negatives`` is not read), ``1-N`` (BCE of each (head, relation) query against all entities) or
    ``negative-sampling`` (BCE of each triple against ``negatives`` random tails; lighter on memory for very large
    KGs)."""
    negatives: int = 64
    """Random tails per triple with ``negative-sampling`` (not read by the other objectives)."""
    regularisation: float = 0.0
    """L2 weight on the embeddings a batch touches."""
    label_smoothing: float = 0.0
    """ConvE-style smoothing of the 1-N targets, in [0, 1)."""
    dropout: float = 0.2
    """Dropout on the query vector (h * r) before it meets the candidate entities, in [0, 1)."""
    reciprocal: bool = True
    """Add an inverse relation per relation, for head prediction."""
    seed: int = 0
    """Seed of the initialisation, the batch order and the negatives."""
    device: str = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu`` or ``cuda``."""

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ScorerError(f"TrainConfig.model must be one of {MODELS}, got {self.model!r}")
        if self.training not in TRAININGS:
            raise ScorerError(f"TrainConfig.training must be one of {TRAININGS}, got {self.training!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ScorerError(f"TrainConfig.optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ScorerError(f"TrainConfig.device must be 'auto', 'cpu' or 'cuda', got {self.device!r}")
        for name in ("dim", "epochs", "batch_size", "negatives"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < (0 if name == "epochs" else 1):
                raise ScorerError(f"TrainConfig.{name} must be a positive integer, got {value!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ScorerError(f"TrainConfig.seed must be an integer, got {self.seed!r}")
        for name, low, high in (("lr", 0.0, math.inf), ("regularisation", 0.0, math.inf),
                                ("label_smoothing", 0.0, 1.0), ("dropout", 0.0, 1.0)):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not (low <= value < high) or (name == "lr" and value == 0):
                raise ScorerError(f"TrainConfig.{name} must be a number in [{low}, {high}), got {value!r}")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> TrainConfig:
        """Return the config written by ``asdict`` (as in a saved artifact); unknown keys are an error. An artifact
        without ``optimizer`` was written before that key, when every scorer trained with dense Adam."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ScorerError(f"unknown TrainConfig keys {unknown}; known keys are {sorted(known)}")
        return cls(**{"optimizer": "adam", **dict(values)})


class TripleScorer:
    """A trained s_G: entity and relation embeddings (numpy float32) and the config that produced them.

    ``score(h, r, t)`` gives probabilities in [0, 1] for arrays of ids, ``score_all_relations(h, t)`` the
    (n, num_relations) matrix that relation replacement takes its argmin over (``logits_all_relations`` the
    same before the sigmoid), and ``tail_logits`` / ``head_logits`` the directional logits of every candidate
    entity that :func:`evaluate` ranks.
    """

    def __init__(
        self,
        entity: np.ndarray,
        relation: np.ndarray,
        bias: np.ndarray | None = None,
        *,
        config: TrainConfig,
        num_entities: int,
        num_relations: int,
        metadata: Mapping[str, Any] | None = None,
        entity_ids: np.ndarray | None = None,
    ) -> None:
        width = config.dim * (2 if config.model == "complex" else 1)
        rel_rows = num_relations * (2 if config.reciprocal else 1)
        entity = np.ascontiguousarray(entity, dtype=np.float32)
        relation = np.ascontiguousarray(relation, dtype=np.float32)
        bias = np.zeros(num_entities, np.float32) if bias is None else np.ascontiguousarray(bias, dtype=np.float32)
        expected = ((num_entities, width), (rel_rows, width), (num_entities,))
        if (entity.shape, relation.shape, bias.shape) != expected:
            raise ScorerError(
                f"embedding shapes {entity.shape}, {relation.shape} and {bias.shape} do not match the config "
                f"(expected {expected[0]}, {expected[1]} and {expected[2]})"
            )
        if entity_ids is not None:
            entity_ids = np.ascontiguousarray(entity_ids, dtype=np.int64)
            if entity_ids.shape != (num_entities,) or (entity_ids.size > 1 and np.any(np.diff(entity_ids) <= 0)):
                raise ScorerError(f"entity_ids must be {num_entities} increasing ids (one per entity row), got "
                                  f"shape {entity_ids.shape}")
        self._entity = entity
        self._relation = relation
        self._bias = bias
        self._entity_ids = entity_ids
        self._config = config
        self._num_entities = int(num_entities)
        self._num_relations = int(num_relations)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._hash: str | None = None

    # ---- properties ------------------------------------------------------------------------------------------

    @property
    def config(self) -> TrainConfig:
        """The training config (model, dim, seed, ...)."""
        return self._config

    @property
    def num_entities(self) -> int:
        """Entity rows of the model: the ids it knows are 0 .. num_entities - 1, or :attr:`entity_ids`."""
        return self._num_entities

    @property
    def entity_ids(self) -> np.ndarray | None:
        """The KG ids of the entity rows, increasing, for a scorer trained on part of a KG (the triples of the
        pruned subgraphs: :func:`train_scorer_on`); None when row i is KG id i."""
        if self._entity_ids is None:
            return None
        view = self._entity_ids.view()
        view.flags.writeable = False
        return view

    @property
    def num_relations(self) -> int:
        """Relation ids the model knows (without reciprocals): 0 .. num_relations - 1."""
        return self._num_relations

    @property
    def entity_embeddings(self) -> np.ndarray:
        """(num_entities, width) float32 entity embeddings (read-only view)."""
        view = self._entity.view()
        view.flags.writeable = False
        return view

    @property
    def relation_embeddings(self) -> np.ndarray:
        """(num_relations or 2 * num_relations with reciprocals, width) float32 relation embeddings (read-only)."""
        view = self._relation.view()
        view.flags.writeable = False
        return view

    @property
    def entity_bias(self) -> np.ndarray:
        """(num_entities,) float32 bias of each entity as the answer of a query (read-only)."""
        view = self._bias.view()
        view.flags.writeable = False
        return view

    def _arrays(self) -> dict[str, np.ndarray]:
        arrays = {"entity": self._entity, "relation": self._relation, "bias": self._bias}
        if self._entity_ids is not None:
            arrays["entity_ids"] = self._entity_ids
        return arrays

    @property
    def content_hash(self) -> str:
        """SHA-256 over the config, the id-space sizes and the weights: the identity of this scorer."""
        if self._hash is None:
            self._hash = _content_hash(self._config, self._num_entities, self._num_relations, self._arrays())
        return self._hash

    def __repr__(self) -> str:
        return (f"TripleScorer(model={self._config.model!r}, dim={self._config.dim}, entities={self._num_entities}, "
                f"relations={self._num_relations}, hash={self.content_hash[:12]})")

    # ---- scoring ---------------------------------------------------------------------------------------------

    def score(self, heads: Any, relations: Any, tails: Any) -> np.ndarray:
        """Return s_G of each triple (heads[i], relations[i], tails[i]): float64 probabilities in [0, 1].

        Vectorised over equal-length id arrays (scalars broadcast). s_G is the sigmoid of :meth:`logits`; with
        reciprocal relations that logit is the mean of the model's forward (tail given h, r) and backward (head
        given r, t) logits.

            >>> scorer.score(np.array([3, 4]), np.array([0, 0]), np.array([7, 9]))
            array([0.91..., 0.02...])
        """
        return expit(self.logits(heads, relations, tails).astype(np.float64))

    def logits(self, heads: Any, relations: Any, tails: Any) -> np.ndarray:
        """Return the float32 logit of each triple, the value s_G squashes (same broadcasting as :meth:`score`)."""
        h, r, t = np.broadcast_arrays(*(np.asarray(a) for a in (heads, relations, tails)))
        shape = h.shape
        h, r, t = (self._ids(a.ravel(), n, what) for a, n, what in
                   ((h, self._num_entities, "head"), (r, self._num_relations, "relation"),
                    (t, self._num_entities, "tail")))
        matrix = self._relation_matrix
        out = np.empty(h.size, dtype=np.float32)
        for lo in range(0, h.size, _ROWS):
            hh, rr, tt = h[lo : lo + _ROWS], r[lo : lo + _ROWS], t[lo : lo + _ROWS]
            features = self._pair_features(hh, tt)
            features *= matrix[rr]
            out[lo : lo + len(hh)] = features.sum(axis=1) + self._pair_bias(hh, tt)
        return out.reshape(shape)

    def score_all_relations(self, heads: Any, tails: Any) -> np.ndarray:
        """Return the (n, num_relations) float64 matrix of s_G(heads[i], r, tails[i]) for every relation id r.

        Relation replacement takes each row's argmin over the relations other than the edge's own; it uses
        :meth:`logits_all_relations`, which has the same argmin without the sigmoid.
        """
        return expit(self.logits_all_relations(heads, tails).astype(np.float64))

    def logits_all_relations(self, heads: Any, tails: Any) -> np.ndarray:
        """Return the (n, num_relations) float32 logits of (heads[i], r, tails[i]) for every relation id r."""
        h, t = np.broadcast_arrays(np.asarray(heads), np.asarray(tails))
        h = self._ids(h.ravel(), self._num_entities, "head")
        t = self._ids(t.ravel(), self._num_entities, "tail")
        matrix_t = self._relation_matrix.T
        out = np.empty((h.size, self._num_relations), dtype=np.float32)
        for lo in range(0, h.size, _MATMUL_ROWS):
            hh, tt = h[lo : lo + _MATMUL_ROWS], t[lo : lo + _MATMUL_ROWS]
            block = out[lo : lo + len(hh)]
            np.matmul(self._pair_features(hh, tt), matrix_t, out=block)
            block += self._pair_bias(hh, tt)[:, None]
        return out

    def tail_logits(self, heads: Any, relations: Any) -> np.ndarray:
        """Return the (n, num_entities) float32 logits of every entity as the tail of (heads[i], relations[i], ?)."""
        h = self._ids(np.asarray(heads).ravel(), self._num_entities, "head")
        r = self._ids(np.asarray(relations).ravel(), self._num_relations, "relation")
        return self._query(self._entity[h], self._relation[r]) @ self._entity.T + self._bias

    def head_logits(self, relations: Any, tails: Any) -> np.ndarray:
        """Return the (n, num_entities) float32 logits of every entity as the head of (?, relations[i], tails[i])."""
        r = self._ids(np.asarray(relations).ravel(), self._num_relations, "relation")
        t = self._ids(np.asarray(tails).ravel(), self._num_entities, "tail")
        if self._config.reciprocal:
            return self._query(self._entity[t], self._relation[r + self._num_relations]) @ self._entity.T + self._bias
        # Without reciprocals the bias is that of the tail: the same for every candidate head.
        return self._head_query(self._relation[r], self._entity[t]) @ self._entity.T + self._bias[t, None]

    def _query(self, head: np.ndarray, rel: np.ndarray) -> np.ndarray:
        """The vector q with logit(h, r, x) = q . e_x (DistMult: h * r; ComplEx: [Re(h r), Im(h r)])."""
        if self._config.model == "distmult":
            return head * rel
        d = self._config.dim
        hr, hi, rr, ri = head[:, :d], head[:, d:], rel[:, :d], rel[:, d:]
        return np.concatenate([hr * rr - hi * ri, hr * ri + hi * rr], axis=1)

    def _head_query(self, rel: np.ndarray, tail: np.ndarray) -> np.ndarray:
        """Without reciprocals: the vector p with logit(x, r, t) = p . e_x."""
        if self._config.model == "distmult":
            return rel * tail
        d = self._config.dim
        rr, ri, tr, ti = rel[:, :d], rel[:, d:], tail[:, :d], tail[:, d:]
        # Re(x r conj(t)) = x_re (r_re t_re + r_im t_im) - x_im (r_im t_re - r_re t_im)
        return np.concatenate([rr * tr + ri * ti, -(ri * tr - rr * ti)], axis=1)

    def _pair_features(self, h: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Vectors u with logit(h, r, t) = u . m_r + bias, m_r the row of :attr:`_relation_matrix`.

        Both directions are linear in the relation embedding: DistMult's forward and backward logits are
        (e_h * e_t) . w_r and (e_h * e_t) . w_{r^-1}; ComplEx's are [a, b] . w_r and [a, -b] . w_{r^-1} with
        a = Re(h) Re(t) + Im(h) Im(t), b = Re(h) Im(t) - Im(h) Re(t). Folding the relation side into one matrix
        makes the mean of the two logits a single product.
        """
        eh, et = self._entity[h], self._entity[t]
        if self._config.model == "distmult":
            eh *= et
            return eh
        d = self._config.dim
        hr, hi, tr, ti = eh[:, :d], eh[:, d:], et[:, :d], et[:, d:]
        return np.concatenate([hr * tr + hi * ti, hr * ti - hi * tr], axis=1)

    def _pair_bias(self, h: np.ndarray, t: np.ndarray) -> np.ndarray:
        if self._config.reciprocal:
            return 0.5 * (self._bias[t] + self._bias[h])
        return self._bias[t]

    @cached_property
    def _relation_matrix(self) -> np.ndarray:
        """(num_relations, width): m_r with u . m_r the (mean) logit of (h, r, t) up to the bias."""
        forward = self._relation[: self._num_relations]
        if not self._config.reciprocal:
            return forward
        backward = self._relation[self._num_relations :].copy()
        if self._config.model == "complex":
            backward[:, self._config.dim :] *= -1
        return np.ascontiguousarray(0.5 * (forward + backward), dtype=np.float32)

    def _ids(self, ids: np.ndarray, limit: int, what: str) -> np.ndarray:
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise ScorerError(f"{what} ids must be integers, got dtype {ids.dtype}")
        ids = ids.astype(np.int64, copy=False)
        if what != "relation" and self._entity_ids is not None:
            rows = np.minimum(np.searchsorted(self._entity_ids, ids), max(self._num_entities - 1, 0))
            missing = self._entity_ids[rows] != ids if self._num_entities else np.ones(ids.shape, bool)
            if ids.size and missing.any():
                bad = int(ids[missing][0])
                raise ScorerError(
                    f"{what} id {bad} is not one of the {self._num_entities:,} entities the scorer was trained on "
                    "(the entities of the pruned subgraphs); score triples of those subgraphs, or train on the whole "
                    "KG (perturbation.scorer_train_on: kg)")
            return rows
        if ids.size and (ids.min() < 0 or ids.max() >= limit):
            bad = int(ids[(ids < 0) | (ids >= limit)][0])
            raise ScorerError(
                f"{what} id {bad} is outside the scorer's id space [0, {limit}); train the scorer on the same KG "
                "(same ingest snapshot) as the triples you score"
            )
        return ids

    # ---- persistence -----------------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the artifact folder ``path`` (``weights.npz`` + ``scorer.json``) and return it.

        The JSON holds the format version, kgprobe version, training config, seed, id-space sizes, the content
        hash and ``metadata`` (training log, anything the caller adds such as the KG snapshot id).
        """
        from kgprobe import __version__

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / _WEIGHTS, **self._arrays())
        meta = {
            "format": _FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "kgprobe_version": __version__,
            "config": asdict(self._config),
            "seed": self._config.seed,
            "num_entities": self._num_entities,
            "num_relations": self._num_relations,
            "content_sha256": self.content_hash,
            "metadata": self.metadata,
        }
        (folder / _META).write_text(json.dumps(meta, indent=2, sort_keys=True, default=_json_default) + "\n",
                                    encoding="utf-8")
        return folder

    @classmethod
    def load(cls, path: str | Path) -> TripleScorer:
        """Read an artifact written by :meth:`save`, checking its format version and content hash."""
        folder = Path(path)
        meta_path, weights_path = folder / _META, folder / _WEIGHTS
        if not meta_path.is_file() or not weights_path.is_file():
            raise ScorerError(f"{folder} is not a triple-scorer artifact (expected {_META} and {_WEIGHTS}); "
                              "write one with TripleScorer.save")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ScorerError(f"{meta_path} is not valid JSON ({exc}); re-save the scorer") from exc
        if meta.get("format") != _FORMAT_NAME or meta.get("format_version") != FORMAT_VERSION:
            raise ScorerError(
                f"{meta_path} has format {meta.get('format')!r} version {meta.get('format_version')!r}; this kgprobe "
                f"reads {_FORMAT_NAME!r} version {FORMAT_VERSION}: retrain the scorer"
            )
        config = TrainConfig.from_dict(meta["config"])
        with np.load(weights_path, allow_pickle=False) as weights:
            entity, relation, bias = weights["entity"], weights["relation"], weights["bias"]
            entity_ids = weights["entity_ids"] if "entity_ids" in weights.files else None
        scorer = cls(entity, relation, bias, config=config, num_entities=meta["num_entities"],
                     num_relations=meta["num_relations"], metadata=meta.get("metadata") or {}, entity_ids=entity_ids)
        if scorer.content_hash != meta.get("content_sha256"):
            raise ScorerError(f"content hash of {folder} does not match its {_META}: the artifact was modified or "
                              "truncated; retrain or restore it")
        return scorer


# --------------------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------------------


def train_scorer(
    train_triples: np.ndarray,
    num_entities: int,
    num_relations: int,
    config: TrainConfig | None = None,
    *,
    log: EpochLog | None = None,
) -> TripleScorer:
    """Fit s_G on ``train_triples`` ((n, 3) head, relation, tail ids) and return the :class:`TripleScorer`.

    Call it once per KG snapshot (the ``triple_scorer`` asset); ids must lie in [0, num_entities) and
    [0, num_relations). ``log(epoch, mean_loss, seconds)`` is called after each epoch (epochs count from 1,
    ``seconds`` is that epoch's wall time). Deterministic for a given config on CPU: the same seed gives the same
    weights. The caller's torch RNG state and deterministic-algorithms flag are left as they were.
    """
    import torch

    config = config or TrainConfig()
    triples = np.unique(_triple_array(train_triples, num_entities, num_relations), axis=0)
    if len(triples) == 0:
        raise ScorerError("train_triples is empty: a scorer needs at least one training triple")
    device = _device(config.device, torch)
    previous, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    # A lazy step's tensors are a batch's rows (256 x dim): a second CPU thread only adds synchronisation, and where
    # another process holds the other core, OpenMP's waits cost several times the step. One thread also makes its
    # weights the same on every machine.
    used = 1 if _is_lazy(config) and device.type == "cpu" else threads
    started = time.perf_counter()
    history: list[dict[str, float]] = []
    try:
        torch.use_deterministic_algorithms(True, warn_only=device.type != "cpu")
        torch.set_num_threads(used)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            entity, relation, bias = _fit(triples, num_entities, num_relations, config, device, torch, log, history)
    finally:
        torch.use_deterministic_algorithms(previous)
        torch.set_num_threads(threads)
    metadata = {
        "training_seconds": round(time.perf_counter() - started, 3),
        "train_triples": int(len(triples)),
        "epoch_losses": [h["loss"] for h in history],
        "epoch_seconds": [h["seconds"] for h in history],
        "torch_version": torch.__version__,
        "device": str(device),
        "threads": used,
    }
    return TripleScorer(entity, relation, bias, config=config, num_entities=num_entities,
                        num_relations=num_relations, metadata=metadata)


def train_scorer_on(
    train_triples: np.ndarray,
    num_relations: int,
    config: TrainConfig | None = None,
    *,
    log: EpochLog | None = None,
) -> TripleScorer:
    """Fit s_G on ``train_triples``, KG ids, with one embedding per entity they name (not per entity of the KG).

    The OKGQA authors' released code trains s_G on the union of the pruned subgraphs, the graph the perturbations
    change: its entities are a few per query however large the KG, so the model, its optimiser state and each step
    stay the size of the subgraphs, where an embedding per KG entity makes every step touch millions of rows. The
    scorer knows the KG ids of its rows (:attr:`TripleScorer.entity_ids`); scoring an entity outside them is an
    error. Negatives are drawn among these entities, as the released code draws them among the graph's nodes.

        >>> s = train_scorer_on(np.array([[10, 0, 500], [500, 1, 7]]), 2, TrainConfig(dim=8, epochs=1))
        >>> s.entity_ids.tolist(), s.score([10], [0], [500]).shape
        ([7, 10, 500], (1,))
    """
    triples = np.asarray(train_triples, dtype=np.int64).reshape(-1, 3)
    if len(triples) == 0:
        raise ScorerError("train_triples is empty: a scorer needs at least one training triple")
    if triples.min() < 0:
        raise ScorerError("train_triples holds a negative id; ids are the KG's (0 or more)")
    ids = np.unique(np.concatenate([triples[:, 0], triples[:, 2]]))
    local = np.stack([np.searchsorted(ids, triples[:, 0]), triples[:, 1], np.searchsorted(ids, triples[:, 2])], axis=1)
    fitted = train_scorer(local, len(ids), num_relations, config, log=log)
    arrays = fitted._arrays()
    return TripleScorer(arrays["entity"], arrays["relation"], arrays["bias"], config=fitted.config,
                        num_entities=len(ids), num_relations=num_relations,
                        metadata={**fitted.metadata, "trained_on": "entities of the training triples"},
                        entity_ids=ids)


def _fit(
    triples: np.ndarray,
    num_entities: int,
    num_relations: int,
    config: TrainConfig,
    device: Any,
    torch: Any,
    log: EpochLog | None,
    history: list[dict[str, float]],
) -> tuple[np.ndarray, ...]:
    """The training loop; returns the (entity, relation, bias) weights as float32 numpy arrays."""
    width = config.dim * (2 if config.model == "complex" else 1)
    rel_rows = num_relations * (2 if config.reciprocal else 1)
    gen = torch.Generator().manual_seed(config.seed)
    # Xavier-normal scale keeps the initial logits near 0 for both models.
    entity = torch.nn.Parameter((torch.randn(num_entities, width, generator=gen) *
                                 math.sqrt(2.0 / (num_entities + width))).to(device))
    relation = torch.nn.Parameter((torch.randn(rel_rows, width, generator=gen) *
                                   math.sqrt(2.0 / (rel_rows + width))).to(device))
    if _is_lazy(config):
        # sparse row gradients (embedding lookups) and Adam on those rows only: a step costs the batch
        bias = torch.nn.Parameter(torch.zeros(num_entities, 1, device=device))
        optimizers = [torch.optim.SparseAdam([entity, bias], lr=config.lr), torch.optim.Adam([relation], lr=config.lr)]
        lookup = _Rows(lambda ids: torch.nn.functional.embedding(ids, entity, sparse=True),
                     lambda ids: torch.nn.functional.embedding(ids, bias, sparse=True).squeeze(-1))
    else:
        bias = torch.nn.Parameter(torch.zeros(num_entities, device=device))
        optimizers = [torch.optim.Adam([entity, relation, bias], lr=config.lr)]
        lookup = _Rows(entity.__getitem__, bias.__getitem__)
    dropout = torch.nn.Dropout(config.dropout)

    heads, rels, tails = triples[:, 0], triples[:, 1], triples[:, 2]
    if config.reciprocal:
        q_ent = np.concatenate([heads, tails])
        q_rel = np.concatenate([rels, rels + num_relations])
        answer = np.concatenate([tails, heads])
    else:
        # Without reciprocals a triple trains tail prediction only; DistMult is symmetric in h and t anyway.
        q_ent, q_rel, answer = heads, rels, tails

    if config.training == "1-N":
        keys = q_ent * rel_rows + q_rel
        order = np.lexsort((answer, keys))
        keys, answer_sorted = keys[order], answer[order]
        query_keys, starts = np.unique(keys, return_index=True)
        indptr = np.append(starts, len(keys)).astype(np.int64)
        query_ent = torch.from_numpy(query_keys // rel_rows)
        query_rel = torch.from_numpy(query_keys % rel_rows)
        items = len(query_keys)
    elif config.training == "balanced":
        # one item per true triple, scored as TripleScorer.logits does (both directions with reciprocals)
        items = len(triples)
        triples_t = torch.from_numpy(triples)
        known = np.sort(_triple_keys(triples, num_entities, num_relations))
    else:
        query_ent, query_rel = torch.from_numpy(q_ent), torch.from_numpy(q_rel)
        answers_t = torch.from_numpy(answer)
        items = len(q_ent)

    smooth = config.label_smoothing
    for epoch in range(1, config.epochs + 1):
        tick = time.perf_counter()
        total, count = 0.0, 0
        perm = torch.randperm(items, generator=gen)
        for batch in perm.split(config.batch_size):
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            if config.training == "balanced":
                loss = _balanced_step(triples_t[batch], known, lookup, relation, dropout, config,
                                      num_entities, num_relations, gen, device, torch)
                for optimizer in optimizers:
                    optimizer.step()
                total += loss * len(batch)
                count += len(batch)
                continue
            qe = query_ent[batch].to(device)
            qr = query_rel[batch].to(device)
            e_h, w_r = lookup.entity(qe), relation[qr]
            query = dropout(_torch_query(e_h, w_r, config, torch))
            if config.training == "1-N":
                b = batch.numpy()
                counts = indptr[b + 1] - indptr[b]
                rows = torch.from_numpy(np.repeat(np.arange(len(b)), counts)).to(device)
                cols = torch.from_numpy(answer_sorted[_ranges(indptr[b], counts)]).to(device)
                loss, grad_query, grad_entity, grad_bias = _one_to_n_step(
                    query.detach(), entity.detach(), bias.detach(), rows, cols, smooth, torch
                )
                surrogate = (query * grad_query).sum()
                if config.regularisation:
                    reg = config.regularisation * ((e_h * e_h).sum(-1).mean() + (w_r * w_r).sum(-1).mean())
                    surrogate = surrogate + reg
                    loss = loss + float(reg.detach())
                surrogate.backward()
                entity.grad += grad_entity
                bias.grad = grad_bias
            else:
                pos = answers_t[batch].to(device)
                neg = torch.randint(0, num_entities, (len(batch), config.negatives), generator=gen).to(device)
                cand = torch.cat([pos[:, None], neg], dim=1)
                e_c = lookup.entity(cand)
                logits = torch.einsum("bd,bkd->bk", query, e_c) + lookup.bias(cand)
                target = torch.zeros_like(logits)
                target[:, 0] = 1.0
                loss_t = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
                if config.regularisation:
                    loss_t = loss_t + config.regularisation * sum((x * x).sum(-1).mean() for x in (e_h, w_r, e_c))
                loss_t.backward()
                loss = float(loss_t.detach())
            for optimizer in optimizers:
                optimizer.step()
            total += loss * len(batch)
            count += len(batch)
        seconds = time.perf_counter() - tick
        mean_loss = total / max(count, 1)
        history.append({"loss": mean_loss, "seconds": round(seconds, 3)})
        if log is not None:
            log(epoch, mean_loss, seconds)
    return tuple(p.detach().cpu().numpy().astype(np.float32) for p in (entity, relation, bias.reshape(-1)))


def _is_lazy(config: TrainConfig) -> bool:
    # 1-N scores every entity at every step: its gradients are dense whatever the optimiser
    return config.optimizer == "lazy-adam" and config.training != "1-N"


class _Rows(NamedTuple):
    """How a training step reads entity rows and entity biases for an id tensor: indexing (dense gradients) or
    embedding lookups with sparse gradients (``lazy-adam``)."""

    entity: Callable[[Any], Any]
    bias: Callable[[Any], Any]


def _balanced_step(
    batch: Any, known: np.ndarray, rows: _Rows, relation: Any, dropout: Any, config: TrainConfig,
    num_entities: int, num_relations: int, gen: Any, device: Any, torch: Any,
) -> float:
    """One step of ``training="balanced"``: BCE of the batch's true triples (target 1) and of as many uniformly
    random (h, r, t) triples (target 0), drawn afresh each step, the two classes weighted equally; a random
    triple that is a training triple is left out of the loss. Returns the step's loss."""
    size = (len(batch),)
    neg = torch.stack([torch.randint(0, num_entities, size, generator=gen),
                       torch.randint(0, num_relations, size, generator=gen),
                       torch.randint(0, num_entities, size, generator=gen)], dim=-1)
    keys = _triple_keys(neg.numpy(), num_entities, num_relations)
    at = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    weight = torch.from_numpy((known[at] != keys).astype(np.float32)).to(device)
    pos = batch.to(device)
    neg = neg.to(device)
    pos_logits = _torch_triple_logits(pos, rows, relation, dropout, config, num_relations, torch)
    neg_logits = _torch_triple_logits(neg, rows, relation, dropout, config, num_relations, torch)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    loss = bce(pos_logits, torch.ones_like(pos_logits))
    loss = loss + (bce(neg_logits, torch.zeros_like(neg_logits), reduction="none") * weight).sum() / weight.sum().clamp(min=1)
    if config.regularisation:
        touched = (rows.entity(pos[:, 0]), rows.entity(pos[:, 2]), relation[pos[:, 1]], rows.entity(neg[:, 0]),
                   rows.entity(neg[:, 2]))
        loss = loss + config.regularisation * sum((x * x).sum(-1).mean() for x in touched)
    loss.backward()
    return float(loss.detach())


def _torch_triple_logits(triples: Any, rows: _Rows, relation: Any, dropout: Any, config: TrainConfig,
                         num_relations: int, torch: Any) -> Any:
    """The logit of each (h, r, t) row as :meth:`TripleScorer.logits` computes it (the mean of the forward and
    backward logits with reciprocal relations), with dropout on the query vectors."""
    h, r, t = triples[:, 0], triples[:, 1], triples[:, 2]
    forward = (dropout(_torch_query(rows.entity(h), relation[r], config, torch)) * rows.entity(t)).sum(-1) + rows.bias(t)
    if not config.reciprocal:
        return forward
    backward = (dropout(_torch_query(rows.entity(t), relation[r + num_relations], config, torch)) *
                rows.entity(h)).sum(-1)
    return 0.5 * (forward + backward + rows.bias(h))


def _triple_keys(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    """One int64 per (h, r, t): (h * R + r) * E + t."""
    triples = np.asarray(triples, dtype=np.int64)
    return (triples[:, 0] * num_relations + triples[:, 1]) * num_entities + triples[:, 2]


def _one_to_n_step(
    query: Any, entity: Any, bias: Any, rows: Any, cols: Any, smooth: float, torch: Any
) -> tuple[float, Any, Any, Any]:
    """Mean BCE of the 1-N logits (query @ entity.T + bias) against smoothed multi-hot targets, and its gradients.

    The gradient of BCE-with-logits is (sigmoid(x) - target) / size; computing it in place on the logits buffer
    instead of through autograd saves three full (batch x entities) passes per step, most of a CPU step's time.
    """
    with torch.no_grad():
        n_ent = entity.shape[0]
        size = query.shape[0] * n_ent
        logits = torch.addmm(bias, query, entity.T)
        off = smooth / n_ent
        on = 1.0 - smooth + off
        # BCE(x, y) = softplus(x) - y * x; the targets are `off` everywhere plus (on - off) at the known answers.
        loss = float(torch.nn.functional.softplus(logits).sum()) - off * float(logits.sum())
        loss -= (on - off) * float(logits[rows, cols].sum())
        grad = torch.sigmoid_(logits)
        grad -= off
        grad[rows, cols] -= on - off
        grad /= size
        return loss / size, grad @ entity, grad.T @ query, grad.sum(0)


def _torch_query(e_h: Any, w_r: Any, config: TrainConfig, torch: Any) -> Any:
    if config.model == "distmult":
        return e_h * w_r
    d = config.dim
    hr, hi, rr, ri = e_h[:, :d], e_h[:, d:], w_r[:, :d], w_r[:, d:]
    return torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], dim=1)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c), without a Python loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    offsets = np.repeat(starts - (ends - counts), counts)
    return np.arange(total, dtype=np.int64) + offsets


def _device(name: str, torch: Any) -> Any:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ScorerError("TrainConfig.device='cuda' but torch sees no CUDA GPU; use device='auto' or 'cpu'")
    return torch.device(name)


# --------------------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------------------


def evaluate(
    scorer: TripleScorer,
    test_triples: np.ndarray,
    all_known_triples: np.ndarray,
    *,
    ks: tuple[int, ...] = (1, 3, 10),
    batch_size: int = 512,
) -> dict[str, float]:
    """Return filtered link-prediction metrics of ``scorer`` on ``test_triples``: MRR, MR and Hits@k.

    Standard filtered setting (Bordes et al. 2013): each test triple (h, r, t) is ranked twice, t among all
    entities as the tail of (h, r, ?) and h as the head of (?, r, t), and every other entity that forms a triple
    in ``all_known_triples`` (usually train + valid + test) is removed from the candidates first. Ties count half
    (the mean of the optimistic and pessimistic rank). Keys: ``mrr``, ``mr``, ``hits@k`` for each k (averaged
    over both directions), ``tail_mrr``, ``head_mrr`` and ``count`` (test triples).
    """
    test = _triple_array(test_triples, scorer.num_entities, scorer.num_relations)
    known = _triple_array(all_known_triples, scorer.num_entities, scorer.num_relations)
    if len(test) == 0:
        raise ScorerError("test_triples is empty: nothing to evaluate")
    n_rel = scorer.num_relations
    tail_index = _FilterIndex(known[:, 0] * n_rel + known[:, 1], known[:, 2])
    head_index = _FilterIndex(known[:, 2] * n_rel + known[:, 1], known[:, 0])
    tail_ranks = np.empty(len(test))
    head_ranks = np.empty(len(test))
    for lo in range(0, len(test), batch_size):
        part = test[lo : lo + batch_size]
        h, r, t = part[:, 0], part[:, 1], part[:, 2]
        tail_ranks[lo : lo + len(part)] = _filtered_ranks(scorer.tail_logits(h, r), t, tail_index.lookup(h * n_rel + r))
        head_ranks[lo : lo + len(part)] = _filtered_ranks(scorer.head_logits(r, t), h, head_index.lookup(t * n_rel + r))
    ranks = np.concatenate([tail_ranks, head_ranks])
    out: dict[str, float] = {
        "mrr": float(np.mean(1.0 / ranks)),
        "mr": float(np.mean(ranks)),
    }
    for k in ks:
        out[f"hits@{k}"] = float(np.mean(ranks <= k))
    out["tail_mrr"] = float(np.mean(1.0 / tail_ranks))
    out["head_mrr"] = float(np.mean(1.0 / head_ranks))
    out["count"] = float(len(test))
    return out


class _FilterIndex:
    """Known answers per query key, as a CSR: lookup(keys) gives the flat (row, answer) pairs to filter."""

    def __init__(self, keys: np.ndarray, answers: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.answers = answers[order]

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        starts = np.searchsorted(self.keys, keys, side="left")
        counts = np.searchsorted(self.keys, keys, side="right") - starts
        rows = np.repeat(np.arange(len(keys)), counts)
        return rows, self.answers[_ranges(starts, counts)]


def _filtered_ranks(logits: np.ndarray, target: np.ndarray, known: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    rows = np.arange(len(target))
    own = logits[rows, target].copy()
    logits[known[0], known[1]] = -np.inf
    logits[rows, target] = -np.inf
    greater = (logits > own[:, None]).sum(axis=1)
    equal = (logits == own[:, None]).sum(axis=1)
    return 1.0 + greater + equal / 2.0


# --------------------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------------------


def _triple_array(triples: Any, num_entities: int, num_relations: int) -> np.ndarray:
    arr = np.asarray(triples)
    if arr.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 3 or not np.issubdtype(arr.dtype, np.integer):
        raise ScorerError(f"triples must be an integer array of shape (n, 3), got shape {arr.shape} dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    ent, rel = arr[:, [0, 2]], arr[:, 1]
    if ent.min() < 0 or ent.max() >= num_entities:
        raise ScorerError(f"entity ids must lie in [0, {num_entities}); found {int(ent.min())}..{int(ent.max())}")
    if rel.min() < 0 or rel.max() >= num_relations:
        raise ScorerError(f"relation ids must lie in [0, {num_relations}); found {int(rel.min())}..{int(rel.max())}")
    return arr


def _content_hash(config: TrainConfig, num_entities: int, num_relations: int, arrays: Mapping[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    settings = asdict(config)
    if settings["optimizer"] == "adam":
        del settings["optimizer"]  # the header of the artifacts written before the key: their hashes still hold
    header = {"config": settings, "num_entities": num_entities, "num_relations": num_relations}
    digest.update(json.dumps(header, sort_keys=True).encode())
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{arr.dtype.str}:{arr.shape}".encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

"""Reference responders that need no weights: the oracle (the ceiling) and three baselines.

Each answers in the shape the prompt's ``answer_kind`` asks for; the exact texts are in :data:`ANSWER_TEXTS`:

=============  ================  ========================================  =====================================
answer_kind    gold              oracle                                    always-yes / always-no
=============  ================  ========================================  =====================================
``yn``         yes / no          ``Yes.`` / ``No.``                        ``Yes.`` / ``No.``
``wh``         valid premise /   ``The question's premise is true.`` /     accepts / rejects the premise (the
               false premise     ``The question's premise is false.``      oracle's two texts)
``tf``         true / false /    ``True.`` / ``False.`` /                  ``True.`` / ``False.``
               unknown           ``I don't know.``
``open``       JSON ``{"answer",  ``answer``                                 ``Yes.`` / ``No.``
               "alternatives"}``
other / None   any text          the gold text itself                      ``Yes.`` / ``No.``
=============  ================  ========================================  =====================================

Gold labels are compared case-insensitively without a final full stop; ``tf`` also accepts ``i don't know``,
``idk`` and ``not enough information`` for unknown. ``random`` picks uniformly among the kind's texts (``tf``: all
three; ``open``: one of the gold's ``alternatives``, e.g. KG-false statements or every option of an ERBench
multiple-choice question and None of the above, or ``Yes.`` / ``No.`` when it
lists none; other kinds: ``Yes.`` / ``No.``), seeded by ``(params.seed, prompt sha256, sample index)``, so it is the same
on every run and independent of batching. The oracle stores a failure for a prompt without a gold label (or with
one it cannot read): it cannot answer such a prompt, and saying so beats a guess.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kgprobe.generation.records import BaseBackend, Completion, Prompt, SamplingParams

__all__ = ["ANSWER_TEXTS", "GOLD_LABELS", "OPEN_KIND", "REFERENCE_KINDS", "ReferenceBackend", "ReferenceConfig",
           "open_gold"]

REFERENCE_KINDS: tuple[str, ...] = ("oracle", "always-yes", "always-no", "random")

#: The exact texts, per answer kind: what an accepting ("yes"), rejecting ("no") and unsure ("unknown") answer reads.
ANSWER_TEXTS: dict[str, dict[str, str]] = {
    "yn": {"yes": "Yes.", "no": "No."},
    "wh": {"yes": "The question's premise is true.", "no": "The question's premise is false."},
    "tf": {"yes": "True.", "no": "False.", "unknown": "I don't know."},
    "": {"yes": "Yes.", "no": "No."},
}
#: Gold labels an answer kind accepts, read as the ANSWER_TEXTS key they ask for (compared as by ``_norm``).
GOLD_LABELS: dict[str, dict[str, str]] = {
    "yn": {"yes": "yes", "no": "no"},
    "wh": {"valid premise": "yes", "true premise": "yes", "false premise": "no"},
    "tf": {"true": "yes", "false": "no", "unknown": "unknown", "i don't know": "unknown", "idk": "unknown",
           "not enough information": "unknown"},
}


#: The answer kind of open answers whose gold carries both the right answer and wrong ones (see :func:`open_gold`).
OPEN_KIND = "open"


def open_gold(answer: str, alternatives: Sequence[str] = ()) -> str:
    """The gold of an ``open`` prompt: the oracle answers ``answer``; ``random`` one of ``alternatives`` (wrong
    answers a baseline should give, e.g. KG-false statements)."""
    return json.dumps({"answer": answer, "alternatives": list(alternatives)}, ensure_ascii=False)


def _read_open_gold(gold: str | None) -> dict | None:
    try:
        value = json.loads(gold) if gold is not None else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("answer"), str) else None


@dataclass(frozen=True)
class ReferenceConfig:
    """Reference responders that need no weights: the oracle (the ceiling) and the always-yes, always-no and random
    baselines.

    The texts each answers with are in :data:`ANSWER_TEXTS` and the module docstring."""

    kind: str = "oracle"
    """``oracle`` (answers the gold: the ceiling), ``always-yes``, ``always-no`` or ``random`` (a seeded uniform
    pick among the answer kind's texts)."""

    def __post_init__(self) -> None:
        if self.kind not in REFERENCE_KINDS:
            raise ValueError(f"reference kind must be one of {list(REFERENCE_KINDS)}, got {self.kind!r}")


def _norm(text: str) -> str:
    return " ".join(text.strip().lower().rstrip(".").split())


class ReferenceBackend(BaseBackend):
    """Deterministic responders: ``ReferenceBackend("oracle")`` or ``ReferenceBackend(ReferenceConfig("random"))``."""

    name = "reference"

    def __init__(self, kind: str | ReferenceConfig = "oracle") -> None:
        self.config = kind if isinstance(kind, ReferenceConfig) else ReferenceConfig(kind)
        self.kind = self.config.kind

    def __repr__(self) -> str:
        return f"ReferenceBackend({self.kind!r})"

    def answer(self, prompt: Prompt, params: SamplingParams, index: int) -> Completion:
        """The completion of one sample (``index`` counts from 0)."""
        t0 = time.perf_counter()
        if prompt.answer_kind == OPEN_KIND:
            return self._answer_open(prompt, params, index, t0)
        kind = prompt.answer_kind if prompt.answer_kind in GOLD_LABELS else ""
        texts = ANSWER_TEXTS[kind]
        if self.kind == "always-yes":
            text = texts["yes"]
        elif self.kind == "always-no":
            text = texts["no"]
        elif self.kind == "random":
            digest = hashlib.sha256(f"{params.seed}|{prompt.sha256()}|{index}".encode()).digest()
            options = [texts[k] for k in ("yes", "no", "unknown") if k in texts]
            text = options[int.from_bytes(digest[:8], "big") % len(options)]
        else:
            if prompt.gold is None:
                return Completion.failure(f"oracle: item {prompt.item_id} has no gold answer",
                                          latency_s=time.perf_counter() - t0)
            if not kind:
                text = prompt.gold
            else:
                label = GOLD_LABELS[kind].get(_norm(prompt.gold))
                if label is None:
                    return Completion.failure(f"oracle: gold {prompt.gold!r} of item {prompt.item_id} is not a "
                                              f"{prompt.answer_kind} label ({sorted(GOLD_LABELS[kind])})",
                                              latency_s=time.perf_counter() - t0)
                text = texts[label]
        return Completion(text=text, finish_reason="stop", tokens_in=None, tokens_out=None,
                          latency_s=time.perf_counter() - t0)

    def _answer_open(self, prompt: Prompt, params: SamplingParams, index: int, t0: float) -> Completion:
        gold = _read_open_gold(prompt.gold)
        texts = ANSWER_TEXTS[""]
        if self.kind == "oracle":
            if gold is None:
                return Completion.failure(f"oracle: gold of open item {prompt.item_id} is not an open_gold() JSON",
                                          latency_s=time.perf_counter() - t0)
            text = gold["answer"]
        elif self.kind == "random":
            options = [str(a) for a in (gold or {}).get("alternatives") or []] or [texts["yes"], texts["no"]]
            digest = hashlib.sha256(f"{params.seed}|{prompt.sha256()}|{index}".encode()).digest()
            text = options[int.from_bytes(digest[:8], "big") % len(options)]
        else:
            text = texts["yes"] if self.kind == "always-yes" else texts["no"]
        return Completion(text=text, finish_reason="stop", tokens_in=None, tokens_out=None,
                          latency_s=time.perf_counter() - t0)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``params.n`` answers per prompt; no tokens are counted (there is no tokenizer)."""
        return [[self.answer(p, params, i) for i in range(params.n)] for p in prompts]

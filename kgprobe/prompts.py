"""Evaluation prompts of the papers, as versioned templates with ids.

A stored response names the template id it was made with, so a change of wording is a new id (``-v2``) and never
silently mixes with answers to the old one.

* ``fpq-yn-v1`` / ``fpq-wh-v1``: KG-FPQ's closed-book prompts (its Table 6).
* ``okgqa-grounded-yn-v1`` / ``okgqa-grounded-wh-v1``: the same questions with KG context, after OKGQA's prompt
  D.1 ("Below are the facts that might be relevant to answer the question: ..."), where the facts are the
  question subject's pruned subgraph, clean or perturbed, one "head relation tail" line per triple.
* ``fpq-judge-v1``: KG-FPQ's FPQ-Judge instruction, which asks a judge model whether an answer to a WH question
  is factual ("Yes") or not ("No"), followed by the question and the answer.

    >>> render("fpq-yn-v1", question="Was Verdi born in Busseto?")
    'Question: Was Verdi born in Busseto? Respond solely with "Yes" or "No".'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kgprobe.errors import ConfigError

__all__ = ["FPQ_JUDGE_INSTRUCTION", "JUDGE_TEMPLATE_ID", "PROMPTS", "PromptTemplate", "closed_book_template", "grounded_template", "render", "verbalise"]

_YN = 'Respond solely with "Yes" or "No".'
_WH = "Answer the question with an answer of no more than three sentences."
_FACTS = "Below are the facts that might be relevant to answer the question:"
#: KG-FPQ's FPQ-Judge instruction, verbatim.
FPQ_JUDGE_INSTRUCTION = ('You are given a question and an answer, determine if the answer is factual. If the answer is '
                         'factual please output only "Yes", otherwise please output only "No".')


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt with ``{placeholders}``; ``id`` is versioned and stored with every response."""

    id: str
    text: str
    source: str

    def render(self, **values: str) -> str:
        """The prompt with every placeholder filled; a missing value is an error, never an empty string."""
        try:
            return self.text.format(**values)
        except KeyError as exc:
            raise ConfigError(f"prompt {self.id}: no value for placeholder {exc}") from exc


PROMPTS: dict[str, PromptTemplate] = {
    t.id: t
    for t in (
        PromptTemplate("fpq-yn-v1", "Question: {question} " + _YN, "KG-FPQ Table 6 (Yes-No)"),
        PromptTemplate("fpq-wh-v1", "Question: {question} " + _WH, "KG-FPQ Table 6 (WH)"),
        PromptTemplate("okgqa-grounded-yn-v1", _FACTS + "\n{knowledge}\n\nQuestion: {question} " + _YN,
                       "OKGQA D.1 with KG-FPQ's Yes-No instruction"),
        PromptTemplate("okgqa-grounded-wh-v1", _FACTS + "\n{knowledge}\n\nQuestion: {question} " + _WH,
                       "OKGQA D.1 with KG-FPQ's WH instruction"),
        PromptTemplate("fpq-judge-v1", FPQ_JUDGE_INSTRUCTION + "\n\nQuestion: {question}\nAnswer: {answer}",
                       "KG-FPQ FPQ-Judge instruction"),
    )
}


#: The judge prompt of KG-FPQ's generative task.
JUDGE_TEMPLATE_ID = "fpq-judge-v1"


def closed_book_template(fmt: str) -> PromptTemplate:
    """The closed-book KG-FPQ template of a question format (``yn`` or ``wh``)."""
    return _get(f"fpq-{fmt}-v1")


def grounded_template(fmt: str) -> PromptTemplate:
    """The KG-grounded template of a question format (``yn`` or ``wh``)."""
    return _get(f"okgqa-grounded-{fmt}-v1")


def _get(template_id: str) -> PromptTemplate:
    if template_id not in PROMPTS:
        raise ConfigError(f"no prompt template {template_id!r}; known: {sorted(PROMPTS)}")
    return PROMPTS[template_id]


def render(template_id: str, **values: str) -> str:
    """Render a template by id."""
    return _get(template_id).render(**values)


def verbalise(triples: Iterable[tuple[int, int, int]], entity_labels: Mapping[int, str], relation_labels: Mapping[int, str]) -> str:
    """Triples as "head relation tail" lines in a stable order (sorted by the text), for the grounded prompt.
    An empty subgraph reads "(no facts)" rather than an empty line, so the prompt says what the model was given."""
    lines = sorted({f"{entity_labels.get(h, h)} {relation_labels.get(r, r)} {entity_labels.get(t, t)}" for h, r, t in triples})
    return "\n".join(lines) if lines else "(no facts)"

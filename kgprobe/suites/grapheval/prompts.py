"""GraphEval's prompt: the paper's Table 6 instruction around one statement.

The Table 6 instruction is the Alpaca-style block GraphEval sends to LLaMA 2 (Gemma's differs only in its turn
markers, which a chat template supplies here). The oracle reference model answers ``True.`` / ``False.`` from the
gold label (answer kind ``tf``), which :func:`~kgprobe.scoring.answers.parse_true_false` reads as true / false,
like the paper's ``Yes, the statement is true.`` / ``No, the statement is false.`` / ``I don't know.``.

    >>> statement_prompt({"item_id": "a1", "question": "Paris is the capital of France.", "expected": "true"}).gold
    'true'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgprobe.generation.records import Prompt

__all__ = ["INSTRUCTION", "TEMPLATE_ID", "statement_prompt"]

#: The prompt template's id, stored with every response.
TEMPLATE_ID = "grapheval-table6-v1"
#: Table 6 of the paper (LLaMA 2 form), with ``{statement}`` where the paper's "Input" goes.
INSTRUCTION = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
    "You are given a statement. You are asked to judge whether the statement is true or false. "
    "Answer 'Yes, the statement is true.' if you know the statement is true. "
    "Answer 'No, the statement is false.' if you know the statement is false. "
    "Otherwise, answer 'I don't know.'\n\n"
    "### Input:\n{statement}\n\n"
    "### Response:\n"
)


def statement_prompt(item: Mapping[str, Any]) -> Prompt:
    """The prompt of one GraphEval item: its statement in the Table 6 instruction, gold ``true`` / ``false`` for
    the reference models (answer kind ``tf``)."""
    return Prompt(item_id=str(item["item_id"]), text=INSTRUCTION.format(statement=item["question"]),
                  template_id=TEMPLATE_ID, gold=str(item["expected"]), answer_kind="tf")

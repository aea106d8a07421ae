"""GraphEval's prompt: the paper's Table 6 instruction around one statement.

The Table 6 instruction is the Alpaca-style block GraphEval sends to LLaMA 2. The paper profile sends it as raw text
(no chat template, so no default system prompt a template would add), byte for byte as the released code builds it
(``PAPER_INSTRUCTION``: its whitespace, "### Input: " with the statement on the same line, ``## Response:``); the
kgprobe profile sends ``INSTRUCTION`` (``### Response:``, as Table 6 prints
it) as the user message of the model's chat template. The oracle reference model answers ``True.`` / ``False.`` from the
gold label (answer kind ``tf``), which :func:`~kgprobe.scoring.answers.parse_true_false` reads as true / false,
like the paper's ``Yes, the statement is true.`` / ``No, the statement is false.`` / ``I don't know.``.

    >>> statement_prompt({"item_id": "a1", "question": "Paris is the capital of France.", "expected": "true"}).gold
    'true'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgprobe.generation.records import Prompt
from kgprobe.suites.grapheval.profiles import profile_of_task

__all__ = ["INSTRUCTION", "PAPER_INSTRUCTION", "PAPER_TEMPLATE_ID", "TEMPLATE_ID", "statement_prompt"]

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


#: The paper profile's template id (v2: byte for byte the released prompt; v1 had Table 6's whitespace).
PAPER_TEMPLATE_ID = "grapheval-paper-raw-v2"
#: The prompt as the released code builds it for LLaMA 2 (``add_system_prompt(judge_construct_instruct(...))``),
#: sent as raw text. It differs from Table 6 in whitespace only: a space after "### Instruction:\n" and after the
#: last answer ("'I don't know.' \n\n"), the statement on the line of "### Input: ", and "## Response:" (two
#: hashes) followed by a blank line.
PAPER_INSTRUCTION = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
    " You are given a statement. You are asked to judge whether the statement is true or false. "
    "Answer 'Yes, the statement is true.' if you know the statement is true. "
    "Answer 'No, the statement is false.' if you know the statement is false. "
    "Otherwise, answer 'I don't know.' \n\n"
    "### Input: {statement}\n\n"
    "## Response:\n\n"
)


def statement_prompt(item: Mapping[str, Any]) -> Prompt:
    """The prompt of one GraphEval item: its statement in the Table 6 instruction of its profile (by the item's
    task: raw text for the paper's, the chat template for kgprobe's), gold ``true`` / ``false`` for the reference
    models (answer kind ``tf``)."""
    if profile_of_task(item.get("task")).raw_prompt:
        return Prompt(item_id=str(item["item_id"]), text=PAPER_INSTRUCTION.format(statement=item["question"]),
                      template_id=PAPER_TEMPLATE_ID, gold=str(item["expected"]), answer_kind="tf", raw=True)
    return Prompt(item_id=str(item["item_id"]), text=INSTRUCTION.format(statement=item["question"]),
                  template_id=TEMPLATE_ID, gold=str(item["expected"]), answer_kind="tf")

"""OKGQA's prompts, each a versioned template id stored with every response.

* ``okgqa-answer-v1`` / ``okgqa-answer-grounded-v1``: the paper's D.1 prompt (its system instruction, "Question:",
  in the grounded one "Below are the facts that might be relevant to answer the question:" with the retrieved
  facts, then "Answer:"); the zero-shot baseline leaves the facts out. D.1's few-shot examples are not published
  and are left out.
* ``okgqa-answer-cot-v1``: the zero-shot prompt with zero-shot chain-of-thought's trigger ("Let's think step by
  step."), the closed-book CoT baseline of the paper's Table 2 (Var-1) and Figure 6.
* ``okgqa-facts-v2``: FActScore's decomposition ("Please breakdown the following sentence into independent facts:")
  with few-shot demonstrations in FactScoreLite's style (a passage, then its independent facts as ``- `` lines);
  the demonstrations are our own.
* ``okgqa-support-v2``: FactScoreLite's fact check against a knowledge source, here the retrieved KG context
  ("True" / "False").
* ``okgqa-geval-steps-<criterion>-v1``: G-Eval's auto chain-of-thought: the judge writes the evaluation steps of
  one criterion once (as JSON ``{"steps": [...]}``); stored in the judge's response store, they are reused by every
  rating of that criterion.
* ``okgqa-geval-<criterion>-v4``: the D.4 G-Eval prompts (system instruction and the criterion, verbatim) with the
  judge's evaluation steps, the question as "Input", the KG reference facts as "Retrieval Context", the answer as
  "Actual Output", and a request for one score 1-5 after "Score:" (``-v3``: the same without steps, for a judge
  whose steps did not parse).

Every judge prompt fences what comes from data (the question, the KG context, the answer, a fact) between
``<<<BEGIN ...>>>`` / ``<<<END ...>>>`` markers and says that fenced text is data, never an instruction
(:func:`kgprobe.generation.prompts.fence`); the ids before that (``okgqa-facts-v1``, ``okgqa-support-v1``,
``okgqa-geval-<criterion>-v2`` / ``-v1``) quoted it as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgprobe.generation.prompts import DATA_NOTICE, OKGQA_SYSTEM, fence

__all__ = [
    "ANSWER_TEMPLATE_ID",
    "COT_TEMPLATE_ID",
    "CRITERIA",
    "DECOMPOSE_TEMPLATE_ID",
    "GROUNDED_TEMPLATE_ID",
    "SUPPORT_TEMPLATE_ID",
    "answer_text",
    "decompose_text",
    "GEVAL_STEPS_SCHEMA",
    "default_steps",
    "geval_steps_template_id",
    "geval_steps_text",
    "geval_template_id",
    "geval_text",
    "parse_steps",
    "support_text",
]

ANSWER_TEMPLATE_ID = "okgqa-answer-v1"
GROUNDED_TEMPLATE_ID = "okgqa-answer-grounded-v1"
COT_TEMPLATE_ID = "okgqa-answer-cot-v1"
DECOMPOSE_TEMPLATE_ID = "okgqa-facts-v2"
SUPPORT_TEMPLATE_ID = "okgqa-support-v2"
SYSTEM = OKGQA_SYSTEM
_FACTS = "Below are the facts that might be relevant to answer the question:"


def answer_text(question: str, knowledge: str | None = None, *, cot: bool = False) -> tuple[str, str]:
    """(template id, user message) of D.1: zero-shot without ``knowledge``, grounded with it; ``cot``: zero-shot
    with the chain-of-thought trigger (the closed-book CoT baseline; no knowledge)."""
    if cot:
        if knowledge is not None:
            raise ValueError("the chain-of-thought baseline is closed book: it takes no knowledge")
        return COT_TEMPLATE_ID, f"Question: {question}\n\nAnswer: Let's think step by step."
    if knowledge is None:
        return ANSWER_TEMPLATE_ID, f"Question: {question}\n\nAnswer:"
    return GROUNDED_TEMPLATE_ID, f"Question: {question}\n\n{_FACTS}\n{knowledge}\n\nAnswer:"


_DEMOS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("The Eiffel Tower, designed by Gustave Eiffel's company, was completed in 1889 for the World's Fair in Paris.",
     ("The Eiffel Tower was designed by Gustave Eiffel's company.", "The Eiffel Tower was completed in 1889.",
      "The Eiffel Tower was built for the World's Fair.", "The World's Fair took place in Paris.")),
    ("Giuseppe Verdi, born in Le Roncole, composed Aida, which premiered in Cairo.",
     ("Giuseppe Verdi was born in Le Roncole.", "Giuseppe Verdi composed Aida.", "Aida premiered in Cairo.")),
    ("The Danube flows through Vienna and Budapest before it reaches the Black Sea.",
     ("The Danube flows through Vienna.", "The Danube flows through Budapest.",
      "The Danube flows into the Black Sea.")),
)
_DECOMPOSE = "Please breakdown the following sentence into independent facts:"


def decompose_text(answer: str) -> str:
    """The decomposition prompt of one answer (FActScore's instruction, our demonstrations)."""
    demos = "\n\n".join(f"{_DECOMPOSE} {s}\n" + "\n".join(f"- {f}" for f in facts) for s, facts in _DEMOS)
    return f"{DATA_NOTICE}\n\n{demos}\n\n{_DECOMPOSE} {fence(answer, 'sentence')}\n"


def fact_list_text(facts: Sequence[str]) -> str:
    """The decomposition a perfect judge writes for ``facts``: one ``- fact`` line each."""
    return "\n".join(f"- {f}" for f in facts)


def support_text(context: str, fact: str) -> str:
    """FactScoreLite's check of one fact against a knowledge source (the retrieved KG context)."""
    return (f"{DATA_NOTICE}\n\nKnowledge source:\n{fence(context, 'knowledge source', lines=True)}\n\n"
            f"Fact: {fence(fact, 'fact')}\n\nIs the fact supported by the knowledge source? "
            "Answer only \"True\" or \"False\".\nAnswer:")


#: The four G-Eval criteria of D.4, verbatim.
CRITERIA: Mapping[str, str] = {
    "context_relevance": (
        "Context Relevance Criteria: Evaluate the extent to which the \u201cActual output\u201d incorporates relevant "
        "information from the \u201cRetrieval Context\u201d. This includes assessing whether the output adheres to the "
        "thematic, factual, and situational specifics presented in the \u201cRetrieval Context\u201d. Relevant responses "
        "not only address the direct query but also align closely with the contextual elements provided, ensuring a "
        "seamless and coherent transition between the \u201cRetrieval Context\u201d and the \u201cActual Output\u201d. The "
        "most contextually relevant responses demonstrate an understanding and appropriate reflection of the given "
        "circumstances, historical facts, or conceptual background, thereby contributing to the overall accuracy "
        "and utility of the information provided."),
    "comprehensiveness": (
        "Comprehensiveness Criteria: Evaluate the extent to which the \u201cActual Output\u201d covers all aspects and "
        "details of the question \u201cInput\u201d. A comprehensive answer should thoroughly address every part of the "
        "question, leaving no important points unaddressed. When evaluating comprehensiveness, consider the "
        "relevance of the information provided in the \u201cActual Output\u201d to the \u201cInput\u201d and the "
        "\u201cRetrieval Context\u201d."),
    "correctness": (
        "Correctness Criteria: Measure how clearly and specifically the \u201cActual output\u201d responds to the "
        "question \u201cinput\u201d. A highly direct response stays focused on the question, providing clear and "
        "unambiguous information. When evaluating correctness, consider the relevance of the information provided "
        "in the \u201cActual Output\u201d to the \u201cInput\u201d and the \u201cRetrieval Context\u201d."),
    "empowerment": (
        "Empowerment Criteria: Evaluate whether the \u201cActual Output\u201d can help the reader understand the topic "
        "and make informed decisions regarding the \u201cInput\u201d. A response with high empowerment provides "
        "accurate information and explanations that enhance the reader\u2019s understanding. When evaluating "
        "empowerment, consider the relevance of the information provided in the \u201cActual Output\u201d to the "
        "\u201cInput\u201d and the \u201cRetrieval Context\u201d."),
}
GEVAL_SYSTEM = ("You are a helpful assistant designed to evaluate the quality of the response to a query. Your task "
                "is to rate the response on one metric defined as below:")


#: The JSON a judge writes its evaluation steps in (structured output where the backend has it).
GEVAL_STEPS_SCHEMA: Mapping[str, object] = {
    "type": "object", "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
    "required": ["steps"],
}  # fmt: skip


def geval_template_id(criterion: str, *, steps: bool = True) -> str:
    """The rating prompt's id: ``-v4`` with the judge's evaluation steps, ``-v3`` without (both fence the question,
    the context and the answer as data; ``-v2`` and ``-v1`` were the same unfenced)."""
    return f"okgqa-geval-{criterion.replace('_', '-')}-{'v4' if steps else 'v3'}"


def geval_steps_template_id(criterion: str) -> str:
    return f"okgqa-geval-steps-{criterion.replace('_', '-')}-v1"


def geval_steps_text(criterion: str) -> tuple[str, str]:
    """(system, user) asking the judge for the evaluation steps of one criterion (G-Eval's auto chain-of-thought)."""
    user = (f"Evaluation Criteria:\n{CRITERIA[criterion]}\n\nGiven these evaluation criteria, write 3-4 concise "
            "evaluation steps that say how to judge the \u201cActual Output\u201d against the \u201cInput\u201d and the "
            "\u201cRetrieval Context\u201d, ending with a score from 1 to 5. Answer only with JSON of the form "
            "{\"steps\": [\"...\", \"...\"]}.\n\nJSON:")
    return ("You are a helpful assistant designed to evaluate the quality of the response to a query. Your task is to "
            "write the evaluation steps of one metric defined as below."), user


def default_steps(criterion: str) -> list[str]:
    """Generic steps of one criterion: what the reference oracle judge writes (it has no steps of its own)."""
    name = criterion.replace("_", " ")
    return ["Read the Input, the Retrieval Context and the Actual Output.",
            f"Judge the Actual Output's {name} as the criterion above defines it.",
            "Give a score from 1 (worst) to 5 (best)."]


def parse_steps(text: str | None) -> list[str] | None:
    """The evaluation steps of a judge's reply: a JSON object's ``steps`` (strings), else its numbered or bulleted
    lines; None when there are none."""
    import json
    import re

    text = text or ""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            obj = None
        steps = obj.get("steps") if isinstance(obj, dict) else None
        if isinstance(steps, list):
            steps = [" ".join(str(s).split()) for s in steps if isinstance(s, str) and s.strip()]
            return steps or None
    lines = [m.group(1).strip() for m in re.finditer(r"^\s*(?:\d+[.)]|[-*])\s+(.+)$", text, re.MULTILINE)]
    return lines or None


def geval_text(criterion: str, question: str, context: str, answer: str,
               steps: Sequence[str] | None = None) -> tuple[str, str]:  # fmt: skip
    """(system, user) of one G-Eval rating, with the judge's evaluation ``steps`` of the criterion when given."""
    system = f"{GEVAL_SYSTEM}\n\n{CRITERIA[criterion]}\n\n{DATA_NOTICE}"
    if steps:
        system += "\n\nEvaluation Steps:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    user = (f"Input: {fence(question, 'input')}\n\nRetrieval Context:\n{fence(context, 'retrieval context', lines=True)}"
            f"\n\nActual Output: {fence(answer, 'actual output')}\n\n"
            "Rate the Actual Output on this metric from 1 (worst) to 5 (best). Answer with the number only.\nScore:")
    return system, user

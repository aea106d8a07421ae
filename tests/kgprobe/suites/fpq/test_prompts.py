"""Prompts from KG-FPQ items, and the limit that keeps whole premise groups."""

from __future__ import annotations

import pytest

from kgprobe.suites.fpq.prompts import fpq_prompts, grounded_fpq_prompts, limit_items, premise_key
from kgprobe.generation import Prompt
from kgprobe.generation.prompts import OKGQA_SYSTEM, PROMPTS, render


def _items(subjects):
    out = []
    for s in subjects:
        for fmt in ("yn", "wh"):
            out.append({"id": f"{s:02d}-{fmt}-t", "format": fmt, "premise": "tpq", "subject": s, "relation": 1,
                        "true_object": 100 + s, "question": f"Q{s}{fmt}?", "answer": "yes" if fmt == "yn" else "valid premise"})
            for k in range(2):
                out.append({"id": f"{s:02d}-{fmt}-f{k}", "format": fmt, "premise": "fpq", "subject": s, "relation": 1,
                            "true_object": 100 + s, "question": f"F{s}{fmt}{k}?", "answer": "no" if fmt == "yn" else "false premise"})
    return out


def test_a_limit_keeps_every_question_of_the_chosen_triples():
    items = _items(range(10))
    kept = limit_items(items, limit=3)
    groups = {premise_key(it) for it in kept}
    assert len(groups) == 3 and len(kept) == 3 * 6  # TPQ + 2 FPQs, in both formats
    assert groups == {(s, 1, 100 + s) for s in (0, 1, 2)}  # the smallest item ids
    # more triples elsewhere do not change the choice; formats filter the items
    assert limit_items(_items(range(20)), limit=3) == kept
    assert {it["format"] for it in limit_items(items, formats=("yn",), limit=3)} == {"yn"}
    assert limit_items(items) == items
    with pytest.raises(ValueError, match="positive number of true triples"):
        limit_items(items, limit=0)


def test_fpq_prompts_render_the_closed_book_template_with_the_gold_label():
    prompts = fpq_prompts(_items([4]), formats=("yn",))
    assert [p.item_id for p in prompts] == ["04-yn-t", "04-yn-f0", "04-yn-f1"]
    assert prompts[0].text == 'Question: Q4yn? Respond solely with "Yes" or "No".'
    assert (prompts[0].template_id, prompts[0].gold, prompts[1].gold) == ("fpq-yn-v1", "yes", "no")
    assert prompts[0].system is None and prompts[0].messages() == [{"role": "user", "content": prompts[0].text}]


def test_grounded_prompts_follow_okgqa_d1_system_question_facts_answer():
    items = [{**it, "subject": 7} for it in _items([4]) if it["premise"] == "tpq"]
    prompts, used = grounded_fpq_prompts(items, {"fpq-subject-7": [(7, 0, 8)]}, {7: "Verdi", 8: "Busseto"}, {0: "born in"})
    yn, wh = prompts
    assert (yn.template_id, wh.template_id) == ("okgqa-grounded-yn-v2", "okgqa-grounded-wh-v2")
    assert yn.system == wh.system == OKGQA_SYSTEM
    assert OKGQA_SYSTEM.startswith("You are a helpful assistant designed to answer the users' open-ended questions.")
    assert yn.text == ('Question: Q4yn? Respond solely with "Yes" or "No".\n\n'
                       "Below are the facts that might be relevant to answer the question:\nVerdi born in Busseto\n\nAnswer:")
    assert wh.text.startswith("Question: Q4wh? Answer the question with an answer of no more than three sentences.")
    assert wh.text.endswith("\n\nAnswer:")
    assert [m["role"] for m in yn.messages()] == ["system", "user"]
    # the old layout stays known for responses stored with it, and is not what new prompts use
    assert PROMPTS["okgqa-grounded-yn-v1"].system is None and PROMPTS["okgqa-grounded-yn-v1"].text.startswith("Below")


def test_the_judge_prompt_is_laid_out_as_kgfpq_table_9():
    text = render("fpq-judge-v2", question="Why is Walt Disney a citizen of Nepal?", answer="He was not.")
    assert text.endswith("\nInput: Q:Why is Walt Disney a citizen of Nepal?\nA: He was not.\nOutput:")
    # the current one quotes both as data, in the same layout
    text = render("fpq-judge-v3", question="Why is Walt Disney a citizen of Nepal?", answer="He was not.")
    assert text.endswith("\nInput: Q:<<<BEGIN QUESTION>>> Why is Walt Disney a citizen of Nepal? <<<END QUESTION>>>"
                         "\nA: <<<BEGIN ANSWER>>> He was not. <<<END ANSWER>>>\nReply with only \"Yes\" or \"No\"."
                         "\nOutput:")
    assert text.startswith('You are given a question and an answer, determine if the answer is factual. If the answer '
                           'is factual please output only "Yes", otherwise please output only "No".')


def test_a_system_instruction_is_part_of_the_store_key_and_plain_keys_do_not_move():
    import hashlib

    plain = Prompt("a", "Question?", "t")
    assert plain.sha256() == hashlib.sha256(b"Question?").hexdigest()  # keys stored before system prompts stay valid
    with_system = Prompt("a", "Question?", "t", system="Be brief.")
    assert with_system.sha256() not in (plain.sha256(), Prompt("a", "Question?", "t", system="Be long.").sha256())

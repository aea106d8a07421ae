"""Prompts from KG-FPQ items, and the limit that keeps whole premise groups."""

from __future__ import annotations

import pytest

from kgprobe.closed_book import fpq_prompts, limit_items, premise_key


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

"""The report's per-item drill-down (kgprobe.report.drilldown): rows, their compressed payload, and the page in a
headless chromium with 100,000 items (filter, page, open an item)."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import time
from pathlib import Path

import pytest

from kgprobe.report.drilldown import drilldown_rows, embed
from kgprobe.report.render import ReportContext, render_page

CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                  "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1600,1000")


def test_rows_join_items_votes_and_samples_in_order() -> None:
    items = [{"item_id": "q1", "question": "Is Paris in France?", "expected": "yes", "breakdown": [("relation", "in")],
              "evidence": '{"triples": [["Paris", "in", "France"]]}'}]
    votes = [{"item_id": "q1", "model": "m", "judge": "", "perturbation": "none", "task": "yn", "vote": "no",
              "expected": "yes", "correct": False},
             {"item_id": "q1", "model": "m", "judge": "oracle", "task": "yn", "vote": "yes", "correct": True}]
    samples = [{"item_id": "q1", "model": "m", "judge": "", "sample_index": 1, "text": "No.", "label": "no"},
               {"item_id": "q1", "model": "m", "judge": "", "sample_index": 0, "text": None, "label": "unknown"},
               {"item_id": "q1", "model": "m", "judge": "oracle", "sample_index": 0, "text": "x", "label": "yes"}]
    (row,) = drilldown_rows("toy", items, votes, samples)
    assert row == {"s": "toy", "m": "m", "i": "q1", "t": "yn", "b": "relation=in", "p": "Is Paris in France?",
                   "a": ["(no answer: generation failed)", "No."], "r": ["unknown", "no"], "v": "no", "e": "yes",
                   "c": "wrong", "ev": '{"triples": [["Paris", "in", "France"]]}'}
    assert drilldown_rows("toy", items, [{**votes[0], "vote": "unknown"}], samples)[0]["c"] == "unknown"
    assert json.loads(gzip.decompress(base64.b64decode(embed([row])))) == [row]


def test_the_heuristic_extractors_reading_is_shown_where_a_suite_has_no_judge_free_one() -> None:
    """OKGQA and Drowzee read answers with the heuristic claim extractor (judge "heuristic") when no judge model is
    set: those items are in the drill-down with their own samples; a judge model's reading is not, and a suite
    with both a judge-free and a heuristic vote on an item shows the judge-free one once."""
    items = [{"item_id": "q1", "question": "Who painted it?", "expected": "yes", "breakdown": {}, "evidence": "{}"}]
    votes = [{"item_id": "q1", "model": "m", "judge": "heuristic", "perturbation": "none", "task": "open_qa",
              "vote": "no", "expected": "yes", "correct": False},
             {"item_id": "q1", "model": "m", "judge": "gpt-judge", "perturbation": "none", "task": "open_qa",
              "vote": "yes", "expected": "yes", "correct": True}]
    samples = [{"item_id": "q1", "model": "m", "judge": "heuristic", "sample_index": 0, "text": "Monet.",
                "label": "no"},
               {"item_id": "q1", "model": "m", "judge": "gpt-judge", "sample_index": 0, "text": "Monet.",
                "label": "yes"}]
    (row,) = drilldown_rows("okgqa", items, votes, samples)
    assert (row["v"], row["c"], row["a"], row["r"]) == ("no", "wrong", ["Monet."], ["no"])
    plain = {**votes[0], "judge": "", "vote": "yes", "correct": True}
    (both,) = drilldown_rows("okgqa", items, [votes[0], plain], samples)
    assert (both["v"], both["c"]) == ("yes", "correct")


def _synthetic(n: int) -> list[dict]:
    rows = []
    for k in range(n):
        status = ("correct", "wrong", "unknown")[k % 3]
        rows.append({"s": ("fpq", "grapheval")[k % 2], "m": f"model-{k % 4}", "i": f"item-{k:06d}", "t": "yn",
                     "b": f"relation=r{k % 17}", "p": f"Question number {k}: is it true that entity {k} holds?",
                     "a": [f"Answer {k} yes", f"Answer {k} no"], "r": ["yes", "no"], "v": "yes", "e": "no",
                     "c": status, "ev": f'{{"triples": [["e{k}", "r{k % 17}", "t{k}"]]}}'})
    return rows


@pytest.mark.slow
def test_the_page_pages_filters_and_opens_100000_items_in_chromium(tmp_path: Path) -> None:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install chromium "
                    "chromium-driver): the drill-down test needs a real browser")
    rows = _synthetic(100_000)
    ctx = ReportContext(project="big", config_path="x.yaml", snapshot_ids=("s",), created_at="2026-01-01")
    page = tmp_path / "report.html"
    page.write_text(render_page(ctx, drilldown=rows), encoding="utf-8")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    try:
        started = time.perf_counter()
        driver.get(page.as_uri())
        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.itemsReady") == "1")
        ready_s = time.perf_counter() - started
        assert ready_s < 30, f"100,000 items took {ready_s:.1f} s to become usable"
        print(f"drill-down: 100,000 items usable after {ready_s:.2f} s; page {page.stat().st_size:,} bytes")
        label = driver.find_element(By.ID, "kgp-page")
        assert "page 1 of 2,000 (100,000 items)" in label.text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#kgp-table tbody tr")) == 50
        Select(driver.find_element(By.ID, "kgp-model")).select_by_visible_text("model-1")
        Select(driver.find_element(By.ID, "kgp-status")).select_by_visible_text("wrong")
        expected = sum(1 for r in rows if r["m"] == "model-1" and r["c"] == "wrong")
        assert f"({expected:,} items)" in label.text
        driver.find_element(By.ID, "kgp-next").click()
        assert "page 2 of" in label.text
        first = driver.find_element(By.CSS_SELECTOR, "#kgp-table tbody tr")
        item = first.get_attribute("data-item")
        want = next(r for r in rows if r["i"] == item)
        assert want["m"] == "model-1" and want["c"] == "wrong"
        first.click()
        detail = driver.find_element(By.ID, "kgp-detail").text
        assert want["p"] in detail and want["a"][1] in detail and "expected no — wrong" in detail
        box = driver.find_element(By.ID, "kgp-search")
        box.send_keys("entity 77777 holds")
        assert "(1 items)" in label.text or "(0 items)" in label.text
        assert ("(1 items)" in label.text) == (rows[77777]["m"] == "model-1" and rows[77777]["c"] == "wrong")
        driver.save_screenshot(str(tmp_path / "drilldown.png"))
    finally:
        driver.quit()


def test_evidence_shows_its_triples_by_label() -> None:
    import json

    from kgprobe.report.drilldown import readable_evidence

    ev = {"rule": "negation", "derived": {"subject": 192, "relation": "premiered_in", "object": 72, "truth": False},
          "premises": [{"head": 192, "relation": "premiered_in", "tail": 644}],
          "entities": {"72": "Bayreuth", "192": "Fidelio", "644": "Vienna"},
          "relations": {"premiered_in": "place of first performance"}}
    shown = json.loads(readable_evidence(json.dumps(ev)))
    assert shown == {"rule": "negation",
                     "derived": {"triple": "Fidelio — place of first performance → Bayreuth", "truth": False},
                     "premises": ["Fidelio — place of first performance → Vienna"]}
    # evidence without label maps, or not an object, is shown as stored
    assert readable_evidence('{"record": {"title": "Heat"}}') == '{"record": {"title": "Heat"}}'
    assert readable_evidence("not json") == "not json" and readable_evidence(None) == ""

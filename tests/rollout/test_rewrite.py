"""The check the vLLM narration pass puts every rewrite through (`rollout/rewrite.py`): a
faithful paraphrase passes; each way a rewrite can lose an event or claim what the research
never saw is refused."""

from __future__ import annotations

import pytest

from worldforge.rollout.measure import NameMask
from worldforge.rollout.rewrite import check_rewrite

MASK = NameMask(["Nilun Group", "Caspel Health", "Braeria", "永和理工大学", "冯平文"])
EN = ("Nilun Group qualifies: its article gives revenue 5.6 million USD. 12 of 40 candidates checked; "
      "Caspel Health is next (https://ismerpedia.org/wiki/Caspel_Health).")
GOOD = ("The article on Nilun Group puts revenue at 5.6 million USD, so it stays in. That makes 12 of 40 "
        "candidates done, and Caspel Health comes next: https://ismerpedia.org/wiki/Caspel_Health")


def test_a_faithful_paraphrase_passes():
    assert check_rewrite(EN, GOOD, {"Braeria"}, MASK, "en") == []
    zh = "冯平文在永和理工大学任职，始于1994年；还剩3个候选。"
    assert check_rewrite(zh, "还剩3个候选要看。冯平文从1994年起在永和理工大学任职，这一行可以记下。", set(), MASK, "zh") == []


@pytest.mark.parametrize("bad, problem", [
    (GOOD.replace("5.6", "5.9"), "number added"),
    (GOOD.replace("12 of 40 candidates done, and ", ""), "number dropped"),
    (GOOD.replace("Caspel Health comes next", "the next one comes next"), "name dropped"),
    (GOOD + " Braeria is where both are based.", "name added"),  # shown in context: allowed below
    (GOOD.replace("stays in.", "stays in, much like Google in Paris."), "words added"),
    (GOOD.replace("https://ismerpedia.org/wiki/Caspel_Health", "https://example.org/x"), "url added"),
    (GOOD.replace("The article", "- The article"), "markup"),
    ("", "empty"),
    (GOOD * 4, "length"),
])
def test_each_kind_of_damage_is_refused(bad, problem):
    got = check_rewrite(EN, bad, set(), MASK, "en")
    assert problem in got, got


@pytest.mark.parametrize("original, rewrite, problem", [
    # what SmolLM2-135M-Instruct wrote for demo messages, and the first check let through
    ("Opening Cities in Tisland.", "Cities in Tisland.", "length"),  # the action is gone
    ("I'll read Cities in Tisland, the list itself.", "Cities in Tisland, the list itself.", "first person dropped"),
    ("Companies in Braeria is the list to work from.", "Companies in  Braeria is the list to work from.", "unchanged"),
    ("Let me read Lunnilo Ultra.", "Lunnilo Ultra, no.", "negation added"),
    ("Against that, Yorhaven goes: 22,423 km for area misses \"lying in regions covering between 5,000 and 20,000 km\".",
     "Against that, Yorhaven goes: 22,423 km for area misses \"lying in regions covering between 5,000 and 20,000 km\" "
     "with area misses \"lying in regions covering between 5,000 and 20,000 km\".", "repeated"),
    ("冯平文的页面打开了，继续核对。", "冯平文的页面没有打开，继续核对。", "negation added"),
    ("Ratel Partners came back as it stood on 2020-01-18; a fresh load should give the current text.",
     "The current text is as follows:\n\nRatel Partners came back as it stood on 2020-01-18; a fresh load should give "
     "the current text.", "preamble"),
])
def test_a_real_small_models_slips_are_refused(original, rewrite, problem):
    got = check_rewrite(original, rewrite, set(), NameMask(["Tisland", "Lunnilo Ultra", "Yorhaven", "冯平文", "Ratel Partners", "Braeria"]),
                        "zh" if "冯" in original else "en")
    assert problem in got, got


def test_a_name_the_context_showed_may_be_added_and_chinese_stays_chinese():
    assert check_rewrite(EN, GOOD + " Both are based in Braeria.", {"Braeria"}, MASK, "en") == []
    zh = "冯平文在永和理工大学任职，始于1994年；还剩3个候选。"
    assert "language" in check_rewrite(zh, "Feng Pingwen worked at 永和理工大学 from 1994; 3 candidates remain, 冯平文.", set(), MASK, "zh")
    assert "words added" in check_rewrite(zh, "冯平文在永和理工大学（Harvard）任职，始于1994年；还剩3个候选。", set(), MASK, "zh")
    assert "cut at max_tokens" in check_rewrite(EN, GOOD, set(), MASK, "en", finish_reason="length")


def test_the_new_rules_do_not_refuse_a_fair_paraphrase():
    mask = NameMask(["Lunnilo Ultra", "冯平文"])
    got = check_rewrite("Let me open Lunnilo Ultra next.", "Let's open Lunnilo Ultra now.", set(), mask, "en")
    assert "first person dropped" not in got and "negation added" not in got, got
    got = check_rewrite("我打开冯平文的两个页面。", "我分别打开冯平文的这两个页面，看看未来的安排。", set(), mask, "zh")
    assert "negation added" not in got, got

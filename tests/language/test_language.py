"""The language layer (issue 56): each language is data, every language has every key, and the
code outside the layer branches on no language.

A language is written by `worldforge/language/<code>.yaml` (marks, dates, cases, how words are
counted), and its words by the banks of the stages: pages (`web/banks`), questions
(`tasks/questions`), the researcher's narration and notes (`rollout/narration`)."""

from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path

import pytest
import yaml

from worldforge import language

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "worldforge"

# Every family of per-language data files: the layer's own, and each stage's banks.
FAMILIES = {
    "language": PKG / "language",
    "pages": PKG / "web" / "banks",
    "questions": PKG / "tasks" / "questions",
    "narration": PKG / "rollout" / "narration",
}


# Lookups, not templates: keyed by what each language has (a tool error's words, English says it
# as the tool does; units; ordinal suffixes; slips and machine-text tells by name; the card's
# section; a tokenizer's own pattern; the date styles sites pick from; the other words for a
# label's word; the verbs a language's date labels are the past of).
OPEN = {"narration": [("errors",)], "questions": [("order", "nested_asks"), ("multihop", "did")],
        "language": [("units",), ("scaled_units",),
                     ("ordinals",), ("card",), ("tells",), ("checks", "page_slips"), ("checks", "question_slips"), ("checks", "prose_slips"),
                     ("search", "tokenizer"), ("dates", "styles"), ("sites", "profiles"), ("reading", "same_as"),
                     # a rule of the grammar a language has, or null where it has none
                     ("grammar", "plural"), ("grammar", "singular"), ("grammar", "label_shapes"), ("grammar", "tense_adverbs"), ("grammar", "one_verbs"),
                     ("grammar", "articles"), ("grammar", "lower_first")]}


def _leaves(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _leaves(x, (*path, k))
    else:
        yield path, v


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_language_has_every_key(family):
    """Each family has a file for every language, with the same keys down to the leaves (a key a
    language does not use is named under its `unused`)."""
    folder = FAMILIES[family]
    files = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}
    assert sorted(files) == language.languages(), f"{family}: one file per language in {folder}"
    def kept(data):
        return {p: v for p, v in _leaves({k: v for k, v in data.items() if k != "unused"})
                if not any(p[:len(o)] == o for o in OPEN.get(family, ()))}

    base = kept(files[language.BASE])
    for code, data in files.items():
        unused = set(data.get("unused") or [])
        got = kept(data)
        missing = {p for p in base if p not in got and p[0] not in unused}
        extra = set(got) - set(base)
        assert not missing and not extra, f"{family}/{code}.yaml: missing {sorted(missing)}, not in {language.BASE}: {sorted(extra)}"


def test_the_layer_writes_each_language_its_way():
    en, zh = language.get("en"), language.get("zh")
    assert language.get(None) is en and language.BASE == "en"
    assert en.join(["A"]) == "A" and en.join(["A", "B"]) == "A and B" and en.join(["A", "B", "C"]) == "A, B and C"
    assert zh.join(["甲", "乙", "丙"]) == "甲、乙和丙"
    day = dt.date(1998, 6, 3)
    assert en.date(day) == "June 3, 1998" and zh.date(day) == "1998年6月3日"
    assert en.years(1990, 2004) == " from 1990 to 2004" and en.years(None, 2004) == " to 2004"
    assert zh.years(1990, None) == "（1990—）"
    assert en.mid("Population") == "population" and zh.mid("人口") == "人口"
    assert en.mid("IATA code") == "IATA code" and en.mid("Founded by") == "founded by"  # an acronym keeps its capitals
    assert en.quote("x") == '"x"' and zh.quote("甲") == "“甲”"
    assert en.paren("figures") == " (figures)" and zh.paren("数值") == "（数值）"
    assert en.with_unit("37", "km") == "37 km" and zh.with_unit("37", "公里") == "37公里"
    assert en.has_word("the amber league", "amber") and not en.has_word("the amberly league", "amber")
    assert zh.has_word("位于琥珀联赛", "琥珀")
    assert en.tokens("The cat, the hat") == ["the", "cat", "the", "hat"] and zh.tokens("甲 乙") == ["甲", "乙"]
    # a note written with ASCII marks, as Chinese writes it; English keeps its own
    assert zh.retype("已排除: 甲公司, 乙公司 (2)") == "已排除：甲公司、乙公司（2）"
    assert en.retype("Rejected: A, B (2)") == "Rejected: A, B (2)"
    assert language.written_in("华星科技的人口") is zh and language.written_in("Braeria") is en
    assert zh.foreign_script("冯平文 Harvard") and not en.foreign_script("Braeria, 1998")
    assert en.reading.first_person.search("Let's open it") and zh.reading.negation.search("没有")


def test_an_unknown_language_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown language 'xx'; known: en, es, zh .*worldforge/language/<code>\.yaml"):
        language.get("xx")


def _branches():
    spec = importlib.util.spec_from_file_location("language_bench", REPO / "benchmarks" / "language.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# Files outside the layer that still branch on a language or keep a table keyed by one, with
# (branches, tables) as benchmarks/language.py counts them. The list only shrinks: a new file
# that branches fails, and a file that lost its branches must leave the list (issue 56's target
# is none). The world and rollout stages have none left.
def test_no_file_branches_on_a_language():
    """No Python file outside the layer compares a language code or keeps a table keyed by one:
    a language's ways are its data files (`BASE`, the packs' own language, is the one name code
    may ask about: "is this the pack's own text?")."""
    got = _branches().table()
    assert not got, f"these files branch on a language outside worldforge/language: {got}; say it through the layer"


def test_the_counter_sees_each_kind_of_branch(tmp_path):
    bench = _branches()
    src = tmp_path / "x.py"
    src.write_text('A = {"en": 1, "zh": 2}\n'
                   'def f(lang, self):\n'
                   '    x = A["zh"]\n'
                   '    if lang == "zh":\n'
                   '        return 1\n'
                   '    return 2 if self.zh else 3\n')
    assert bench.count(src) == (2, 2)
    src.write_text("def f(lang):\n    return lang.mid('x')\n")
    assert bench.count(src) == (0, 0)


def test_each_english_slip_class_catches_its_slip_and_not_its_fix():
    """The render report's prose slips (issue 59): each class matches the slip it names and not
    the sentence as the writer now puts it."""
    en = language.get("en")
    cases = {
        "one in the plural": ("The researcher has published 1 articles.", "The researcher has published 1 article."),
        "a label twice": ("- **Clubs:** [A](u) (2001)\n- **Born:** 1970\n- **Clubs:** [B](v)\n",
                          "- **Clubs:** [A](u) (2001); [B](v)\n- **Born:** 1970\n"),
        "later, then earlier": ("and later Morgan was earlier employed by Loli Group", "and later Morgan was employed by Loli Group"),
        "a plural label as one": ("the authors of Deep Nets is [Ann Lee](u).", "the authors of Deep Nets include [Ann Lee](u)."),
        "an acronym in lower case": ("The iata code of Tisstad is TSD.", "The IATA code of Tisstad is TSD."),
        "a name as a measure": ("Valdel has a league of Premier Division.", "Valdel has a population of 5,000."),
        "a figure first": ("169,946 people is the population of Loirland.", "The population of Loirland is 169,946 people."),
    }
    assert set(cases) == set(en.checks.prose_slips)
    for name, (slip, fixed) in cases.items():
        assert en.checks.prose_slips[name].search(slip), name
        assert not en.checks.prose_slips[name].search(fixed), name


def test_a_count_of_one_takes_the_singular():
    en, zh = language.get("en"), language.get("zh")
    assert en.for_one("{subject} has published {value} articles") == "{subject} has published {value} article"
    assert en.for_one("{value} musicians have played in {subject}") == "{value} musician has played in {subject}"
    assert en.for_one("{value} is the mayor of {subject}") == "{value} is the mayor of {subject}"
    assert zh.for_one("{subject}发表了{value}篇文章") == "{subject}发表了{value}篇文章"
    assert en.singular("Prizes won") == "prize won" and en.singular("Clubs") == "club" and en.singular("Status") is None
    assert en.singular("Discography") is None and en.grammar.has_plurals and not zh.grammar.has_plurals

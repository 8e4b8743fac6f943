"""The world lexicon (issue 56): one module names a world's types, labels and relations in each
language, and pages, questions and headers all ask it.

Properties: one lexicon per (world, language), built once; a type's noun and plural come from the
pack's words in the language (the language's singular of its plural) and never fall back to
another language's word silently; people are the types the pack declares or whose names take a
first name; a relation's label on its target's page falls back to the language's own pattern; a
list column is named after the link (two relations to one type are two lists); a link row's
other end is the relation's role, else the other type. And no module outside the lexicon works
out a type's plural, a person type or an inverse label on its own.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from worldforge.language import get as get_language
from worldforge.world import load_world
from worldforge.world.lexicon import Lexicon

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def worlds():
    return {name: load_world(ROOT / path) for name, path in (
        ("en", "worlds/demo.yaml"), ("zh", "worlds/demo_zh.yaml"), ("es", "worlds/demo_es.yaml"),
        ("league", "tests/packs/league_world.yaml"), ("culinary", "tests/packs/culinary_world.yaml"),
        ("grants", "tests/packs/grants_world.yaml"))}


def test_one_lexicon_per_world_and_language(worlds):
    w = worlds["en"]
    assert w.lexicon() is w.lexicon() is w.lexicon("en")
    assert w.lexicon("zh") is not w.lexicon() and w.lexicon("zh").language == "zh"
    assert worlds["zh"].lexicon().language == "zh"  # the world's own language by default


def test_nouns_and_plurals_in_each_language(worlds):
    en, zh, es = (worlds[k].lexicon() for k in ("en", "zh", "es"))
    assert (en.noun("company"), en.plural("company")) == ("company", "companies")
    assert en.plural("person") == "people"  # the pack's own plural, not a rule's
    assert (zh.noun("company"), zh.plural("company")) == ("公司", "公司")
    assert (es.noun("city"), es.plural("city")) == ("ciudad", "ciudades")  # Spanish singular of the pack's plural
    assert (es.noun("country"), es.plural("country")) == ("país", "países")
    # a language the packs give no word in gets the type's name, never the English plural as a noun
    lx = worlds["en"].lexicon("es")
    no_word = [t for t in worlds["en"].types if lx.own_plural(t) is None]
    assert no_word, "demo has types without Spanish words (academia, sport)"
    for t in no_word:
        assert lx.noun(t) == t.replace("_", " ")


def test_people_are_the_declared_and_the_first_named(worlds):
    assert worlds["en"].lexicon().people() == {"person", "player", "researcher"}
    assert worlds["league"].lexicon().people() == {"footballer"}  # a test pack's own person type
    for name in ("culinary", "grants"):
        w = worlds[name]
        declared = {t for t, et in w.types.items() if et.person}
        assert declared and declared <= w.lexicon().people()
    assert not worlds["en"].lexicon().person("company")


def test_inverse_label_falls_back_to_the_language_pattern(worlds):
    w = worlds["en"]
    rs = w.relations["founded_by"]
    bare = rs.model_copy(update={"inverse_label": None, "i18n": {}})  # a pack that gives none
    fake = SimpleNamespace(types=w.types, relations={**w.relations, "founded_by": bare})
    en, zh = Lexicon(fake, "en"), Lexicon(fake, "zh")
    assert en.inverse_label("founded_by") == "Companies (founded by)"
    assert zh.inverse_label("founded_by") == get_language("zh").words["inverse_label"].format(
        Plural=zh.plural("company"), plural=zh.plural("company"), relation="founded by")
    assert w.lexicon().inverse_label("founded_by") == "Companies founded"  # the pack's own


def test_list_columns_are_named_after_the_link(worlds):
    lx = worlds["league"].lexicon()
    # a verb label reads as the other type and the link; a noun label as itself
    assert lx.list_noun("city", "capital", True, "country") == ("countries it is a capital of", None)
    assert lx.list_noun("city", "footballer_born_in", True, "footballer") == ("footballers born here", None)
    assert lx.list_noun("footballer", "plays_for", False, "club") == ("clubs", "club")
    # two relations between the same two types are two lists with two names, read either way
    for name in ("en", "league", "grants"):
        w = worlds[name]
        lx = w.lexicon()
        pairs: dict = {}
        for r, rs in w.relations.items():
            pairs.setdefault((rs.source, rs.target), []).append(r)
        twins = [(k, v) for k, v in pairs.items() if len(v) > 1]
        assert twins, name
        for (src, dst), rels in twins:
            assert len({lx.list_noun(src, r, False, dst)[0] for r in rels}) == len(rels), rels
            assert len({lx.list_noun(dst, r, True, src)[0] for r in rels}) == len(rels), rels
    es = worlds["es"].lexicon()
    assert es.list_noun("company", "founded_by", False, "person")[0] == "fundadores"  # the label, mid-sentence


def test_role_is_the_relation_else_the_other_type(worlds):
    en, es = worlds["en"].lexicon(), worlds["es"].lexicon()
    assert en.role("company", "founded_by", False, "person") == "founder"
    assert en.role("company", "founded_by", True, "person") == "person"  # read backwards: the other type
    assert es.role("company", "founded_by", False, "person") == "fundador"


def test_units_in_the_language(worlds):
    zh = worlds["zh"].lexicon()
    for t, et in worlds["zh"].types.items():
        for a in et.attributes:
            u = zh.unit(t, a)
            assert u is None or not any("a" <= ch.lower() <= "z" for ch in u), (t, a, u)  # no Latin-script unit


# Where the lexicon's questions were answered before it: nobody else reads these.
_OWNED = {"is_person": "a type's person-ness", "type_plural": "a type's plural"}


def test_naming_is_asked_of_the_lexicon_only():
    offenders = []
    for p in sorted((ROOT / "worldforge").rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        if rel == "worldforge/world/lexicon.py" or rel.startswith("worldforge/world/pack/"):
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in _OWNED:
                offenders.append(f"{rel}:{node.lineno} {_OWNED[node.attr]}")
            if isinstance(node, ast.Attribute) and node.attr == "plural" and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "pages":
                offenders.append(f"{rel}:{node.lineno} a pack's plural read directly")
            if isinstance(node, ast.FunctionDef) and node.name in ("type_plural", "plural_word"):
                offenders.append(f"{rel}:{node.lineno} a second plural rule")
    assert not offenders, "name things through world.lexicon: " + "; ".join(offenders)

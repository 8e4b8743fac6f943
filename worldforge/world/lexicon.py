"""How a world names its measures in each language: one answer for pages, questions and headers.

A pack gives an attribute's unit in English (`unit: km²`) and, for a world in another language,
its own word there (`i18n: {zh: {unit: 平方公里}}`). Where it gives none, the usual word for a
common unit is used (米 for m); where there is none either, a Chinese sentence or header shows
no unit rather than an English one ("创办年数（years）" was the defect), and `lexicon_warnings`
tells the pack's author which attributes lose their unit and how to give it.
"""

from __future__ import annotations

import re

from ..language import BASE
from ..language import get as get_language
from .pack import CategoricalAttr
from .spec import attribute_label, relation_label

_LATIN = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"[a-z]{3}")  # a unit that is a word ('people'), not a symbol ('km²', 'USD')


def unit_in(attr, language: str) -> str | None:
    """An attribute's unit as text in `language`: English as the pack gives it; otherwise the
    pack's own word in that language, else the usual word for a common unit, else none where
    the only word is Latin-script (a unit in another script than the sentence's is a slip)."""
    unit = getattr(attr, "unit", None)
    if unit is None or language == BASE:  # the pack's own word
        return unit
    own = attr.text("unit", language) if hasattr(attr, "text") else None
    if own and own != unit:
        return own
    lang = get_language(language)
    if unit in lang.units:
        return lang.units[unit]
    if lang.in_script(unit) and not _WORD.search(unit):
        return unit  # a symbol read the same in a language of its script (km², USD)
    return None if _LATIN.search(unit) else unit


def lexicon_warnings(world) -> list[tuple[str, str]]:
    """(where, message) for every word a world in a language other than English lacks: an
    attribute's unit (its pages and questions show the value without one), and a type's noun, a
    label or a category's value the packs give only in English (`missing_words`)."""
    lang = world.spec.language
    if lang == BASE:
        return []
    return _unit_warnings(world, lang) + missing_words(world, lang)


def _i18n_has(item, lang: str, field: str) -> bool:
    lt = (getattr(item, "i18n", None) or {}).get(lang)
    return bool(getattr(lt, field, None)) if lt is not None else False


def missing_words(world, lang: str) -> list[tuple[str, str]]:
    """Words the packs give only in English that a world in `lang` would write in English inside
    its sentences, headers and questions ("Population" on a Chinese page): a type's noun, an
    attribute's or a relation's label, a category's values. One warning each, naming the pack and
    the `i18n` field that gives the word."""
    out = []

    def add(where: str, what: str, english: str, fix: str, pack: str) -> None:
        out.append((where, f"{what} has no word in {lang}: its pages and questions will say '{english}'; add "
                           f"`{fix}` to it in pack '{pack}'"))

    for t, et in world.types.items():
        pack = world.pack_of_type(t)
        pages = getattr(et, "pages", None)
        if pages is not None and not _i18n_has(pages, lang, "plural"):
            add(t, f"type '{t}'", pages.plural or t, f"pages: {{plural: {{{lang}: ...}}}}", pack)
        for a, spec in et.attributes.items():
            if getattr(spec, "hidden", False) or not hasattr(spec, "i18n"):
                continue
            if not _i18n_has(spec, lang, "label"):
                add(f"{t}.{a}", f"'{t}.{a}'", attribute_label(spec, a, lang), f"label: {{{lang}: ...}}", pack)
            if isinstance(spec, CategoricalAttr):
                untold = sorted(set(spec.weights()) - set(spec.translation(lang)))
                if untold:
                    add(f"{t}.{a}", f"'{t}.{a}' value{'s' if len(untold) > 1 else ''} {', '.join(untold[:3])}"
                        + (f" and {len(untold) - 3} more" if len(untold) > 3 else ""), untold[0],
                        f"i18n: {{{lang}: {{values: {{{untold[0]}: ...}}}}}}", pack)
    for r, rs in (getattr(world, "relations", None) or {}).items():
        if not _i18n_has(rs, lang, "label"):
            add(r, f"relation '{r}'", relation_label(rs, r, lang), f"label: {{{lang}: ...}}", world.pack_of_type(rs.source))
    return out


def _unit_warnings(world, lang: str) -> list[tuple[str, str]]:
    out = []
    for t, et in world.types.items():
        for a, s in et.attributes.items():
            unit = getattr(s, "unit", None)
            if unit is None or getattr(s, "hidden", False) or unit in get_language(lang).units:
                continue
            if unit_in(s, lang) is None:
                out.append((f"{t}.{a}", f"'{t}.{a}' has the unit '{unit}' but no word for it in {lang}: its pages and "
                                        f"questions will give the value without a unit; add `i18n: {{{lang}: {{unit: ...}}}}` "
                                        f"to the attribute in pack '{world.pack_of_type(t)}'"))
    return out

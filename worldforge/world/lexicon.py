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

_LATIN = re.compile(r"[A-Za-z]")


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
    common = get_language(language).units
    if unit in common:
        return common[unit]
    return None if _LATIN.search(unit) else unit


def lexicon_warnings(world) -> list[tuple[str, str]]:
    """(type.attribute, message) for every attribute whose unit a world in a language other than
    English cannot say: its pages and questions will show the value without a unit."""
    lang = world.spec.language
    if lang == BASE:
        return []
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

"""The world lexicon: how one world names its things in one language, the one answer pages,
questions, column headers, narration and the audit all ask.

For every type: its noun and plural ('company' / 'companies'; 'empresa' / 'empresas'; 公司) and
whether its entities are people (a page says "she" or the surname, never "it"); for every
attribute and relation: its label on a page, a relation's label read from its target
('Founders'), the noun of its list column and of the link's other end ('chief executive'), an
attribute's unit. Packs are written in English and give another language's words under `i18n`;
what they do not give is derived (the language's plural and singular rules, `Language.mid`) or,
for a unit, left out rather than written in another script. A world builds one lexicon per
language (`ResolvedWorld.lexicon`), on first use.

A pack gives an attribute's unit in English (`unit: km²`) and, for a world in another language,
its own word there (`i18n: {zh: {unit: 平方公里}}`). Where it gives none, the usual word for a
common unit is used (米 for m); where there is none either, a Chinese sentence or header shows
no unit rather than an English one ("创办年数（years）" was the defect), and `lexicon_warnings`
tells the pack's author which attributes lose their unit and how to give it (`validate` and
`run` print them).
"""

from __future__ import annotations

import re

from ..language import BASE, Language
from ..language import get as get_language
from .pack import CategoricalAttr

_LATIN = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"[a-z]{3}")  # a unit that is a word ('people'), not a symbol ('km²', 'USD')


def humanise(name: str) -> str:
    """A label from a name, as pages make one ('founded_by' -> 'Founded by')."""
    s = name.replace("_", " ").strip()
    return s[:1].upper() + s[1:]


def attribute_label(spec, a: str, lang: str) -> str:
    """An attribute's page label in `lang`: the pack's, else its short description or its name, humanised."""
    desc = spec.description if spec.description and len(spec.description) <= 32 else ""
    return spec.text("label", lang) or humanise(desc or a)


def relation_label(spec, r: str, lang: str) -> str:
    """An outgoing link's page label in `lang`: the pack's, else the relation's name, humanised."""
    return spec.text("label", lang) or humanise(r)


def english_plural(word: str) -> str:
    """The plural of an English type name ('company' -> 'companies'), where the pack gives none."""
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


_MISSING = object()  # a lexicon answer not computed yet (None is an answer: no unit)


class Lexicon:
    """How one world names its types, attributes and relations in one language (see the module).
    Built by `ResolvedWorld.lexicon(language)`; every answer is computed once."""

    def __init__(self, world, language: str):
        self.world = world
        self.language = language
        self.lang: Language = get_language(language)
        self.types = world.types
        self.relations = world.relations
        self._memo: dict[tuple, object] = {}

    def _once(self, key: tuple, make):
        hit = self._memo.get(key, _MISSING)
        if hit is _MISSING:
            hit = self._memo[key] = make()
        return hit

    # ------------------------------------------------------------------ types

    def person(self, t: str) -> bool:
        """Whether entities of type t are people (the pack's `person:`, else derived from its
        name grammar and lifecycle): pages refer to one by surname or as a being, never "it"."""
        return self._once(("person", t), lambda: self.types[t].is_person())

    def people(self) -> frozenset[str]:
        """The types whose entities are people."""
        return self._once(("people",), lambda: frozenset(t for t in self.types if self.person(t)))

    def own_plural(self, t: str) -> str | None:
        """The type's plural the packs give in this language (`pages: {plural: {zh: 公司}}`), or
        None (in English, the pack's own `plural`)."""
        ps = self.types[t].pages
        if self.language == BASE:
            return ps.plural or None
        lt = ps.i18n.get(self.language)
        return lt.plural if lt is not None and lt.plural else None

    def noun(self, t: str) -> str:
        """The type as a common noun in the language ('football player', 'empresa', '公司'): the
        language's singular of the pack's plural there; in English, and where the pack gives no
        word, the type's name."""
        def make() -> str:
            own = self.own_plural(t) if self.language != BASE else None
            return (self.lang.singular(own) or own) if own else t.replace("_", " ")
        return self._once(("noun", t), make)

    def plural(self, t: str) -> str:
        """The type's plural ('companies', 'empresas', '公司'): the pack's in the language, else its
        English one, else the English plural of the type's name."""
        def make() -> str:
            ps = self.types[t].pages
            return self.own_plural(t) or ps.plural or english_plural(t.replace("_", " "))
        return self._once(("plural", t), make)

    # ------------------------------------------------------------------ attributes and relations

    def label(self, t: str, pred: str) -> str:
        """The page label of an attribute or an outgoing relation of type t ('Headquarters',
        '总部所在地'): the pack's in the language, else its English one, else derived from its name."""
        def make() -> str:
            s = self.types[t].attributes.get(pred)
            if s is not None:
                return attribute_label(s, pred, self.language)
            return relation_label(self.relations[pred], pred, self.language)
        return self._once(("label", t, pred), make)

    def inverse_label(self, r: str) -> str:
        """A relation's label on its target's page ('Founders', 'Albums (released by)'): the
        pack's, else the language's `words.inverse_label` over the source type's plural."""
        def make() -> str:
            rs = self.relations[r]
            own = rs.text("inverse_label", self.language)
            if own:
                return own
            plural = self.plural(rs.source)
            return self.lang.words["inverse_label"].format(Plural=humanise(plural), plural=plural,
                                                           relation=r.replace("_", " "))
        return self._once(("inverse", r), make)

    def unit(self, t: str, a: str) -> str | None:
        """An attribute's unit as the language writes it (`unit_in`), or None."""
        return self._once(("unit", t, a), lambda: unit_in(self.types[t].attributes.get(a), self.language))

    def list_noun(self, t: str, r: str, reverse: bool, target: str) -> tuple[str, str | None]:
        """A to-many link as a list column, from the row of type t: the column's noun (the items
        it lists) and the noun of one item, for 'latest ...' (None where it has none).

        Named after the link, not only the other type (two relations to one type are two lists):
        in another language the pack's label there is the list's noun already (下辖城市, productos);
        an English label is made a plural noun: kept where it reads as one ('Prizes won'), a verb
        or role label read as the other type and the link ('food guides it is recommended by'),
        and a label that is no plural noun ('Employment') the other type's plural."""
        def make() -> tuple[str, str | None]:
            label = (self.inverse_label(r) if reverse else self.label(t, r)).strip()
            if self.language != BASE:
                mid = self.lang.mid(label)
                return mid, mid
            low = label.lower()
            shape = self.lang.label_shape(low)
            words = low.split()
            if shape is not None:
                low = f"{self.plural(target)} it is {'a ' if shape == 'role' else ''}{low}"
            elif len(words) > 3 or not (low.endswith("s") or low.endswith(" here") or (len(words) > 1 and words[0].endswith("s"))):
                low = self.plural(target)
            one = (self.lang.singular(low) or low[:-1]) if low.endswith("s") else None  # ('ss' loses its last letter)
            return low, one
        return self._once(("list", t, r, reverse, target), make)

    def role(self, source: str, r: str, reverse: bool, target: str) -> str:
        """The noun of a link's other end, as a header of a link row: the relation's role
        ('chief executive', 'director general', '首席执行官'), else the other type ('university'
        for an affiliation, whose label 'Education' names no one)."""
        def make() -> str:
            if reverse:
                return self.noun(target)
            label = self.label(source, r)
            if self.language != BASE:
                return self.lang.mid(self.lang.singular(label) or label)
            low = label.lower()
            one = self.lang.singular(low) or low
            if one.endswith(("ion", "ment", "ate", "ship")):
                one = self.noun(target)
            if one == self.noun(source):
                one = f"{r.replace('_', ' ')} {self.noun(target)}"
            return one
        return self._once(("role", source, r, reverse, target), make)


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

"""A type's name grammar: syllables, numbers, parts and their choices, aliases and names derived from another entity's."""

from __future__ import annotations

import string
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import MAX_NAME_NUMBER, NAME_RE, DateBound, Model, check_weights, clip

# --------------------------------------------------------------------------- names


class SyllableSpec(Model):
    min: int = Field(2, ge=1, le=6)
    max: int = Field(3, ge=1, le=6)
    inventory: list[str] | None = None  # a string is one syllable per character (Chinese: 安平山河)

    @field_validator("inventory", mode="before")
    @classmethod
    def _characters(cls, v):
        return list(v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _ordered(self) -> SyllableSpec:
        if self.min > self.max:
            raise ValueError(f"syllables: min ({self.min}) must not exceed max ({self.max})")
        return self


class NumberPart(Model):
    min: int = Field(0, ge=-MAX_NAME_NUMBER, le=MAX_NAME_NUMBER)
    max: int = Field(999, ge=-MAX_NAME_NUMBER, le=MAX_NAME_NUMBER)

    @model_validator(mode="after")
    def _ordered(self) -> NumberPart:
        if self.min > self.max:
            raise ValueError(f"number: min ({self.min}) must not exceed max ({self.max}); "
                             f"write e.g. {{min: {self.max}, max: {self.min}}}")
        return self


Choices = list[str] | dict[str, float]


def _check_choices(choices: Choices, what: str = "choices") -> None:
    if not choices:
        raise ValueError(f"{what} needs at least one value")
    if isinstance(choices, dict):
        check_weights(choices, "choice")


class NamePart(Model):
    """One placeholder of a name template. Exactly one source is set: faker, choices,
    syllables, letter, number; `cases` with `given` (choices per value of a categorical
    attribute, `choices` for the other values); or `via` (an attribute, by default the
    name, of the entity a to-one relation leads to: "{city} International Airport")."""

    faker: str | None = None
    pool: int = Field(4096, ge=16, le=200_000)
    choices: Choices | None = None
    syllables: SyllableSpec | None = None
    letter: bool = False
    number: NumberPart | None = None
    given: str | None = None
    cases: dict[str, Choices] | None = None
    # A faker provider per value of the given attribute (`first_name_female` for `female`),
    # `faker` serving the other values: first names that agree with a person's gender.
    fakers: dict[str, str] | None = None
    via: str | None = None
    attribute: str = "name"
    # An edition's place in its series (a type with `parent.series`): its `year` ("2019"), its
    # `season` (the years it spans: "2019–20"), its `ordinal` ("12th"; in Chinese the number,
    # for "第12届") or its `number` ("12").
    edition: Literal["year", "season", "ordinal", "number"] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> NamePart:
        set_ = [k for k in ("faker", "syllables", "number", "via", "edition") if getattr(self, k) is not None]
        if self.fakers is not None:
            if self.cases is not None:
                raise ValueError("give cases (words per value) or fakers (a provider per value), not both")
            if self.given is None:
                raise ValueError("fakers needs given: the categorical attribute whose value picks the provider")
            if not self.fakers or any(not isinstance(v, str) or not v.strip() for v in self.fakers.values()):
                raise ValueError("fakers maps each value of the given attribute to a faker provider, e.g. {female: first_name_female}")
            set_ = [k for k in set_ if k != "faker"]  # faker: the provider for the other values
        if self.letter:
            set_.append("letter")
        if self.cases is not None or self.given is not None:
            set_.append("cases")
        elif self.choices is not None:
            set_.append("choices")
        if len(set_) != 1:
            raise ValueError(
                "a name part needs exactly one of faker, choices, syllables, letter, number, cases (with given), "
                f"fakers (with given), via, edition (got {', '.join(set_) or 'none'})"
            )
        if self.faker is not None and not self.faker.strip():
            raise ValueError("faker needs a provider name, e.g. faker: last_name")
        if (self.given is None) != (self.cases is None and self.fakers is None):
            raise ValueError("given and cases go together: cases maps each value of the given attribute to its choices")
        if self.cases is not None:
            if not self.cases:
                raise ValueError("cases needs at least one value")
            for v, c in self.cases.items():
                _check_choices(c, f"cases.{clip(v)}")
        if self.choices is not None:
            _check_choices(self.choices)
        if self.attribute != "name" and self.via is None:
            raise ValueError("attribute applies to via parts only")
        return self

    def words(self) -> set[str]:
        """Every literal word this part can produce (choices and cases)."""
        out: set[str] = set(self.choices or ())
        for c in (self.cases or {}).values():
            out |= set(c)
        return out


class AliasSpec(Model):
    """How aliases are derived from a name: initials ('J. Smith'), abbreviation ('MIT'),
    short (drop listed words), pattern ('Republic of {name}'), former (a previous name) or
    pinyin (a Chinese name transliterated)."""

    kind: Literal["initials", "abbreviation", "short", "pattern", "former", "pinyin"]
    rate: float = Field(1.0, ge=0.0, le=1.0)
    drop: list[str] = []
    template: str | None = None
    after: DateBound | None = None  # former names: renamed at a date after this bound
    # pinyin (Chinese names transliterated: 王秀英 -> Wang Xiuying, 华星有限公司 -> Huaxing Co., Ltd.):
    # `surname` writes the first character as its own word; `translate` turns a trailing
    # word into English instead of transliterating it.
    surname: bool = False
    translate: dict[str, str] = {}

    @model_validator(mode="after")
    def _fields(self) -> AliasSpec:
        if self.kind == "pattern" and (not self.template or "{name}" not in self.template):
            raise ValueError("a pattern alias needs a template containing {name}")
        if self.kind == "short" and not self.drop:
            raise ValueError("a short alias needs the words to drop, e.g. drop: [Group, Inc]")
        if self.kind != "pinyin" and (self.surname or self.translate):
            raise ValueError("surname and translate apply to pinyin aliases only")
        return self


DERIVED_FIELDS = ("name", "root", "n", "roman")


class DerivedName(Model):
    """Names taken from another entity's: an entity linked by `via` (a to-one relation, to
    its own type or another; optional: the others keep their drawn names) is named after the
    entity it leads to: a sequel after its original ("{root} II"), a second edition, a
    subsidiary after its parent. Templates use {name} (the linked entity's name), {root} (the
    name at the start of a chain of such links: a sequel's sequel is named after the first),
    {n} (the place in that chain: 2 for a first sequel) and {roman} ({n} in Roman numerals).
    A derived name that another entity of the type already holds is not given (`plan` counts
    them); the entity's id stays that of its drawn name."""

    via: str = Field(pattern=NAME_RE)
    templates: dict[str, float]

    @model_validator(mode="after")
    def _templates(self) -> DerivedName:
        if not self.templates:
            raise ValueError("templates needs at least one template, e.g. {\"{root} {roman}\": 1}")
        check_weights(self.templates, "template")
        for tmpl in self.templates:
            try:
                fields = [f for _, f, _, _ in string.Formatter().parse(tmpl) if f is not None]
            except ValueError as exc:
                raise ValueError(f"template {clip(tmpl)} is not a valid template: {exc}") from None
            bad = [f for f in fields if f not in DERIVED_FIELDS]
            if bad:
                raise ValueError(f"template {clip(tmpl)} uses {{{clip(bad[0])[1:-1]}}}; a derived name uses "
                                 f"{', '.join('{' + f + '}' for f in DERIVED_FIELDS)}")
            if not {"name", "root"} & set(fields):
                raise ValueError(f"template {clip(tmpl)} names nothing it derives from: use {{name}} or {{root}}")
        return self


class NameSpec(Model):
    template: str | None = None
    templates: dict[str, float] | None = None
    parts: dict[str, NamePart] = {}
    aliases: list[AliasSpec] = []
    derived: DerivedName | None = None  # names taken from another entity's (a sequel's from its original)

    @model_validator(mode="after")
    def _one_template(self) -> NameSpec:
        if (self.template is None) == (self.templates is None):
            raise ValueError("give exactly one of template or templates")
        if self.templates is not None:
            if not self.templates:
                raise ValueError("templates needs at least one template")
            check_weights(self.templates, "template")
        for tmpl in self.template_weights():
            try:
                parsed = list(string.Formatter().parse(tmpl))
            except ValueError as exc:
                raise ValueError(f"template {clip(tmpl)} is not a valid template: {exc}") from None
            for _, field, spec, conv in parsed:
                if field is None:
                    continue
                if spec or conv:
                    raise ValueError(f"template {clip(tmpl)}: write plain placeholders like {{{clip(field)[1:-1]}}}")
                if field not in self.parts:
                    raise ValueError(
                        f"template {clip(tmpl)} uses {{{clip(field)[1:-1]}}} but parts defines only {clip(sorted(self.parts))}"
                    )
        return self

    def template_weights(self) -> dict[str, float]:
        return {self.template: 1.0} if self.template is not None else dict(self.templates or {})

    def opens_with(self, part: str) -> bool:
        """Whether every template opens with the part `part` (its word is a name's first)."""
        return all(tpl.startswith("{" + part + "}") for tpl in self.template_weights())

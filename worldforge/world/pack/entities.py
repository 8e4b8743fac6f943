"""Entity types: their parent and series, pages, lifecycle, names and attributes; and how a link is said (labels, phrases, questions)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from ...language import BASE
from .attributes import Attribute
from .base import LANGUAGES, NAME_RE, DateBound, LangText, Localized, Model, Range, check_i18n, check_noun, check_phrases, clip, is_per_language, split_languages
from .names import NameSpec

# --------------------------------------------------------------------------- types and relations


class LinkText(Localized, Model):
    """How pages and questions state a link. Pages: labels for the source's and the target's
    pages, sentence templates with {subject}, {object}, {start} and {end}. Task questions:
    qualifiers with {object} ("headquartered in {object}")."""

    label: str | None = None
    inverse_label: str | None = None
    phrases: list[str] = []
    ask: list[str] = []
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)

    @model_validator(mode="after")
    def _i18n_phrases(self):
        check_i18n(self.i18n, {"subject", "object", "start", "end"}, {"object"})
        return self

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return check_phrases(v, {"subject", "object", "start", "end"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return check_phrases(v, {"object"})


LINK_COLUMNS = ("source", "target", "valid_from", "valid_to", "id", "name", "start", "end", "date")
MAX_EDITIONS = 400  # editions one parent may hold (four centuries of an annual series)


class SeriesSpec(Model):
    """Editions of a recurring series (a league's seasons, an annual prize's awards): one child
    of the parent every `every` years (a whole number of years drawn per parent: annual,
    biennial...), on a fixed day of the year (`month`, `day`), from the first such day after
    the parent's `start` date up to `until` (as_of unless given; the parent's lifecycle end
    stops it too). The child's date attribute `date` holds each edition's day; name parts
    with `edition: year | ordinal | number` name it ("the 2019 season", "the 12th Prize")."""

    date: str = Field(pattern=NAME_RE)
    start: str = Field(pattern=NAME_RE)
    month: int = Field(1, ge=1, le=12)
    day: int = Field(1, ge=1, le=28)
    every: Range = Range(min=1, max=1)
    until: DateBound | None = None

    @model_validator(mode="after")
    def _every(self) -> SeriesSpec:
        if self.every.min < 1 or self.every.max > 100:
            raise ValueError(f"every: years between editions lie in 1..100 (got {self.every.min}-{self.every.max})")
        return self


class ParentSpec(LinkText):
    """A type generated per entity of another type (regions per country), linked by `relation`.
    `count_by`: a numeric attribute of the parent that scales the count (more regions in
    larger countries): a parent at the p-th percentile of it gets about min + p * (max - min).
    `series` instead of `count`: the children are the parent's editions, one per period."""

    type: str
    relation: str = Field(pattern=NAME_RE)
    count: Range | None = None
    count_by: str | None = None
    series: SeriesSpec | None = None
    noun: str | None = None  # multi-hop questions: "the country {subject} lies in"

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return check_noun(v)

    @model_validator(mode="after")
    def _sized(self) -> ParentSpec:
        if self.series is None:
            if self.count is None:
                raise ValueError("give count (children per parent) or series (one edition per period)")
            return self
        # The most editions a parent can hold, for size estimates; the planner counts the real ones.
        # (A saved world carries it back: that one is accepted.)
        most = Range(min=0, max=MAX_EDITIONS // self.series.every.min)
        if self.count is not None and self.count != most:
            raise ValueError("give count (children per parent) or series (one edition per period), not both")
        if self.count_by is not None:
            raise ValueError("count_by applies to count, not to series (a series has one edition per period)")
        object.__setattr__(self, "count", most)
        return self


class DirectorySpec(Localized, Model):
    """Paginated list pages of this type's entities grouped by a relation's target
    ("Companies headquartered in X") or by an attribute value ("Companies in software")."""

    by: str
    title: str  # uses {group}: "Companies headquartered in {group}"
    columns: list[str] = []  # attributes shown next to each listed name
    page_size: int = Field(10, ge=2, le=200)
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)


class ProfileSpec(Model):
    """The entity's official or profile page: `site` names the fictional site (a word the
    site's domain is built from) unless `url` gives a template over the entity's attributes."""

    site: str = Field("profiles", pattern=NAME_RE)
    url: str | None = None  # e.g. "{website}/about"


class PagesSpec(Localized, Model):
    """Which pages an entity of this type gets (see worldforge.render)."""

    plural: str | None = None  # "companies"; defaults to the type name + "s"
    # How an article's first sentence describes an entity of this type ("a professional football
    # player"); defaults to the type's description. Per language: `description: {en: ..., zh: 一名职业足球运动员}`.
    description: str | None = None
    article: bool = True
    profile: ProfileSpec | None = ProfileSpec()
    # What gets news items: event attributes and dated relations (a story each), figures with
    # `changes` (a paper's yearly figures, stating that year's); None = all, [] = none.
    news: list[str] | None = None
    directories: list[DirectorySpec] = []
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)


class Lifecycle(Model):
    """When an entity exists: from its `start` date attribute (birth, founding) to its `end`
    (death, dissolution, split; NULL while it still exists). Nothing involving the entity is
    dated before its start or after its end: its own dates, its links' validity, the dates of
    entities that refer to it through a relation."""

    start: str
    end: str | None = None


class EntityType(Model):
    description: str = ""
    name: NameSpec
    names: dict[str, NameSpec] = {}  # the name grammar in other languages (`name: {en: ..., zh: ...}`)
    parent: ParentSpec | None = None
    lifecycle: Lifecycle | None = None
    attributes: dict[str, Attribute] = {}
    pages: PagesSpec = PagesSpec()
    # Distractors that teach disambiguation: the share of this type's entities that take the
    # name of another entity of the type (namesakes, told apart by place or era), and the share
    # whose name is one small edit away from another's (a changed vowel or first character).
    namesakes: float = Field(0.0, ge=0.0, le=0.2)
    near_names: float = Field(0.0, ge=0.0, le=0.2)
    # What a table may ask about an entity of this type when a row links to it, by attribute or
    # outgoing link name: a city's `country` ("country of birthplace") is asked, its `mayor`
    # ("mayor of birthplace") is not. The linked entity's name is always a column; nothing else
    # of it is unless listed here.
    linked_columns: list[str] = []
    # Whether the entities are people: pages refer to one as "the {noun}" or by surname and say
    # "born" (in Chinese "此人"), never "it". Unset: a type whose name takes a first name (a
    # `first_name*` faker) or whose lifecycle starts with an attribute labelled "Born" is one.
    person: bool | None = None

    def is_person(self) -> bool:
        """Whether the type's entities are people (`person`, else derived from its name grammar
        and lifecycle)."""
        if self.person is not None:
            return self.person
        for spec in (self.name, *self.names.values()):
            for part in spec.parts.values():
                if any((f or "").startswith("first_name") for f in (part.faker, *(part.fakers or {}).values())):
                    return True
        start = self.attributes.get(self.lifecycle.start) if self.lifecycle is not None else None
        return (getattr(start, "label", None) or "").strip().lower() == "born"

    @model_validator(mode="before")
    @classmethod
    def _split_names(cls, data):
        if isinstance(data, dict) and is_per_language(data.get("name")):
            per = data["name"]
            if BASE not in per:
                raise ValueError(f"name: a name grammar per language needs one for {BASE} (the default language)")
            data = {**data, "name": per[BASE], "names": {**(data.get("names") or {}), **{k: v for k, v in per.items() if k != BASE}}}
        return data

    @field_validator("names")
    @classmethod
    def _name_languages(cls, v):
        unknown = sorted(set(v) - set(LANGUAGES) | ({BASE} & set(v)))
        if unknown:
            raise ValueError(f"names: {clip(unknown)} is not another language; known: {', '.join(LANGUAGES)} ({BASE} is `name`)")
        return v

    def name_spec(self, language: str = BASE) -> NameSpec:
        """The name grammar of a language (English where the pack gives none)."""
        return self.names.get(language, self.name)

    @field_validator("attributes")
    @classmethod
    def _attr_names(cls, v):
        for key in v:
            if not re.match(NAME_RE, key):
                raise ValueError(f"attribute name {clip(key)} must be snake_case, at most 64 characters")
            if key in ("id", "name"):
                raise ValueError(f"attribute name {key!r} is reserved")
            if key in ("start", "end", "date"):
                raise ValueError(f"attribute name {key!r} is reserved: tables name a link's start, end and date by it; "
                                 f"rename the attribute (e.g. 'season_{key}')")
        return v

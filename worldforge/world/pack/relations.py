"""Relations between types: cardinality, history and dates, eligibility, groups (`same`), requirements and selection."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .attributes import CategoricalAttr, DateOffset, Duration, LinkAttribute
from .base import MAX_RANGE, NAME_RE, DateBound, Model, Range, check_noun, check_phrases, clip
from .entities import LINK_COLUMNS, LinkText


class SameSpec(Model):
    """Locality: the target's attribute must equal the source's (same country, same league);
    with `share` below 1, a bias instead of a rule: that share of links stays within the
    source's group and the others go to any target (most players sign for clubs of their
    own country, some abroad)."""

    source: str
    target: str
    share: float = Field(1.0, gt=0.0, le=1.0)
    # A value of the source's attribute that every target matches (a prize for work in "any
    # field"): such links go to any target by weight and are left out of the rule and its measure.
    any: str | None = Field(None, min_length=1, max_length=200)


class EligibleSpec(Model):
    """Targets are eligible only when their date attribute lies in [after, before]."""

    attribute: str
    after: DateBound | None = None
    before: DateBound | None = None


class DateWindow(Model):
    """A dated event inside [max(after), min(before)]: uniform there, or drawn as `offset`
    (a reference date plus a random duration, e.g. an age at the event)."""

    after: list[DateBound] = []
    before: list[DateBound] = []
    offset: DateOffset | None = None


class HistorySpec(Model):
    """Tenures per source inside [max(after), min(before)] (bounds may also name the target's
    dates: `target.split`). By default successive and non-overlapping, cut at random points
    of the window; `length` draws each tenure's length instead, `gap` the pause before the
    next one, `start` the delay of the first one after the window opens. `concurrent`: a
    source's tenures are independent and may overlap (a band's members)."""

    count: Range
    after: list[DateBound]
    before: list[DateBound]
    current: bool = True  # the last tenure is open-ended when it reaches as_of
    start: Duration | None = None
    length: Duration | None = None
    gap: Duration | None = None
    concurrent: bool = False


class Requirement(Model):
    """The link's target must be reachable from its source through `path` (relations joined
    by '.', '~' before a relation follows it backwards) by links valid when this one holds:
    a CEO is employed by the company (`~employed_by`), an album's label is one its band was
    signed to on release (`by.signed_to`)."""

    path: str = Field(pattern=r"^~?[a-z][a-z0-9_]{0,63}(\.~?[a-z][a-z0-9_]{0,63}){0,5}$")
    # Conditions on the covering links' own categories: `{grade: [consultant, head]}` takes only
    # a link of the path whose `grade` is one of these (the head of a department is a senior
    # doctor there); an attribute of one relation of the path.
    where: dict[str, list[str]] = {}

    @property
    def hops(self) -> list[tuple[str, bool]]:
        """(relation, backwards) per hop."""
        return [(h.lstrip("~"), h.startswith("~")) for h in self.path.split(".")]


class WeightSelect(Model):
    weight: str  # a numeric attribute of the target


class RelationSpec(LinkText):
    description: str = ""
    source: str
    target: str
    cardinality: Literal["1:1", "1:N", "N:1", "N:M"]
    count: Range = Range()
    # Links per source by a categorical attribute of the source (a small firm takes few hires, a
    # large one many): `given` names it, `cases` maps its values to a count range (a history's
    # tenures for history relations); the other values take `count` (or `history.count`).
    given: str | None = Field(None, pattern=NAME_RE)
    cases: dict[str, Range] = {}
    rate: float = Field(1.0, ge=0.0, le=1.0)
    required: bool = False
    select: Literal["uniform", "preferential"] | WeightSelect = "uniform"
    alpha: float = Field(1.5, ge=0.1, le=100.0)  # Pareto shape of preferential attachment
    same: SameSpec | None = None
    eligible: EligibleSpec | None = None
    since: DateBound | None = None
    delay: Duration | None = None  # since: how long after that date the link starts (default: a few months)
    date: DateWindow | None = None
    history: HistorySpec | None = None
    at: DateBound | None = None  # an undated link: the date it is made (its entities exist then)
    acyclic: bool = False
    max_per_target: int | None = Field(None, ge=1, le=MAX_RANGE)  # links a target takes at most
    exclusive: bool = False  # a target holds at most one link of this relation at a time
    # Every target takes at least one link where its dates allow (every musician played in a
    # band): before the links are drawn, one link of a fitting source is set aside for each target.
    each_target: bool = False
    # A target takes at most one link among the sources that share this attribute's value: a
    # researcher wins a prize once (the editions of one award), a club joins a league once.
    once_per: str | None = Field(None, pattern=NAME_RE)
    # Not the same one again: a link never goes to a target its source is linked to by one of
    # these relations (of the same source and target types) when the link starts, or ever where
    # the link has no dates (a loan to another club than the player's own; a consultancy for a
    # firm the person does not work at then).
    not_same: list[str] = []
    requires: Requirement | None = None
    # Attributes of each link (a musician's role in a band, per membership): categorical values
    # drawn per link, stated with the link on every page that states it ("[The Ferns] (2001–2005),
    # drums"; `phrases` are the words a sentence adds: "as {value}"), asked as a column of the
    # link's rows in timeline tables, stored as a column of the link's table. A numeric one
    # (`kind: numeric`, a whole number: a player's shirt number per spell at a club) is drawn from
    # its distribution within [min, max]; `distinct` keeps it unique among a target's links that
    # overlap in time (no two players of a squad wear one number).
    attributes: dict[str, LinkAttribute] = {}
    # Beyond the shared link text: news headlines, and the noun phrase for one hop in a
    # multi-hop question ("the university that awarded {subject} a doctorate").
    headlines: list[str] = []
    noun: str | None = None

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return check_noun(v)

    @field_validator("headlines")
    @classmethod
    def _headline_fields(cls, v):
        return check_phrases(v, {"subject", "object", "start", "end"}, need_value=False)

    @field_validator("attributes", mode="before")
    @classmethod
    def _link_kinds(cls, v):
        for a, attr in (v.items() if isinstance(v, dict) else ()):
            if isinstance(attr, dict) and attr.get("kind") not in ("categorical", "numeric", "entity"):
                raise ValueError(f"{clip(a)}: a link attribute is categorical (a role, a department: kind: categorical "
                                 f"with values), numeric (a shirt number: kind: numeric, integer: true, with min and max) "
                                 f"or an entity (a supervisor: kind: entity, holds: <a relation to this link's target>); "
                                 f"{'give it a kind' if attr.get('kind') is None else 'a ' + clip(attr.get('kind')) + ' one is not supported on links'}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> RelationSpec:
        if self.cardinality in ("1:1", "N:1") and self.count.max > 1:
            raise ValueError(f"a {self.cardinality} relation links each source to at most one target; "
                             f"set count.max to 1 or use 1:N / N:M")
        if self.history and self.cardinality in ("1:1", "1:N"):
            raise ValueError("a history relation must be N:1 or N:M (a target can hold several tenures)")
        if self.history and self.cardinality == "N:1" and self.history.count.max > 1:
            raise ValueError("use N:M for histories with more than one tenure per source")
        if (self.given is None) != (not self.cases):
            raise ValueError("given and cases go together: cases maps values of the source's given attribute to a count range")
        for v, c in self.cases.items():
            if c.max > 1 and (self.cardinality in ("1:1", "N:1") and not self.history
                              or self.history and self.cardinality == "N:1"):
                raise ValueError(f"cases.{v}: a {self.cardinality} relation links each source to at most one target; "
                                 "set max to 1 or use 1:N / N:M")
        if sum(x is not None for x in (self.since, self.date, self.history, self.at)) > 1:
            raise ValueError("give at most one of since, date, history, at")
        if self.delay is not None and self.since is None:
            raise ValueError("delay applies to since relations")
        if self.exclusive and not self.history:
            raise ValueError("exclusive applies to history relations (a target holds one tenure at a time)")
        if self.max_per_target is not None and self.target_unique:
            raise ValueError(f"a {self.cardinality} relation already gives each target at most one link; drop max_per_target")
        if self.each_target and self.requires is not None:
            raise ValueError("each_target cannot combine with requires (a covered link's target is chosen among its covering links)")
        for a, attr in self.attributes.items():
            if not re.match(NAME_RE, a):
                raise ValueError(f"link attribute name {clip(a)} must be snake_case, at most 64 characters")
            if a in LINK_COLUMNS:
                raise ValueError(f"link attribute name {a!r} is taken by the link's own columns ({', '.join(LINK_COLUMNS)}); rename it")
            if isinstance(attr, CategoricalAttr) and (attr.given is not None or attr.dated_by is not None or attr.hidden):
                raise ValueError(f"attributes.{a}: a link attribute is drawn per link by its weights: drop given, cases, "
                                 "dated_by and hidden")
            if getattr(attr, "rises", False) and self.since is None and self.date is None and self.history is None:
                raise ValueError(f"attributes.{a}.rises: a value that rises along a source's links orders them by their "
                                 "start; give the relation dates (history, since or date), or drop rises")
            if any("{subject}" in p for p in attr.phrases):
                raise ValueError(f"attributes.{a}.phrases: a link attribute's phrase continues the link's sentence "
                                 "(\"as {value}\"); it has no {subject}")
        if self.once_per is not None and self.target_unique:
            raise ValueError(f"a {self.cardinality} relation already gives each target one link; drop once_per")
        if self.required and self.rate < 1.0:
            raise ValueError("a required relation must have rate 1.0")
        if self.required and self.count_range.min < 1:
            raise ValueError(f"a required relation gives every source at least one link: set {'history.' if self.history else ''}"
                             "count.min to 1 or more (or drop required)")
        return self

    @property
    def target_unique(self) -> bool:
        return self.cardinality in ("1:1", "1:N")

    @property
    def count_range(self) -> Range:
        """The fewest and most links a source may take (its `cases` included)."""
        b = self.base_count
        if not self.cases:
            return b
        return Range(min=min([b.min, *(c.min for c in self.cases.values())]), max=max([b.max, *(c.max for c in self.cases.values())]))

    @property
    def base_count(self) -> Range:
        """Links per source for the values of `given` without a case (all sources without `given`)."""
        return self.history.count if self.history else self.count

    @property
    def target_cap(self) -> int | None:
        """The most links one target may take (1 for 1:1 and 1:N)."""
        return 1 if self.target_unique else self.max_per_target

    @property
    def dated(self) -> bool:
        return bool(self.history or self.date or self.since)

    @property
    def note_order(self) -> list[str]:
        """The link's own attributes in the order a fact's note joins them and pages label them:
        by name, so that a world reopened from its manifest (whose keys are stored sorted) reads
        them as it was planned."""
        return sorted(self.attributes)

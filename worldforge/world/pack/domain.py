"""A domain pack: its types and relations, declared invariants and the audit thresholds of a plausible world."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .attributes import check_min_max
from .base import NAME_RE, RESERVED_TABLES, Model, clip
from .entities import EntityType
from .relations import RelationSpec


class InvariantSpec(Model):
    """A declared invariant: an SQL query returning the violating rows, or an acyclicity check."""

    name: str = Field(pattern=NAME_RE)
    description: str = ""
    sql: str | None = Field(None, min_length=1)
    acyclic: str | None = Field(None, min_length=1)  # relation name

    @model_validator(mode="after")
    def _one(self) -> InvariantSpec:
        if (self.sql is None) == (self.acyclic is None):
            raise ValueError("an invariant needs exactly one of sql or acyclic")
        return self


# What `worldforge audit` measures: its sections and the numbers each row carries.
AUDIT_METRICS = {
    "ages": ("n", "min", "median", "max", "before_start", "after_end"),
    "anniversaries": ("n", "hits", "share"),
    "lifespans": ("n", "ended", "ended_share", "min", "median", "max", "oldest_going", "cohort_85y_n", "cohort_85y_ended_share"),
    "part_whole": ("n", "max_ratio", "parts_over_whole", "max_sum_ratio", "wholes_over_sum"),
    "derived": ("n", "agree", "share"),
    "requires": ("n", "agree", "share"),
    "names": ("n", "agree", "share"),
    "given": ("n", "agree", "share", "gap"),
    "concurrency": ("n", "max_concurrent", "with_concurrent", "now_median"),
    "degrees": ("n", "out_max", "out_p99", "in_max", "in_p99", "targets_without", "sources_without"),
    "ratios": ("n", "min", "p01", "median", "p99", "max"),
    "locality": ("n", "same", "share"),
    "link_values": ("n", "filled", "median", "p90", "max", "clashes", "top_share", "falls", "targets_without", "early_top",
                    "unheld"),
}
AUDIT_SECTIONS = tuple(AUDIT_METRICS)


class AuditThreshold(Model):
    """A plausibility bound `worldforge audit` holds the world to: `metric` of every row of
    `section` whose subject matches the glob `match` lies within [min, max] (rows measured on
    fewer than `min_n` items are not judged)."""

    section: Literal["ages", "anniversaries", "lifespans", "part_whole", "derived", "requires", "names", "given", "concurrency",
                     "degrees", "ratios", "locality", "link_values"]
    metric: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    match: str = Field("*", min_length=1, max_length=300)
    min: float | None = None
    max: float | None = None
    min_n: int | None = Field(None, ge=1)
    description: str = ""

    @model_validator(mode="after")
    def _bounded(self) -> AuditThreshold:
        if self.metric not in AUDIT_METRICS[self.section]:
            raise ValueError(f"section {self.section} has no metric {clip(self.metric)}; it has: {', '.join(AUDIT_METRICS[self.section])}")
        if self.min is None and self.max is None:
            raise ValueError("a threshold needs min or max")
        check_min_max(self.min, self.max)
        return self


class DomainPack(Model):
    pack: str = Field(pattern=NAME_RE)
    pack_version: Literal[1] = 1
    description: str = ""
    requires: list[str] = []
    types: dict[str, EntityType] = {}
    relations: dict[str, RelationSpec] = {}
    invariants: list[InvariantSpec] = []
    audit: list[AuditThreshold] = []

    @field_validator("types", "relations")
    @classmethod
    def _names(cls, v):
        for key in v:
            if not re.match(NAME_RE, key):
                raise ValueError(f"name {clip(key)} must be snake_case (a-z, 0-9, _), at most 64 characters")
        return v

    @field_validator("types")
    @classmethod
    def _type_names(cls, v):
        for key in v:
            if key in RESERVED_TABLES or key.startswith("rel_"):
                raise ValueError(f"type name {key!r} is taken by the world store (its tables {', '.join(RESERVED_TABLES)} "
                                 "and rel_<relation>); rename the type")
        return v

"""Domain packs (`schemas/*.yaml`) as typed, validated models: entity types with their
names, aliases, attributes and pages; relations; declared invariants.

The models check what can be checked field by field (a bound's syntax, a phrase's
placeholders, a distribution's parameters); checks across a whole world (references
between packs, cycles, feasibility) live in `validate.py`.
"""

from __future__ import annotations

from .attributes import (
    Attribute,
    CategoricalAttr,
    CategoricalValue,
    Changes,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateCase,
    DateOffset,
    DerivedAttr,
    Distribution,
    Duration,
    FakerAttr,
    LinkAttribute,
    LinkCategory,
    LinkEntity,
    LinkNumber,
    LookupAttr,
    NumericAttr,
    NumericCase,
    OnePerTarget,
    PartOf,
    Per,
    Stages,
    check_distribution,
    check_min_max,
)
from .base import (
    CONSTANT_REFS,
    LANGUAGES,
    MAX_NAME_NUMBER,
    MAX_RANGE,
    NAME_RE,
    PACK_VERSION,
    RESERVED_TABLES,
    DateBound,
    LangText,
    Localized,
    Model,
    Range,
    check_i18n,
    check_language,
    check_noun,
    check_phrases,
    check_weights,
    clip,
    constant_date,
    is_constant_ref,
    is_per_language,
    split_languages,
)
from .domain import AUDIT_METRICS, AUDIT_SECTIONS, AuditThreshold, DomainPack, InvariantSpec
from .entities import LINK_COLUMNS, MAX_EDITIONS, DirectorySpec, EntityType, Lifecycle, LinkText, PagesSpec, ParentSpec, ProfileSpec, SeriesSpec
from .names import DERIVED_FIELDS, AliasSpec, Choices, DerivedName, NamePart, NameSpec, NumberPart, SyllableSpec
from .relations import DateWindow, EligibleSpec, HistorySpec, RelationSpec, Requirement, SameSpec, WeightSelect

__all__ = [
    "AUDIT_METRICS", "AUDIT_SECTIONS", "AliasSpec", "Attribute", "AuditThreshold", "CONSTANT_REFS",
    "CategoricalAttr", "CategoricalValue", "Changes", "Choices", "CodeAttr", "CountAttr", "DERIVED_FIELDS",
    "DateAttr", "DateBound", "DateCase", "DateOffset", "DateWindow", "DerivedAttr", "DerivedName",
    "DirectorySpec", "Distribution", "DomainPack", "Duration", "EligibleSpec", "EntityType", "FakerAttr",
    "HistorySpec", "InvariantSpec", "LANGUAGES", "LINK_COLUMNS", "LangText", "Lifecycle", "LinkAttribute",
    "LinkCategory", "LinkEntity", "LinkNumber", "LinkText", "Localized", "LookupAttr", "MAX_EDITIONS",
    "MAX_NAME_NUMBER", "MAX_RANGE", "Model", "NAME_RE", "NamePart", "NameSpec", "NumberPart", "NumericAttr",
    "NumericCase", "OnePerTarget", "PACK_VERSION", "PagesSpec", "ParentSpec", "PartOf", "Per", "ProfileSpec",
    "RESERVED_TABLES", "Range", "RelationSpec", "Requirement", "SameSpec", "SeriesSpec", "Stages",
    "SyllableSpec", "WeightSelect", "check_distribution", "check_i18n", "check_language", "check_min_max",
    "check_noun", "check_phrases", "check_weights", "clip", "constant_date", "is_constant_ref",
    "is_per_language", "split_languages",
]

"""Fuzzing the plausibility fields of a pack (lifecycles, offsets, durations, part_of, at_most,
counts, codes, conditional cases, name parts, requires, caps, audit thresholds): each example
replaces, deletes or retypes one to three of them in the tiny life pack and validates it; a
valid pack is then planned. Every outcome must be a valid world or a clean worldforge error
(SpecError at validation, PlanError or an invariant violation at plan), never a traceback.

    pytest tests/world/test_fuzz_features.py                                  # CI: 40 examples, derandomized
    WORLDFORGE_FUZZ_EXAMPLES=400 pytest tests/world/test_fuzz_features.py     # a longer local run
"""

from __future__ import annotations

import copy
import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.world.test_plausible import LIFE, life_spec
from worldforge.errors import WorldforgeError
from worldforge.world.planner import plan_world
from worldforge.world.validate import load_world

EXAMPLES = int(os.environ.get("WORLDFORGE_FUZZ_EXAMPLES", "40"))
COUNTS = {"town": 5, "firm": 12, "being": 90}

# The new fields of the life pack, as paths.
FIELDS = [
    ("types", "being", "lifecycle"), ("types", "being", "lifecycle", "start"), ("types", "being", "lifecycle", "end"),
    ("types", "house", "parent", "count_by"), ("types", "house", "parent", "noun"),
    ("types", "house", "attributes", "residents", "part_of"), ("types", "house", "attributes", "residents", "part_of", "via"),
    ("types", "house", "attributes", "residents", "part_of", "attribute"),
    ("types", "house", "attributes", "residents", "part_of", "share"), ("types", "house", "attributes", "residents", "part_of", "sum"),
    ("types", "house", "attributes", "floor_km2", "part_of", "via"), ("types", "house", "attributes", "town_area", "unit"),
    ("types", "firm", "attributes", "budget", "at_most"), ("types", "firm", "attributes", "staff", "relation"),
    ("types", "firm", "attributes", "staff", "side"), ("types", "firm", "attributes", "staff", "current"),
    ("types", "firm", "attributes", "code", "length"), ("types", "firm", "attributes", "code", "alphabet"),
    ("types", "firm", "attributes", "code", "source"),
    ("types", "firm", "name", "parts", "noun", "given"), ("types", "firm", "name", "parts", "noun", "cases"),
    ("types", "firm", "name", "parts", "noun", "choices"),
    ("types", "town", "attributes", "area", "given"), ("types", "town", "attributes", "area", "cases"),
    ("types", "town", "attributes", "kind", "values", "city"), ("types", "town", "attributes", "kind", "values", "city", "phrases"),
    ("types", "firm", "attributes", "founded", "given"), ("types", "firm", "attributes", "founded", "cases"),
    ("types", "firm", "attributes", "founded", "offset", "direction"), ("types", "firm", "attributes", "founded", "offset", "ref"),
    ("types", "being", "attributes", "died", "offset"), ("types", "being", "attributes", "died", "offset", "params"),
    ("types", "being", "attributes", "died", "offset", "distribution"), ("types", "being", "attributes", "died", "offset", "min"),
    ("types", "being", "attributes", "died", "offset", "unit"), ("types", "being", "attributes", "died", "censor"),
    ("relations", "works_at", "history", "start"), ("relations", "works_at", "history", "length"),
    ("relations", "works_at", "history", "gap"), ("relations", "works_at", "history", "concurrent"),
    ("relations", "works_at", "history", "before"),
    ("relations", "heads", "requires"), ("relations", "heads", "requires", "path"), ("relations", "heads", "exclusive"),
    ("relations", "heads", "history", "before"),
    ("relations", "founds", "max_per_target"), ("relations", "founds", "at"), ("relations", "lives_in", "at"),
    ("relations", "moved_to", "since"), ("relations", "moved_to", "delay"), ("relations", "knows", "history", "concurrent"),
    ("audit",),
]

VALUES = st.sampled_from([
    None, 0, -1, 1, 2.5, 1e300, -1e300, "", "x", "founded", "born", "died", "name", "population", "sector", "kind",
    "~works_at", "works_at", "house_in.~house_in", "as_of", "span_start", "1900-01-01", "2050-13-01", "target.born",
    "source.founded + 3y", "in", "out", "letters", True, [], {}, ["a"], {"a": 1}, {"energy": ["Power"]},
    {"distribution": "normal", "params": {"mean": 1, "sd": 1}},
    {"distribution": "gompertz", "params": {"mode": 80, "scale": 10}, "unit": "days"},
    {"ref": "born", "distribution": "uniform", "params": {"low": -5, "high": 5}},
    {"via": "house_in", "attribute": "population"}, {"path": "~works_at"},
    [{"section": "ages", "metric": "max", "max": 0}], [{"section": "degrees", "metric": "in_max", "max": -1}],
])


def _apply(pack: dict, path: tuple, action: str, value) -> None:
    d = pack
    for k in path[:-1]:
        if not isinstance(d, dict) or k not in d:
            return
        d = d[k]
    if not isinstance(d, dict):
        return
    if action == "delete":
        d.pop(path[-1], None)
    else:
        d[path[-1]] = value


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FIELDS), st.sampled_from(["set", "set", "delete"]), VALUES), min_size=1, max_size=3))
def test_plausibility_fields_fail_cleanly(tmp_path_factory, mutations):
    tmp = tmp_path_factory.mktemp("fuzz")
    pack = copy.deepcopy(yaml.safe_load(LIFE))
    for path, action, value in mutations:
        _apply(pack, path, action, value)
    _validate_and_plan(life_spec(tmp, counts=COUNTS, pack=yaml.safe_dump(pack, sort_keys=False)), tmp)


def _validate_and_plan(spec, tmp) -> None:
    """Validate and plan a fuzzed spec: a complete world, or a clean worldforge error (SpecError
    at validation, PlanError or an invariant violation at plan) that leaves no world behind."""
    try:
        world = load_world(spec)
    except WorldforgeError:
        return
    try:
        info = plan_world(world, tmp / "build")
    except WorldforgeError:
        assert not (tmp / "build" / "life").exists()  # a failed plan leaves no world behind
        return
    assert info.manifest["status"] == "complete"


def _life60() -> dict:
    """The life pack with issue 60's rules between links: a grade that rises with age, one chair
    among a firm's founders, their stakes summed into its capital and their share classes
    distinct, a project's stages, a consultancy never at the employer, a job after training."""
    from tests.world.test_plausible import PROJECT

    p = yaml.safe_load(LIFE)
    rel = p["relations"]
    rel["works_at"]["attributes"] = {"grade": {"kind": "categorical", "values": {"junior": 3, "senior": 2, "lead": 1},
                                               "rises": ["junior", "senior", "lead"], "seniority": "age"}}
    rel["founds"]["attributes"] = {
        "role": {"kind": "categorical", "values": {"founder": 3, "chair": 1}, "one_per_target": {"value": "chair", "exactly": True}},
        "stake": {"kind": "numeric", "distribution": "uniform", "params": {"low": 1, "high": 50}, "min": 1, "max": 50, "integer": True},
        "share_class": {"kind": "numeric", "distribution": "uniform", "params": {"low": 1, "high": 4}, "min": 1, "max": 4,
                        "integer": True, "distinct": "source"}}
    p["types"]["firm"]["attributes"]["capital"] = {"kind": "count", "relation": "founds", "sum": "stake"}
    p["types"]["project"] = copy.deepcopy(PROJECT)
    rel["consults_for"] = {"source": "being", "target": "firm", "cardinality": "N:M", "not_same": ["works_at"],
                           "history": {"count": {"min": 1, "max": 2}, "after": ["source.born + 20y"], "before": ["as_of"],
                                       "length": {"distribution": "lognormal", "params": {"mean": 1.0, "sigma": 0.5},
                                                  "unit": "years"}}}
    rel["trained_at"] = {"source": "being", "target": "town", "cardinality": "N:1",
                         "date": {"after": ["source.born + 16y"], "before": ["source.born + 30y", "as_of"]}}
    rel["works_at"]["history"]["after"].append("source.trained_at.start")
    return p


FIELDS_60 = [
    ("relations", "works_at", "attributes", "grade", "rises"), ("relations", "works_at", "attributes", "grade", "seniority"),
    ("relations", "works_at", "attributes", "grade", "values"), ("relations", "works_at", "attributes", "grade", "one_per_target"),
    ("relations", "founds", "attributes", "role", "one_per_target"), ("relations", "founds", "attributes", "role", "one_per_target", "value"),
    ("relations", "founds", "attributes", "role", "one_per_target", "exactly"), ("relations", "founds", "attributes", "role", "rises"),
    ("relations", "founds", "attributes", "share_class", "distinct"), ("relations", "founds", "attributes", "stake", "max"),
    ("types", "firm", "attributes", "capital", "sum"), ("types", "firm", "attributes", "capital", "relation"),
    ("types", "project", "attributes", "stage", "stages"), ("types", "project", "attributes", "stage", "stages", "start"),
    ("types", "project", "attributes", "stage", "stages", "end"), ("types", "project", "attributes", "stage", "stages", "order"),
    ("types", "project", "attributes", "stage", "values"),
    ("relations", "consults_for", "not_same"), ("relations", "trained_at", "date"), ("relations", "works_at", "history", "after"),
    ("relations", "founds", "eligible"),
]

VALUES_60 = st.sampled_from([
    None, 0, -1, 1e300, "", "x" * 5000, "名字", True, [], {}, ["a"], "age", "career", "sideways", "source", "target",
    "stake", "share_class", "role", "works_at", "founds", "lives_in", ["works_at", "works_at"], ["nope"],
    {"value": "chair"}, {"value": "nope", "exactly": True}, {"value": "founder", "exactly": "yes"},
    ["junior", "senior", "lead"], ["lead", "junior"], ["planned", "under way", "finished"], ["a", "b", "c", "d"],
    {"start": "begun", "end": "done", "order": ["planned", "under way", "finished"]}, {"start": "done", "end": "begun"},
    ["source.trained_at.start"], ["source.trained_at.end"], ["source.works_at.start"], ["source.nope.start"],
    ["source.lives_in.start"], ["source.trained_at.start + 99999y"], ["source.born + 16y", "source.consults_for.start"],
    {"attribute": "born", "after": "source.trained_at.start"},
])


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FIELDS_60), st.sampled_from(["set", "set", "delete"]), VALUES_60), min_size=1, max_size=3))
def test_rules_between_links_fail_cleanly(tmp_path_factory, mutations):
    """Issue 60's fields under hostile input (wrong types, unknown names, huge and non-Latin
    strings, references to a link's end, to itself, to an undated relation): a valid world or a
    clean worldforge error, never a traceback and never a half-written world."""
    tmp = tmp_path_factory.mktemp("fuzz60")
    pack = _life60()
    for path, action, value in mutations:
        _apply(pack, path, action, value)
    _validate_and_plan(life_spec(tmp, counts={**COUNTS, "project": 40},
                                 pack=yaml.safe_dump(pack, sort_keys=False, allow_unicode=True)), tmp)


def test_the_rules_between_links_pack_plans_as_written(tmp_path):
    """The fuzzed pack itself is valid and plans (so the fuzzing starts from a world that works)."""
    info = plan_world(load_world(life_spec(tmp_path, counts={**COUNTS, "project": 40},
                                           pack=yaml.safe_dump(_life60(), sort_keys=False))), tmp_path / "build")
    assert info.manifest["status"] == "complete"

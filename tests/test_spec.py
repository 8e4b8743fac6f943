"""World specs and domain packs: valid input loads, bad input is reported whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from worldforge.errors import SpecError
from worldforge.world.pack import DateBound
from worldforge.world.spec import SCHEMAS_DIR
from worldforge.world.validate import load_world

from .conftest import DEMO, REPO, write_spec


def problems(path: Path) -> list:
    with pytest.raises(SpecError) as exc:
        load_world(path)
    assert exc.value.exit_code == 2
    return exc.value.problems


def write_pack(tmp: Path, name: str, body: dict) -> Path:
    p = tmp / f"{name}.yaml"
    p.write_text(yaml.safe_dump({"pack": name, **body}, sort_keys=False))
    return p


def test_shipped_specs_and_packs_load():
    demo = load_world(DEMO)
    assert set(demo.packs) == {"geography", "organisations", "academia", "sport"}
    assert {"country", "region", "city", "person", "company", "university", "researcher", "club", "player"} <= set(demo.types)
    large = load_world(REPO / "worlds" / "large.yaml")
    assert sum(large.spec.counts.values()) > 700_000


def test_date_bound_text_form():
    b = DateBound.model_validate("founded_by.birth_date + 20y")
    assert (b.ref, b.years, b.days) == ("founded_by.birth_date", 20, 0)
    assert DateBound.model_validate("as_of - 3d").days == -3
    with pytest.raises(ValueError):
        DateBound.model_validate("as_of plus ten years")


def test_invalid_yaml_reports_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nseed: 1\ncounts: {country: 3\npacks: [geography]\n")
    (prob,) = problems(p)
    assert "invalid YAML" in prob.message and "line 4" in prob.message


def test_every_problem_is_reported_at_once(tmp_path):
    p = write_spec(tmp_path, seed=-5, counts={"country": 3, "persn": 10}, locale="xx_YY")
    spec = yaml.safe_load(p.read_text())
    spec["packs"].append("no_such_pack")
    spec["bogus_field"] = 1
    p.write_text(yaml.safe_dump(spec))
    probs = problems(p)
    paths = {pr.path for pr in probs}
    assert "seed" in paths and "bogus_field" in paths and "packs.4" in paths
    assert "did you mean 'person'" in next(pr for pr in probs if pr.path == "counts.persn").message
    unknown_pack = next(pr for pr in probs if pr.path == "packs.4")
    assert "available: academia, geography, organisations, sport" in unknown_pack.message
    assert unknown_pack.value == "'no_such_pack'"


def test_semantic_problems_name_field_value_and_fix(tmp_path):
    p = write_spec(tmp_path, counts={"country": 3, "persn": 10}, locale="xx_YY")
    probs = problems(p)
    by_path = {pr.path: pr for pr in probs}
    assert "did you mean 'person'" in by_path["counts.persn"].message
    assert "unknown faker locale" in by_path["locale"].message
    assert "root type 'person'" in by_path["counts.person"].message
    # A count for a type that is sized by its parent is rejected with the reason.
    p2 = write_spec(tmp_path, name="p2", counts={**yaml.safe_load(write_spec(tmp_path).read_text())["counts"], "city": 5})
    (prob,) = problems(p2)
    assert prob.path == "counts.city" and "generated per region" in prob.message


def _pack_spec(tmp_path: Path, pack: Path, counts: dict) -> Path:
    spec = {"name": "custom", "seed": 1, "as_of": "2025-06-30", "time_span": {"start": "1900-01-01"},
            "packs": ["geography", str(pack)], "counts": {"country": 3, **counts}}
    p = tmp_path / "custom.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


def _name(**parts):
    return {"template": "{a}", "parts": {"a": parts or {"syllables": {"min": 2, "max": 3}}}}


def test_unknown_type_attribute_kind_and_faker_provider(tmp_path):
    pack = write_pack(tmp_path, "shop", {
        "requires": ["geography"],
        "types": {"shop": {"name": _name(), "attributes": {
            "owner": {"kind": "faker", "provider": "nmae"},
            "size": {"kind": "fuzzy", "values": [1, 2]},
        }}},
        "relations": {"in_town": {"source": "shop", "target": "town", "cardinality": "N:1"}},
    })
    probs = problems(_pack_spec(tmp_path, pack, {"shop": 10}))
    msgs = {pr.path: pr for pr in probs}
    kind = next(pr for pr in probs if pr.path.startswith("types.shop.attributes.size"))
    assert "fuzzy" in kind.message and "faker" in kind.message  # lists the accepted kinds
    assert all(pr.source == str(pack) for pr in probs)
    # The kind error stops pydantic; fix it and the provider and type errors show.
    pack = write_pack(tmp_path, "shop", {
        "requires": ["geography"],
        "types": {"shop": {"name": _name(), "attributes": {"owner": {"kind": "faker", "provider": "nmae"}}}},
        "relations": {"in_town": {"source": "shop", "target": "town", "cardinality": "N:1"}},
    })
    msgs = {pr.path: pr for pr in problems(_pack_spec(tmp_path, pack, {"shop": 10}))}
    assert "did you mean 'name'" in msgs["types.shop.attributes.owner.provider"].message
    assert "unknown type" in msgs["relations.in_town.target"].message and "city" in msgs["relations.in_town.target"].message
    name_part = write_pack(tmp_path, "shop", {"types": {"shop": {"name": _name(faker="frist_name")}}})
    (prob,) = problems(_pack_spec(tmp_path, name_part, {"shop": 10}))
    assert prob.path == "types.shop.name.parts.a.faker" and "did you mean 'first_name'" in prob.message


def test_dependency_cycle_is_named(tmp_path):
    pack = write_pack(tmp_path, "loop", {"types": {"thing": {"name": _name(), "attributes": {
        "born": {"kind": "date", "after": ["died - 80y"]},
        "died": {"kind": "date", "after": ["born + 1y"]},
    }}}})
    (prob,) = problems(_pack_spec(tmp_path, pack, {"thing": 5}))
    assert "dependency cycle" in prob.message and "thing.born" in prob.message and "thing.died" in prob.message


def test_empty_date_windows(tmp_path):
    pack = write_pack(tmp_path, "dates", {"types": {"thing": {"name": _name(), "attributes": {
        "when": {"kind": "date", "after": ["as_of - 5y"], "before": ["as_of - 10y"]},
        "other": {"kind": "date", "after": ["when + 3y"], "before": ["when + 1y"]},
    }}}})
    probs = problems(_pack_spec(tmp_path, pack, {"thing": 5}))
    assert {pr.path for pr in probs} == {"types.thing.attributes.when", "types.thing.attributes.other"}
    assert all("date window is empty" in pr.message for pr in probs)
    p = write_spec(tmp_path, time_span={"start": "2030-01-01"})
    assert any("date window is empty" in pr.message for pr in problems(p))


def test_unsatisfiable_counts(tmp_path):
    # 1:1 capital needs one city per country; a world with many countries but few cities cannot.
    pack = write_pack(tmp_path, "mini", {"types": {
        "land": {"name": _name()},
        "town": {"name": _name()},
    }, "relations": {"seat": {"source": "land", "target": "town", "cardinality": "1:1", "required": True}}})
    spec = {"name": "x", "seed": 1, "as_of": "2025-06-30", "time_span": {"start": "1900-01-01"},
            "packs": [str(pack)], "counts": {"land": 50, "town": 10}}
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(spec))
    (prob,) = problems(p)
    assert "needs about 50 distinct targets" in prob.message
    # N:1 cardinality with count.max > 1 is a contradiction in the pack itself.
    bad = write_pack(tmp_path, "mini2", {"types": {"land": {"name": _name()}},
                                         "relations": {"r": {"source": "land", "target": "land", "cardinality": "N:1",
                                                             "count": {"min": 1, "max": 3}}}})
    spec["packs"], spec["counts"] = [str(bad)], {"land": 5}
    p.write_text(yaml.safe_dump(spec))
    (prob,) = problems(p)
    assert "at most one target" in prob.message


def test_name_capacity_is_checked_at_plan_time(tmp_path):
    from worldforge.errors import PlanError
    from worldforge.world.planner import generate_world

    pack = write_pack(tmp_path, "tiny", {"types": {"thing": {"name": {"template": "{a}", "parts": {"a": {"choices": ["x", "y", "z"]}}}}}})
    spec = {"name": "x", "seed": 1, "as_of": "2025-06-30", "time_span": {"start": "1900-01-01"},
            "packs": [str(pack)], "counts": {"thing": 100}}
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(spec))
    with pytest.raises(PlanError, match="needs 100 unique names"):
        generate_world(load_world(p))


def test_bad_derived_sql_is_a_spec_problem(tmp_path):
    pack = write_pack(tmp_path, "d", {"types": {"thing": {"name": _name(), "attributes": {
        "x": {"kind": "derived", "dtype": "int", "sql": "no_such_column + 1"}}}}})
    (prob,) = problems(_pack_spec(tmp_path, pack, {"thing": 5}))
    assert prob.path == "types.thing.attributes.x.sql" and "DuckDB" in prob.message


def test_packs_found_by_name_on_search_path(tmp_path, monkeypatch):
    packs = tmp_path / "mypacks"
    packs.mkdir()
    write_pack(packs, "things", {"types": {"thing": {"name": _name()}}})
    spec = {"name": "x", "seed": 1, "as_of": "2025-06-30", "time_span": {"start": "1900-01-01"},
            "packs": ["things"], "counts": {"thing": 5}}
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(spec))
    (prob,) = problems(p)
    assert "unknown pack" in prob.message
    monkeypatch.setenv("WORLDFORGE_SCHEMAS", str(packs))
    assert set(load_world(p).types) == {"thing"}


def test_render_options_and_page_declarations_are_checked(tmp_path):
    bad = write_spec(tmp_path, name="bad", stages={"render": {"backend": "gpu", "retries": -1}})
    with pytest.raises(SpecError) as e:
        load_world(bad)
    text = "\n".join(str(p) for p in e.value.problems)
    assert "stages.render.backend" in text and "stages.render.retries" in text
    spec = write_spec(tmp_path)
    import shutil

    packs = tmp_path / "packs"
    shutil.copytree(SCHEMAS_DIR, packs)
    pack = yaml.safe_load((SCHEMAS_DIR / "organisations.yaml").read_text())
    pack["types"]["company"]["pages"]["news"] = ["founded", "bankrupt"]
    pack["types"]["company"]["pages"]["directories"][0] = {"by": "headquarterd_in", "title": "Companies", "columns": ["size"]}
    pack["types"]["company"]["attributes"]["industry"]["phrases"] = ["{subject} makes {thing}."]
    (packs / "organisations.yaml").write_text(yaml.safe_dump(pack))
    with pytest.raises(SpecError) as e:
        load_world(spec, schemas_dir=packs)
    assert "'{subject} makes {thing}.' uses ['thing']" in str(e.value)
    del pack["types"]["company"]["attributes"]["industry"]["phrases"]
    (packs / "organisations.yaml").write_text(yaml.safe_dump(pack))
    with pytest.raises(SpecError) as e:
        load_world(spec, schemas_dir=packs)
    text = "\n".join(str(p) for p in e.value.problems)
    assert "pages.news.1" in text and "bankrupt" in text
    assert "directories.0.by" in text and "headquartered_in" in text  # did you mean
    assert "must contain {group}" in text and "directories.0.columns.0" in text

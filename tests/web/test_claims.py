"""The page check for claims beyond a page's facts (web/claims.py, issue 61): template pages pass
it, and every kind of injected claim (real-world names, an invented person, another entity, a
wrong relation, another category value or figure) is refused, in English, Spanish and Chinese."""

from __future__ import annotations

import importlib.util

import pytest
import yaml

from tests.conftest import REPO, SMALL_COUNTS


def _bench():
    spec = importlib.util.spec_from_file_location("claims_bench", REPO / "benchmarks" / "claims.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module", params=["demo", "demo_zh", "demo_es"])
def small_world(request, tmp_path_factory):
    """A shipped demo spec at the tests' small size, planned (its pages are planned and written here)."""
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    tmp = tmp_path_factory.mktemp(request.param)
    spec = yaml.safe_load((REPO / "worlds" / f"{request.param}.yaml").read_text())
    counts = {k: v for k, v in SMALL_COUNTS.items() if k in spec["counts"]} or spec["counts"]
    spec.update(name=f"{request.param}_small", counts=counts, seed=11)
    path = tmp / f"{request.param}_small.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    return plan_world(load_world(path), tmp / "build").path


def test_template_pages_pass_and_injected_claims_are_refused(small_world):
    bench = _bench()
    out = bench.measure(small_world, per_kind=4, stride=3)
    assert out["pages"] > 500
    assert out["false_alarms"] == 0, out["examples"]  # the check refuses no template page
    for kind in bench.KINDS:
        assert out["injected"][kind] >= 1, f"no page took a {kind} claim"
    assert sum(out["accepted"].values()) == 0, out["accepted_examples"]


def test_claims_name_what_is_wrong(demo_world):
    from worldforge.web.claims import ClaimCheck
    from worldforge.web.llm import page_problems
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.web.template import TemplateWriter
    from worldforge.world.store import open_world

    info = open_world(demo_world.path)
    view = WorldView(info, info.world.spec.stages.render)
    try:
        claims = ClaimCheck(view)
        writer = TemplateWriter(view)
        page = next(p for p in plan_pages(view) if p.kind == "article" and view.type_of[p.subject] == "company")
        md = writer.write(page)
        subject = view.names[page.subject]
        assert not claims.problems(md, page)
        said = claims.problems(md + f"\n\n{subject} hosts the European headquarters of Adobe Systems.", page)
        assert any("Adobe" in p and p.startswith("unknown name") for p in said), said
        stranger = next(e for e, t in view.type_of.items() if t == "person" and e not in page.entity_ids)
        said = claims.problems(md + f"\n\nIts longest-serving adviser was {view.names[stranger]}.", page)
        assert said == [f"names {view.names[stranger]!r}, not on its sheet"]
        # the writer's whole judgement holds the claims too: a page the fact sheet accepts is refused
        assert page_problems(view, page, md, claims) == []
        assert page_problems(view, page, md + "\n\nIt is the capital of France.", claims) == ["unknown name 'France'"]
        # with no page (a rewrite, a question): names only, and the words given are allowed
        assert claims.problems("Praquin Labs is a UK-based company.", allowed=["Praquin Labs"]) == ["unknown name 'UK-based'"]
    finally:
        view.close()

"""Packs no shipped world uses, with rules between links and over time (issue 60), run end to
end in English and in Chinese (`tests/packs/grants.yaml`): research institutes, the scientists
appointed there on a ladder whose grade never falls (`rises`), and grants that each have exactly
one principal investigator (`one_per_target`) and are planned, under way or finished at the
world's date as their dates say (`stages`), in the declared shares.

What a user of the world sees is measured: the pack's own audit holds (no fall, no second
investigator, no grant without one, every stage what its dates say, the shares within 5 points),
no page states a stage the grant was not in on the page's date, tasks ask about the stages and
the grades, and the clean oracle answers those at least 0.9.

A second pack, a football league (`tests/packs/league.yaml`): one captain of a club at a time
(`one_per_target`), loans never to the footballer's own club (`not_same`), squad numbers distinct
within a squad, a club's spending its spells' fees added up (`count` with `sum`); its rules hold
and tasks read each one's facts, answered by the clean oracle at least 0.9.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO

WORLDS = {"grants": "grants_world.yaml", "grants_zh": "grants_zh_world.yaml"}
LEAGUE = {"league": "league_world.yaml", "league_zh": "league_zh_world.yaml"}


@pytest.fixture(scope="module")
def grants(tmp_path_factory):
    from worldforge.run import run_pipeline

    tmp = tmp_path_factory.mktemp("packs")
    return {name: run_pipeline(REPO / "tests" / "packs" / spec, tmp / "build", tmp / "exports").world
            for name, spec in {**WORLDS, **LEAGUE}.items()}


def _clean_oracle(world):
    from worldforge.rollout.oracle import clean_oracle

    return clean_oracle(world)


@pytest.mark.parametrize("name", WORLDS)
def test_the_packs_rules_hold_in_the_world(grants, name):
    from worldforge.world.audit import audit_world

    report = audit_world(grants[name])
    assert report.broken == [] and report.unmatched == [] and len(report.thresholds) >= 6, report.broken  # and geography's
    stage = next(r for r in report.sections["given"] if r["subject"].startswith("grant.status stages"))
    assert stage["n"] > 300 and stage["share"] == 1.0 and stage["gap"] <= 5.0, stage
    links = {r["subject"]: r for r in report.sections["link_values"]}
    assert links["appointed_at.grade"]["falls"] == 0 and links["works_on.role"]["clashes"] == 0
    assert links["works_on.role"]["targets_without"] == 0
    assert links["trained_at.supervisor"]["unheld"] == 0 and links["trained_at.supervisor"]["filled"] > 0.5


@pytest.mark.parametrize("name", WORLDS)
def test_no_page_states_a_stage_the_grant_was_not_in_then(grants, name):
    """Every page that states a grant's status (today's, or an earlier year's from its history)
    states the stage the grant was in on the page's own date: none calls a grant under way
    before it began or after it ended, nor finished before it ended (the history is by mid-year;
    a page of a year the stage changed in states it only where it held on the page's day)."""
    import duckdb

    from worldforge.web.store import open_pages
    from worldforge.world.spec import value_translation
    from worldforge.world.store import open_world

    world = grants[name]
    tr = value_translation(open_world(world).world, "grant", "status")
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        grant = {i: (s, b, c) for i, s, b, c in con.execute("SELECT id, status, begun, completed FROM grant").fetchall()}
        past = {(i, y): v for i, y, v in con.execute("SELECT subject, year, text FROM series WHERE predicate = 'status'").fetchall()}
    con = open_pages(world / "web")
    try:
        rows = con.execute("SELECT p.date, f.fact_id FROM page_facts f JOIN pages p USING (url) "
                           "WHERE f.fact_id LIKE 'grant%/status%' AND p.date IS NOT NULL").fetchall()
    finally:
        con.close()
    assert len(rows) > 300 and {"@" in f for _, f in rows} == {True, False}  # today's and earlier years'
    for day, fact_id in rows:
        gid, year = fact_id.split("/")[0], fact_id.partition("@")[2]
        now, begun, completed = grant[gid]
        stated = past[(gid, int(year))] if year else now
        then = "finished" if completed and completed <= day else "under way" if begun and begun <= day else "planned"
        assert stated == tr.get(then, then), (fact_id, day, stated, begun, completed)


@pytest.mark.parametrize("name", WORLDS)
def test_tasks_ask_about_stages_and_grades_and_the_oracle_answers(grants, name):
    """Tasks read each new field's facts (a grant's stage, a post's grade, a doctorate's
    supervisor: a multi-hop question follows the supervisor the doctorate's line names, found by
    name; a grant's principal investigator: a column of the one team member holding the role),
    and the oracle answers them from the pages."""
    eps = _clean_oracle(grants[name])
    for feature, said in (("status", r'"(attribute|attr)": "status"'), ("grade", r'"(attribute|attr)": "grade"'),
                          ("supervisor", r'"via": "trained_at", "kind": "held"'), ("principal investigator", r'"only": \{')):
        reading = [e for e in eps if re.search(said, json.dumps(e.task.record["question"]))]
        assert len(reading) >= 3, (feature, len(reading))
        assert sum(e.reward for e in reading) / len(reading) >= 0.9, (feature, [round(e.reward, 2) for e in reading])
    assert sum(e.reward for e in eps) / len(eps) >= 0.95


# --------------------------------------------------------------------------- the league pack


@pytest.mark.parametrize("name", LEAGUE)
def test_the_league_packs_rules_hold_in_the_world(grants, name):
    """The second pack's rules between links (tests/packs/league.yaml): one captain of a club at a
    time and every club has had one, a loan never to the club the footballer plays for then, no
    two footballers of a squad with one number at a time, a club's spending its fees added up;
    every invariant holds and the pack's audit thresholds judge and pass."""
    import duckdb

    from worldforge.world.audit import audit_world
    from worldforge.world.invariants import check_world

    world = grants[name]
    report = audit_world(world)
    assert report.broken == [] and report.unmatched == [] and len(report.thresholds) >= 4, report.broken
    links = {r["subject"]: r for r in report.sections["link_values"]}
    assert links["plays_for.role"]["clashes"] == 0 and links["plays_for.role"]["targets_without"] == 0
    assert links["plays_for.squad_number"]["clashes"] == 0
    assert links["loaned_to.parent_club"]["unheld"] == 0 and links["loaned_to.parent_club"]["filled"] > 0.6
    spending = next(r for r in report.sections["derived"] if r["subject"] == "club.spending = sum plays_for.fee")
    assert spending["share"] == 1.0 and spending["n"] > 50
    assert check_world(world)[1] == []
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        (loans, home), = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM rel_plays_for p WHERE p.source = l.source "
            "AND p.target = l.target AND p.valid_from <= l.valid_from AND l.valid_from < coalesce(p.valid_to, DATE '9999-12-31'))) "
            "FROM rel_loaned_to l").fetchall()
    assert loans > 200 and home == 0


@pytest.mark.parametrize("name", LEAGUE)
def test_tasks_ask_about_captains_fees_and_loans_and_the_oracle_answers(grants, name):
    """Tasks read each new rule's facts (a spell's role, fee and number; a club's spending; the
    loans), at least 3 each, and the clean oracle answers them at least 0.9 (a label with
    brackets of its own and a Chinese note with a number were misread before: 0.45 / 0.38)."""
    report = json.loads((grants[name] / "tasks" / "report.json").read_text())
    assert "garbled-question" not in report["dropped"]["table"], report["dropped"]  # 出生于 + 在…之间 read 出生于在…
    eps = _clean_oracle(grants[name])
    for feature in ('"role"', '"fee"', '"squad_number"', '"spending"', '"loaned_to"', '"kind": "held"'):  # (held: a loan's parent club)
        reading = [e for e in eps if feature in json.dumps(e.task.record["question"])]
        assert len(reading) >= 3, (feature, len(reading))
        assert sum(e.reward for e in reading) / len(reading) >= 0.9, (feature, [round(e.reward, 2) for e in reading])
    assert sum(e.reward for e in eps) / len(eps) >= 0.95

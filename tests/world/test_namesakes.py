"""Namesakes and near-duplicate names (issue 14): declared per type in the packs, planned so
that namesakes differ in place or era, told apart by the encyclopedia's titles, and never the
reason a question is ambiguous or a gold table has two rows with one key."""

from __future__ import annotations

import csv
import json
from collections import Counter

import duckdb
import polars as pl
import pytest

from tests.conftest import write_spec
from worldforge.tasks.scoring import norm_column
from worldforge.web.store import open_pages
from worldforge.world.planner import generate_world
from worldforge.world.validate import load_world

DECLARED = {"person": ("birth_date", "born_in"), "company": ("founded", "headquartered_in"), "club": ("founded", None)}


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    world = load_world(write_spec(tmp_path_factory.mktemp("ns"), name="names", seed=5))
    return world, generate_world(world)


def _one_edit(a: str, b: str) -> bool:
    """Same length and one character apart, or one letter added to the first word."""
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    return abs(len(a) - len(b)) == 1 and a.split(" ", 1)[1:] == b.split(" ", 1)[1:]


def test_namesakes_follow_the_declared_rate_and_differ_in_place_or_era(planned):
    world, w = planned
    total = 0
    for t, (start, place) in DECLARED.items():
        df = w.entities[t].with_row_index("i")
        n = df.height
        assert df["id"].n_unique() == n
        counts = Counter(df["name"].to_list())
        shared = [x for x, c in counts.items() if c > 1]
        assert max(counts.values()) <= 2
        want = round(world.types[t].namesakes * n)  # pairs only within one name context: at least half
        assert want // 2 <= len(shared) <= want and (want == 0 or shared), (t, len(shared), n)
        total += len(shared)
        homes = {}
        if place:
            e = w.edges[place]
            homes = dict(zip(e["src"].to_list(), e["tgt"].to_list()))
        for name in shared:
            a, b = df.filter(pl.col("name") == name).select("i", start).rows()
            differ = a[1] is None or b[1] is None or a[1].year != b[1].year or homes.get(a[0]) != homes.get(b[0])
            assert differ, (t, name)
    assert total >= 5
    people = sorted(set(w.entities["person"]["name"].to_list()))
    near = [(a, b) for i, a in enumerate(people) for b in people[i + 1:i + 60] if _one_edit(a, b)]
    assert near  # a name one letter from another's (sorted neighbours share their first letters)


def test_no_namesakes_unless_declared(tmp_path):
    from worldforge.world.pack import EntityType

    assert EntityType.model_fields["namesakes"].default == 0.0
    w = generate_world(load_world(write_spec(tmp_path, name="plain", seed=5)))
    for t in ("country", "university", "award"):
        assert w.entities[t]["name"].n_unique() == w.entities[t].height


def test_namesakes_get_their_own_pages_and_titles(demo_web):
    path, _ = demo_web
    with duckdb.connect(str(path / "world.duckdb"), read_only=True) as con:
        namesakes = dict(con.execute("SELECT id, name FROM person WHERE name IN "
                                     "(SELECT name FROM person GROUP BY name HAVING count(*) > 1)").fetchall())
    assert namesakes
    with open_pages(path / "web") as con:
        rows = con.execute("SELECT url, title, kind, subject FROM pages WHERE kind IN ('article', 'profile')").fetchall()
    urls = [u for u, _, k, _ in rows if k == "article"]
    assert len(urls) == len(set(urls))
    arts = {s: (u, t) for u, t, k, s in rows if k == "article"}
    profiles = {s: u for u, _, k, s in rows if k == "profile"}
    # each namesake has a page of its own: its article, else (no article) its profile
    own = [arts[i][0] if i in arts else profiles[i] for i in namesakes]
    assert len(set(own)) == len(namesakes)
    titles = [arts[i][1] for i in namesakes if i in arts]
    assert len(titles) >= len(namesakes) // 3 and len(set(titles)) == len(titles)
    assert all(t.endswith(")") and "person, " in t for t in titles)


def test_no_task_names_an_ambiguous_entity_or_keys_two_rows_alike(small_run):
    _spec, world, _ = small_run
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        shared = set()
        for t in DECLARED:
            shared |= {n for (n,) in con.execute(f'SELECT name FROM "{t}" GROUP BY name HAVING count(*) > 1').fetchall()}
    assert shared
    recs = [json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()]
    for r in recs:
        assert not shared & {v for v in r["constraint_values"] if isinstance(v, str)}, r["instance_id"]
        keys = r["evaluation"]["unique_columns"]
        with open(world / "tasks" / "gold" / f"{r['instance_id']}.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        cols = [c for c in rows[0] if norm_column(c) in keys] if rows else []
        ks = [tuple(row[c] for c in cols) for row in rows]
        assert len(ks) == len(set(ks)), r["instance_id"]
    report = json.loads((world / "tasks" / "report.json").read_text())
    assert "dropped" in report

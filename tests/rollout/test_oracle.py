"""The honest oracle on the demo world: the targets of its issue, measured from its trajectories
(`worldforge.rollout.measure`); speed is measured by `benchmarks/oracle.py`, not here."""

from __future__ import annotations

import json

import pytest

from worldforge.rollout import Environment, load_tasks
from worldforge.rollout.context import resume_content, samples
from worldforge.rollout.env import TOOLS
from worldforge.rollout.grounding import GroundingReport, check_trajectory
from worldforge.rollout.measure import negating, reasoning_skeletons, rejected_opens, sample_tokens, unseen_opens
from worldforge.rollout.oracle import run_oracle
from worldforge.tokens import estimate_tokens
from worldforge.world.options import RolloutOptions

RESEARCH: dict[str, list] = {}  # the oracle's own counters per run: (task kind, research dict) per episode


@pytest.fixture(scope="module")
def demo_rollouts(demo_tasks):
    """The oracle on all 300 demo tasks, without perturbations and with the default ones."""
    world, _, _ = demo_tasks
    out = {}
    for name, opt in (("clean", RolloutOptions(perturbations={})), ("perturbed", RolloutOptions())):
        env = Environment.for_world(world, opt)
        eps = [env.episode(t) for t in load_tasks(world)]
        run_oracle(eps, opt)
        out[name] = (env, [ep.trajectory("oracle") for ep in eps])
        RESEARCH[name] = [(ep.task.record["kind"], ep.research) for ep in eps]
    yield world, out
    for env, _ in out.values():
        env.close()


def _mean(xs):
    return sum(xs) / len(xs)


def test_rewards_high_without_perturbations_and_varied_with_them(demo_rollouts):
    _, out = demo_rollouts
    clean, pert = out["clean"][1], out["perturbed"][1]
    assert len(clean) == len(pert) == 300
    assert _mean([t["reward"] for t in clean]) >= 0.95  # values no generic cue reaches on a profile are left unknown (issue 35)
    rewards = [t["reward"] for t in pert]
    assert _mean(rewards) < 1.0 and sum(r < 1.0 for r in rewards) >= 0.15 * len(rewards)  # the web misleads it now and then
    assert all(t["end"] == "answer" for t in clean + pert)


def test_disagreeing_sources_are_weighed_by_their_dates(demo_rollouts):
    """Without perturbations, at least a fifth of the table trajectories meet two original
    sources that disagree (a profile last updated years ago with an older figure or a former
    club, beside the live article) and say which value they keep and why (the researcher
    issue's target); the answers still score (the fresher value is kept)."""
    _, out = demo_rollouts
    tables = [r for kind, r in RESEARCH["clean"] if kind == "table"]
    reconciled = sum(r.get("conflicts", 0) > 0 for r in tables)
    assert reconciled >= 0.2 * len(tables), (reconciled, len(tables))
    said = [m["content"] for t in out["clean"][1] for m in t["messages"] if m["role"] == "assistant"
            and "(updated " in (m.get("content") or "")
            and any(w in m["content"] for w in ("disagree", "Conflict for", ", but "))]
    assert said, "no trajectory says which sources disagree"


def test_a_turn_makes_as_many_calls_as_its_work_needs(demo_rollouts):
    """No one calls-per-turn count on more than 40 % of the turns (the researcher issue): a turn
    opens what it can read with care, pages for one purpose first, beside a search when the next
    step depends on it."""
    from collections import Counter

    _, out = demo_rollouts
    per_turn: Counter = Counter()
    for t in out["clean"][1]:
        for m in t["messages"]:
            calls = [c for c in m.get("tool_calls") or [] if c["function"]["name"] != "final_answer"]
            if calls:
                per_turn[len(calls)] += 1
    assert len(per_turn) >= 3 and max(per_turn.values()) <= 0.4 * sum(per_turn.values()), per_turn


def test_no_page_is_opened_before_something_showed_it(demo_rollouts):
    world, out = demo_rollouts
    tasks = {t.id: t for t in load_tasks(world)}
    for env, trajs in out.values():  # (replayed as the episode ran them: a training task's searches hide held-out pages)
        assert sum(len(unseen_opens(t, env.execute, env.hidden_for(tasks[t["instance_id"]]))) for t in trajs) == 0


def test_candidates_are_checked_and_dropped_on_not_and_or_tasks(demo_rollouts):
    world, out = demo_rollouts
    env, trajs = out["clean"]
    # an entity's page: its article, or the profile of one without an article
    own = ("SELECT url, title, subject FROM pages p WHERE kind = 'article' OR (kind = 'profile' AND NOT EXISTS "
           "(SELECT 1 FROM pages a WHERE a.kind = 'article' AND a.subject = p.subject))")
    rows = env.engine.pages.execute(own).fetchall()
    titles = {u: t for u, t, _ in rows}
    subjects = {u: s for u, _, s in rows}

    def type_of(url):
        if url not in subjects:
            return None
        return subjects[url].rsplit("_", 1)[0], titles[url].split(" (")[0]

    records = {json.loads(x)["instance_id"]: json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()}
    rej = tot = 0
    for t in trajs:
        if negating(records[t["instance_id"]]):
            r, n = rejected_opens(t, records[t["instance_id"]], type_of)
            rej, tot = rej + r, tot + n
    # (27 % of opens on the task mix before issue 37, 13 % after: its mix has two NOT/OR tasks about
    # players, whose candidates are checked on their pages, where it had five; the rest are mostly
    # about cities, which the directory rows settle without an open)
    assert tot > 1000 and rej / tot >= 0.10
    # and the trajectories say why a candidate goes
    said = " ".join(m["content"] for t in trajs for m in t["messages"] if m["role"] == "assistant")
    assert said.count("fails") + said.count("is out") + said.count("Dropping") + said.count("Excluding") > 100


def test_reasoning_reads_varied(demo_rollouts):
    _, out = demo_rollouts
    skeletons = reasoning_skeletons(out["perturbed"][1])
    assert len(skeletons) >= 1000
    assert max(skeletons.values()) / sum(skeletons.values()) < 0.05  # no one sentence shape dominates


def test_samples_fit_the_context_budget_and_segments_resume_from_the_state(demo_rollouts):
    _, out = demo_rollouts
    trajs = out["perturbed"][1]
    lengths = [sample_tokens(x.messages, TOOLS, estimate_tokens) for t in trajs for x in samples(t)]
    assert sum(n < 32000 for n in lengths) / len(lengths) >= 0.95
    compacted = [t for t in trajs if t["context"]["compactions"]]
    assert len(compacted) >= 30
    for t in compacted:
        msgs, segs = t["messages"], t["segments"]
        assert len(segs) == t["context"]["compactions"] + 1 == len(t["context"]["sizes"])
        notes: list[str] = []
        for prev, seg in zip(segs, segs[1:]):
            ask, state = msgs[prev["end"] - 2], msgs[prev["end"] - 1]
            assert ask["role"] == "user" and ask["content"].startswith("Context limit:")
            assert state["role"] == "assistant" and not state.get("tool_calls") and state["content"].startswith("## Research notes")
            # a note adds to the earlier ones, or (asked to, when they fill too much) replaces them
            notes = [state["content"]] if "replaces all your earlier notes" in ask["content"] else [*notes, state["content"]]
            # the next segment starts from exactly [system, task + every note so far]
            assert seg["prefix"] == [msgs[0], {"role": "user", "content": resume_content(msgs[1]["content"], notes)}]
            assert seg["start"] == prev["end"]
        assert segs[-1]["end"] == len(msgs)


def test_every_sample_is_grounded_in_what_it_shows(demo_rollouts):
    """The grounding targets on the demo: 0 pages opened unseen (nor named in a state unseen),
    at least 99 % of informative answer cells visible in their sample, 0 narration counts that
    contradict the actions; and the clean oracle still scores at least 0.95."""
    world, out = demo_rollouts
    records = {t.id: t.record for t in load_tasks(world)}
    for name, (_, trajs) in out.items():
        rep = GroundingReport()
        for t in trajs:
            for x, check in check_trajectory(t, records[t["instance_id"]]):
                rep.add(f"{t['instance_id']}/{x.segment}", check)
        assert rep.opens > 10_000 and rep.unseen_opens == 0 and rep.unseen_state_urls == 0, (name, rep.examples)
        assert rep.cells > 10_000 and rep.visible_cells / rep.cells >= 0.99, (name, rep.examples)
        assert rep.claims > 500 and rep.contradicted == 0, (name, rep.examples)
    assert _mean([t["reward"] for t in out["clean"][1]]) >= 0.95


def test_narration_banks_agree_across_languages():
    """Every move the narrator can say is phrased in English and Chinese, each form with the same
    slots (a Chinese clause names nothing the English one lacks), and every move of the turn's
    phases has at least two phrasings to draw from."""
    import string

    from worldforge.language import languages as all_languages
    from worldforge.rollout.narrator import PHASES, bank, languages

    assert languages() == all_languages()
    en = bank("en")["moves"]
    fields = lambda t: {f for _, f, _, _ in string.Formatter().parse(t) if f}  # noqa: E731

    def forms(v):  # a move's templates by form ('one', 'many'), or its only list
        return {k: x for k, x in v.items() if isinstance(x, list)} if isinstance(v, dict) else {"": v} if isinstance(v, list) else {}

    for code in languages():
        other = bank(code)["moves"]
        assert set(bank("en")) == set(bank(code)) and set(en) == set(other), code
        for move in en:
            for form, templates in forms(en[move]).items():
                if not all(isinstance(t, str) for t in templates):
                    continue
                slots = set().union(*(fields(t) for t in templates))
                for t in forms(other[move]).get(form, []):
                    assert fields(t) <= slots, (code, move, form, t)
        for move in {m for ms in PHASES.values() for m in ms}:
            assert move in other, (code, move)
            assert sum(len(x) for x in forms(other[move]).values()) >= 2, (code, move)


def test_a_list_is_taken_only_by_its_whole_title():
    """The type's name must match the list's title whole, in either language: "电影" is a prefix
    of "电影节", and the films' list is not the festivals' one."""
    from worldforge.language import get
    from worldforge.rollout.sources import PartList

    zh, en_ = get("zh"), get("en")
    films = PartList("电影", "白城", frozenset())
    assert films._title_ok("白城的电影", zh) and films._title_ok("白城的电影（第2页，共3页）", zh)
    assert not films._title_ok("白城的电影节", zh) and not films._title_ok("白城的电影节（第1页，共2页）", zh)
    en = PartList("Films", "Tisland", frozenset())
    assert en._title_ok("Films in Tisland (page 1 of 4)", en_) and en._title_ok("films in  Tisland", en_)
    assert not en._title_ok("Films in Tisland Province", en_) and not en._title_ok("Film festivals in Tisland", en_)
    former = PartList("公司", "卡利亚", frozenset(), former=True)
    assert former._title_ok("曾属卡利亚的公司（第1页，共2页）", zh) and not former._title_ok("卡利亚的公司", zh)


def test_a_namesakes_dated_profile_is_not_a_disagreement():
    """The oracle weighs a dated profile against an article only when one links the other: a
    namesake's official site (another company of the same name) is not a second source."""
    from worldforge.rollout.compare import same_entity as _same_entity
    from worldforge.rollout.reading import read_page

    art_url = "https://enc.org/wiki/Islun_Studios_%28company,_1991%29"
    art = read_page(art_url, "# Islun Studios (company, 1991)\n\n**Islun Studios** is a company.\n\n| Company | |\n|---|---|\n"
                             "| Employees | 8,984 employees |\n\n## External links\n\n"
                             "- [Islun Studios at Kelp](https://www.kelp.example/company/islun-studios-1a2b3c)\n")
    site = "https://www.islunstudios.example/about"
    text = ("# Islun Studios\n\n*Islun Studios* · Official website · updated Oct 18, 2023\n\n## Profile\n\n"
            "- **Employees:** 22 employees\n\n---\nMore about Islun Studios: [Enc](https://enc.org/wiki/Islun_Studios)\n")
    assert not _same_entity(art, art_url, read_page(site, text), site)  # another Islun Studios
    own = text.replace("wiki/Islun_Studios)", "wiki/Islun_Studios_%28company,_1991%29)")
    assert _same_entity(art, art_url, read_page(site, own), site)  # its own site links its article
    listed = "https://www.kelp.example/company/islun-studios-1a2b3c"
    assert _same_entity(art, art_url, read_page(listed, text), listed)  # the article links the profile


def test_a_second_source_is_taken_only_under_the_whole_name():
    """A cross-check opens a page titled with the candidate's name, alone or with a qualifier,
    never one whose title only begins with it (Chinese names run on without a space: 刘峰 is not
    刘峰亮; three training tasks of demo_zh opened such a page and were dropped for it)."""
    from worldforge.rollout.absorb import title_names as _names

    assert _names("Liu Feng", "Liu Feng") and _names("Liu Feng (player, 1990)", "Liu Feng") and _names("刘峰（球员）", "刘峰")
    assert not _names("刘峰亮", "刘峰") and not _names("Ann Leeds", "Ann Lee") and not _names("Ann", "Ann Lee")


def test_link_attributes_are_stated_asked_and_read(demo_rollouts):
    """A job's department is drawn per link (`attributes` on employed_by), stated on every page
    that states the job (lists, infoboxes, key facts, directories, prose), asked as a column of
    the job's row in timeline tables and as a condition ("only those where the department was
    sales"); the gold comes from the link's table, and the clean oracle reads the value after
    each link and fills it."""
    import duckdb

    from worldforge.web.store import open_pages

    world, out = demo_rollouts
    con = open_pages(world / "web")
    try:
        con.execute(f"ATTACH '{world / 'world.duckdb'}' AS w (READ_ONLY)")
        values = {r[0] for r in con.execute("SELECT DISTINCT department FROM w.rel_employed_by").fetchall()}
        assert values and None not in values and values <= {"engineering", "sales", "operations", "finance", "marketing",
                                                            "research", "legal", "human resources"}
        stated, missing = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE strpos(p.markdown, e.department) = 0) FROM page_facts f "
            "JOIN pages p ON p.url = f.url JOIN w.facts x ON x.fact_id = f.fact_id JOIN w.rel_employed_by e ON e.source = x.subject "
            "AND e.target = x.value AND e.valid_from IS NOT DISTINCT FROM x.valid_from WHERE x.predicate = 'employed_by'").fetchone()
        assert stated > 1000 and missing == 0
        assert con.execute("SELECT count(*) FROM w.facts WHERE predicate = 'employed_by' AND note IS NULL").fetchone()[0] == 0
    finally:
        con.execute("DETACH DATABASE IF EXISTS w")  # an attachment outlives the connection while others are open
        con.close()
    tasks = {t["instance_id"]: t for t in map(json.loads, (world / "tasks" / "tasks.jsonl").read_text().splitlines())}
    asked = [t for t in tasks.values() if t["kind"] == "table" and "department" in t["columns"]]
    assert asked, "no timeline table asks for a job's department"
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as w:
        for t in asked:
            col = "department"
            gold = {r[t["columns"].index(col)] for r in w.execute(t["sql"]).fetchall()}
            assert gold and gold <= values
    clean = {tr["instance_id"]: tr for tr in out["clean"][1]}
    for t in asked:
        assert clean[t["instance_id"]]["reward"] >= 0.9, (t["instance_id"], clean[t["instance_id"]]["reward"])
    filtered = [t for t in tasks.values() if t["question"].get("note_filter")]
    for t in filtered:  # "only those where the department was finance": the value is in the question, not a column
        f = t["question"]["note_filter"]
        assert f["value"] in t["query"] and f["label"].lower() not in [c.lower() for c in t["columns"]]
        assert clean[t["instance_id"]]["reward"] >= 0.9


def test_link_numbers_are_stated_asked_and_read(demo_rollouts):
    """A player's shirt number per spell (a numeric link attribute of plays_for, distinct within
    a squad) is stated with the spell on the pages that state it (as "shirt number 9" in lists, a column of
    directories, in the pack's words in sentences), asked as a column of timeline tables (never as a
    condition), with gold from the link's table; the clean oracle reads it and fills it."""
    import duckdb

    from worldforge.web.store import open_pages

    world, out = demo_rollouts
    con = open_pages(world / "web")
    try:
        con.execute(f"ATTACH '{world / 'world.duckdb'}' AS w (READ_ONLY)")
        stated, missing = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE NOT regexp_matches(p.markdown, "
            "'((shirt number|number) ' || e.shirt_number || '\\b|\\| ' || e.shirt_number || ' \\|)')) "
            "FROM page_facts f JOIN pages p ON p.url = f.url JOIN w.facts x ON x.fact_id = f.fact_id JOIN w.rel_plays_for e "
            "ON e.source = x.subject AND e.target = x.value AND e.valid_from IS NOT DISTINCT FROM x.valid_from "
            "WHERE x.predicate = 'plays_for' AND e.shirt_number IS NOT NULL").fetchone()
        assert stated > 1000 and missing == 0, (stated, missing)
    finally:
        con.execute("DETACH DATABASE IF EXISTS w")
        con.close()
    tasks = [json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()]
    asked = [t for t in tasks if t["kind"] == "table" and "shirt number" in t["columns"]]
    assert asked, "no timeline table asks for a shirt number"
    assert not any((t["question"].get("note_filter") or {}).get("label") == "Shirt number" for t in tasks)
    clean = {tr["instance_id"]: tr for tr in out["clean"][1]}
    from worldforge.world.store import open_world

    limit = open_world(world).world.spec.stages.rollout.max_turns
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as w:
        for t in asked:
            gold = [r[t["columns"].index("shirt number")] for r in w.execute(t["sql"]).fetchall()]
            assert gold and all(str(g).isdigit() and 1 <= int(g) <= 99 for g in gold)
            tr = clean[t["instance_id"]]
            # every shirt number it writes is right (checked cell by cell: another column, a club's
            # colours a profile says only as 'turns out in black and white', may stay unknown); a
            # table too wide for the turn limit (270 candidates, 80 rows) submits the rows it
            # verified, all of them right
            cols = t["columns"]
            keys = [i for i, c in enumerate(cols) if c != "shirt number"][:2]
            want = {tuple(str(r[i]) for i in keys): str(r[cols.index("shirt number")]) for r in w.execute(t["sql"]).fetchall()}
            call = [m for m in tr["messages"] if m.get("tool_calls")][-1]["tool_calls"][-1]["function"]["arguments"]
            rows = [[x.strip() for x in ln.strip().strip("|").split("|")] for ln in json.loads(call)["answer"].splitlines()
                    if ln.startswith("|")][2:]
            written = {tuple(r[i] for i in keys): r[cols.index("shirt number")] for r in rows if len(r) == len(cols)}
            assert written and all(want.get(k) == v for k, v in written.items()), (t["instance_id"], written, want)
            assert tr["score"]["item_precision"] >= 0.9, (t["instance_id"], tr["score"])
            assert tr["reward"] >= 0.9 or (tr["turns"] >= limit and tr["score"]["item_recall"] >= 0.5), \
                (t["instance_id"], tr["reward"], tr["turns"])


def test_pack_features_reach_the_tasks(demo_rollouts):
    """The demo packs' rules reach the tasks as facts the gold is made of: every league has
    clubs (`each_target` on plays_in), careers mostly at home and prizes mostly in their field
    (`same.share` on plays_for and laureate), product categories only from the year they
    exist (`since` with `dated_by`), first names of a person's gender (`fakers`): each is read by
    several tasks' gold queries, holds in the world those queries read, and the clean oracle
    answers those tasks."""
    import re

    import duckdb

    from worldforge.world.audit import audit_world

    world, out = demo_rollouts
    tasks = [json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()]
    clean = {tr["instance_id"]: tr["reward"] for tr in out["clean"][1]}
    report = audit_world(world)
    rules = {
        "rel_plays_in": lambda: report.rows("degrees", "plays_in")[0]["targets_without"] == 0,
        "rel_plays_for": lambda: 0.55 <= report.rows("locality", "plays_for *")[0]["share"] <= 0.9,
        "rel_laureate": lambda: report.rows("locality", "laureate *")[0]["share"] >= 0.6,
        r'"category"': lambda: all(r["share"] == 1.0 for r in report.rows("given", "product.category by *")),
        r'FROM "(person|researcher)" t': lambda: all(r["share"] == 1.0 for r in report.rows("names", "*.name.first given gender")),
    }
    for pattern, holds in rules.items():
        posed = [t for t in tasks if re.search(pattern, t["sql"])]
        assert len(posed) >= 3, (pattern, len(posed))
        assert holds(), pattern
        assert sum(clean[t["instance_id"]] for t in posed) / len(posed) >= 0.9, pattern
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as w:  # no platform before 1995, as the pack says
        assert w.execute("SELECT count(*) FROM product WHERE category = 'platform' AND launched < DATE '1995-01-01'").fetchone()[0] == 0


def test_editions_are_posed_and_answered(demo_rollouts):
    """Seasons and a prize's editions are entities of their own: tables list them with their
    one champion or laureate ("every season of the X League"), chronologies ask for the
    titles won in a period, multi-hop questions cross them ("the laureate of the 1996 Y
    Medal"); the gold has one winner an edition, and the clean oracle answers them."""
    import duckdb

    world, out = demo_rollouts
    tasks = [json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()]
    editions = [t for t in tasks if t["entity_type"] in ("season", "award_edition")]
    kinds = {(t["kind"], t["entity_type"]) for t in editions}
    assert {("table", "season"), ("multihop", "season")} <= kinds or {("table", "award_edition"), ("multihop", "award_edition")} <= kinds, kinds
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as w:
        for t in editions:
            if t["kind"] == "table" and "champion" in t["columns"] and "season" in t["columns"]:
                rows = w.execute(t["sql"]).fetchall()
                seasons = [r[t["columns"].index("season")] for r in rows]
                assert len(seasons) == len(set(seasons))  # one champion a season
    clean = {tr["instance_id"]: tr["reward"] for tr in out["clean"][1]}
    rewards = [clean[t["instance_id"]] for t in editions]
    assert len(rewards) >= 10 and _mean(rewards) >= 0.9, (len(rewards), _mean(rewards))


def test_a_count_is_never_read_off_a_list_it_did_not_see_whole():
    """A count is written from a list read whole or a count a page states (issue 55): not from a
    page that stops inside the list, nor from an archived snapshot (the list as it was then), nor
    from a 'full list' page that never loaded. Each of those leaves the cell unknown (None)."""
    from types import SimpleNamespace

    from worldforge.rollout.entities import EntityReader
    from worldforge.rollout.memory import PagesRead, ValuesRead
    from worldforge.rollout.reading import read_page
    from worldforge.rollout.sources import ListReader

    url = "https://enc.org/wiki/Gerald_Ponce"
    head = ("# Gerald Ponce\n\n**Gerald Ponce** is a professional football player.\n\n| Player | |\n|---|---|\n"
            "| Height | 193 cm |\n\n## Clubs\n\n")
    whole = read_page(url, head + "- [Real Saquin](https://enc.org/wiki/Real_Saquin) (2005–2011)\n"
                                  "- [FC Norpra](https://enc.org/wiki/FC_Norpra) (2011–2014)\n\nThis page was last edited on May 14, 2025.\n")
    cut = read_page(url, head + "- [Real Saquin](https://enc.org/wiki/Real_Saquin) (2005–2011)\n- [FC Nor")
    assert whole.state == "ok" and not whole.section("Clubs").cut
    assert cut.state == "truncated" and cut.section("Clubs").cut and len(cut.section("Clubs").items) == 1
    hop = {"label": "Clubs", "kind": "link", "reverse": False, "to_one": False}

    def count(page):
        reader = EntityReader(SimpleNamespace(values=ValuesRead(), pages=PagesRead()))
        reader.article = lambda u, name="": page
        return reader.count_of(url, hop, "Gerald Ponce")

    assert count(whole) == 2
    assert count(cut) is None
    old = read_page(url, whole.text)
    old.state = "archived"
    assert count(old) is None
    stated = read_page(url, head + "The full list of 43 clubs is on [a separate page](https://lists.example/clubs/gerald-ponce).\n")
    assert count(stated) == 43
    stated.state = "archived"  # an old snapshot's stated count is the count then
    assert count(stated) is None
    # a full list whose page never loads is lost, not empty
    reader = ListReader("https://lists.example/clubs/gerald-ponce", "Gerald Ponce: Clubs")

    class NoPage:
        def page(self, u, purpose):
            return None

    assert reader.step(NoPage()) == [] and not reader.whole()
    # nor one that came only as a cut copy
    listing = ("# Gerald Ponce: Clubs\n\n| Club | From | To |\n|---|---|---|\n"
               "| [Real Saquin](https://enc.org/wiki/Real_Saquin) | 2005 | 2011 |\n| [FC Nor")

    class CutPage:
        def page(self, u, purpose):
            return read_page(u, listing)

    reader = ListReader("https://lists.example/clubs/gerald-ponce", "Gerald Ponce: Clubs")
    assert len(reader.step(CutPage())) == 1 and not reader.whole()


@pytest.mark.parametrize("text, note", [
    (", sales", "sales"),
    (", sales (Nov 2, 1999 – Oct 8, 2004)", "sales"),
    # a label with its own brackets and several attributes (the league test pack)
    (", transfer fee (thousand EUR) 272, squad player, squad number 37", "transfer fee (thousand EUR) 272, squad player, squad number 37"),
    ("（销售部）", "销售部"),
    ("（号码9）", "号码9"),  # a number in a Chinese note is no date
    ("（转会费（千欧元）379，副队长，球衣号码7）", "转会费（千欧元）379，副队长，球衣号码7"),
    ("（1999年11月2日–2004年）", None),
    ("（2001–2005）", None),
    (" (2001–2005)", None),
])
def test_a_links_note_is_read_whole(text, note):
    """What a list writes between a link and its dates is read as the link's own attributes: a
    label's brackets ('(thousand EUR)', '（千欧元）') stay in it and a Chinese note with a number is
    not taken for a date (the oracle read 'transfer fee' and nothing after it, and no Chinese
    shirt number at all); a bracket of dates is no note."""
    from worldforge.rollout.reading import Span, note_parts, note_value, read_note

    assert read_note(text) == note
    if note and "272" in note:
        parts = note_parts(Span(note=note))
        assert [note_value(p, lab) for p, lab in zip(parts, ["transfer fee (thousand EUR)", "role", "squad number"])] == \
            ["272", "squad player", "37"]


def test_a_links_labelled_attribute_is_found_by_its_label():
    """A link's attributes are written in order, an empty one left out: an entity or a number,
    written after its label, is found by the label wherever it stands, a category by its place;
    a name is never cut by a label it does not start with, nor a category by its label."""
    from worldforge.rollout.reading import Span, note_at, note_parts

    full = note_parts(Span(note="supervisor Isaac Wilkinson, research fellow"))
    short = note_parts(Span(note="squad number 9"))  # (a supervisor none covered: not written, the number moves up)
    assert note_at(full, 0, "supervisor", True) == "Isaac Wilkinson" and note_at(full, 1, "grade", False) == "research fellow"
    assert note_at(short, 1, "squad number", True) == "9"
    assert note_at(note_parts(Span(note="导师宋静燕")), 0, "导师", True) == "宋静燕"
    assert note_at(["role player"], 0, "role", False) == "role player"  # a category keeps its words
    assert note_at(["205", "vice-captain", "5"], 2, "squad number", True) == "5"  # a table's cells: by place
    assert note_at(["205", "", "5"], 1, "role", False) is None and note_at([], 0, "grade", False) is None


def test_a_notes_list_pages_are_read_back_as_written():
    """A research note writes a list's next pages by their page query after its address
    (`reading.paged`); `reading.urls_in`, which the grounding check uses, reads them back whole."""
    from worldforge.rollout.reading import paged, urls_in

    pages = ["https://x.org/list", "https://x.org/list?page=2", "https://x.org/list?page=3", "https://y.org/a"]
    written = ", ".join(paged(pages))
    assert written == "https://x.org/list, ?page=2, ?page=3, https://y.org/a"
    assert sorted(urls_in(written)) == sorted(pages)

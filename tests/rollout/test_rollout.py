"""The agent environment, its perturbations, the oracle policy and the rollout stage."""

from __future__ import annotations

import json
import re

import pytest

from worldforge.errors import RolloutError
from worldforge.rollout import Environment, ToolCall, load_tasks, perturb, run_rollout
from worldforge.rollout.measure import unseen_opens
from worldforge.rollout.oracle import run_oracle
from worldforge.rollout.stage import rollout_dir
from worldforge.world.options import PERTURBATION_TOOLS, RolloutOptions

HEAVY = {k: dict.fromkeys(tools, 0.07) for k, tools in PERTURBATION_TOOLS.items()}


def _oracle(world, opt, seed=3):
    env = Environment.for_world(world, opt, seed=seed)
    eps = [env.episode(t) for t in load_tasks(world)]
    run_oracle(eps, opt)
    return env, eps


def _calls(ep):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for m in ep.messages for c in m.get("tool_calls") or []]


def test_oracle_researches_from_what_it_reads(small_run):
    """Without perturbations: high rewards from research alone; every page it opens was shown by an
    earlier result; it searches first, follows pagination, says what it does before each call, and
    keeps to the calls-per-turn limit."""
    _, world, _ = small_run
    opt = RolloutOptions(perturbations={})
    env, eps = _oracle(world, opt)
    try:
        assert len(eps) == 22
        assert sum(ep.reward for ep in eps) / len(eps) >= 0.95
        for ep in eps:
            assert ep.end == "answer" and not any(s.perturbation or s.error for s in ep.steps)
            first = ep.messages[2]
            assert first["role"] == "assistant" and first["tool_calls"][0]["function"]["name"] == "web_search"
            assistants = [m for m in ep.messages if m["role"] == "assistant"]
            # every action turn, and the research state at each compaction (not an action turn)
            assert all(m["content"].strip() for m in assistants) and len(assistants) == ep.turns + ep.context["compactions"]
            assert all(len(m.get("tool_calls") or []) <= opt.parallel_calls for m in assistants)
            assert assistants[-1]["tool_calls"][-1]["function"]["name"] == "final_answer"
            assert unseen_opens(ep.trajectory("oracle"), env.execute, ep.hide) == []
        assert any("?page=" in a.get("url", "") for ep in eps for n, a in _calls(ep)), "no trajectory followed a list's pagination"
    finally:
        env.close()


def test_oracle_searches_with_a_purpose_and_reads_snippets(small_run):
    """No search names a page the same turn opens; some values are settled from snippets, and the
    snippet reader never gives a value the page itself contradicts; a candidate already rejected
    is never cross-checked."""
    from worldforge.rollout.reading import read_date, read_number, read_page, snippet_value
    from worldforge.rollout.sources import strip_links

    _, world, _ = small_run
    env, eps = _oracle(world, RolloutOptions(perturbations={}))
    try:
        snippet_values = 0
        for ep in eps:
            assert ep.research.get("rejected_cross_checks", 0) == 0
            snippet_values += ep.research.get("snippet_values", 0)
            for m in ep.messages:
                calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m.get("tool_calls") or []]
                opened = {env.engine.page(a["url"])["title"].split(" (")[0].lower() for n, a in calls
                          if n == "web_extractor" and env.engine.page(a["url"])}
                queries = [q for n, a in calls if n == "web_search" for q in [a["query"], *a.get("queries", [])]]
                named = [q for q in queries if any(q.strip('"').lower() in (t, ) or q.lower().startswith(t + " ") for t in opened)]
                assert not named, m["content"]  # a search for a page opened in the same turn could not inform it
        assert snippet_values > 0
        # the snippet reader never disagrees with the page it quotes (every figure label of 300 articles, a
        # fixed sample: the first by address would all be seasons, whose names start with their years)
        checked = 0
        for url, title in env.engine.pages.execute(
                "SELECT url, title FROM pages WHERE kind = 'article' ORDER BY md5(url) LIMIT 300").fetchall():
            page = read_page(url, env.engine.web_extractor(url))
            name = page.name or title.split(" (")[0]
            for label, cell in page.infobox:
                if read_date(strip_links(cell)) is None and read_number(strip_links(cell)) is None:
                    continue  # the oracle reads only dates and figures from snippets
                res, _ = env.engine.search(f"{name} {label}")
                for r in res:
                    v = snippet_value(r["snippet"], label, name) if r["url"] == url else None
                    if v is not None:
                        checked += 1
                        assert _same(strip_links(cell), v), (url, label, cell, v, r["snippet"])
        assert checked > 20
    finally:
        env.close()


def test_oracle_reads_what_an_article_leaves_to_the_profile_it_links(small_run):
    """A value an article leaves out is read on the profile or official site the article links
    (its key facts, its prose, or a result's snippet of it): the oracle says where it looks, opens
    only that linked page for it, and fills cells from it."""
    from worldforge.rollout.reading import own_pages, read_page

    _, world, _ = small_run
    env, eps = _oracle(world, RolloutOptions(perturbations={}))
    try:
        prose = sum(ep.research.get("prose_values", 0) for ep in eps)
        said = opened_linked = 0
        for ep in eps:
            shown: dict[str, str] = {}  # article URL -> the profile it links
            for m in ep.messages:
                if m["role"] == "tool" and m.get("content", "").startswith("# "):
                    for c in [c for mm in ep.messages for c in mm.get("tool_calls") or [] if c["id"] == m.get("tool_call_id")]:
                        url = json.loads(c["function"]["arguments"]).get("url", "")
                        if "/wiki/" in url:
                            links = own_pages(read_page(url, m["content"]))
                            if links:
                                shown[url] = links[0]
                text = m.get("content") or ""
                if m["role"] == "assistant" and re.search(r"has no \"[^\"]+\" entry|leaves \"[^\"]+\" out|No \"[^\"]+\" in the article", text):
                    said += 1
                for name, a in [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m.get("tool_calls") or []]:
                    if name == "web_extractor" and a["url"] in shown.values():
                        opened_linked += 1
        assert prose > 0 and said > 0 and opened_linked > 0, (prose, said, opened_linked)
        assert sum(ep.reward for ep in eps) / len(eps) >= 0.9
    finally:
        env.close()


def test_oracle_reaches_its_target_on_a_web_phrased_as_it_has_never_seen(tmp_path, monkeypatch):
    """The researcher issue: a web rendered with attribute phrasings no shipped bank has, which
    the oracle (importing neither the grammar nor the phrase banks) has never seen, still gets
    its rows filled from the prose of the profiles articles send it to."""
    from tests.conftest import RUN_STAGES, write_spec
    from worldforge.run import run_pipeline
    from worldforge.web import grammar
    from worldforge.web.store import open_pages

    bank = dict(grammar.BANKS["en"])
    bank["attr"] = ("per the registry, {subject} carries a {label} of {value}", "the {label} on file for {subject} reads {value}",
                    "{subject} reports {value} as its {label}", "asked about its {label}, {subject} gives {value}")
    bank["date_attr"] = ("the {label} date on file for {subject} reads {value}", "{subject} lists {value} as its {label} date")
    monkeypatch.setitem(grammar.BANKS, "en", bank)
    spec = write_spec(tmp_path, name="unseen", seed=29, stages=RUN_STAGES)
    world = run_pipeline(spec, tmp_path / "build", tmp_path / "exports").world
    con = open_pages(world / "web")
    try:
        used = con.execute("SELECT count(*) FROM pages WHERE kind = 'profile' AND (markdown LIKE '%per the registry%' "
                           "OR markdown LIKE '%on file for%')").fetchone()[0]
    finally:
        con.close()
    assert used > 20  # the web does read the new way
    env, eps = _oracle(world, RolloutOptions(perturbations={}))
    try:
        assert sum(ep.research.get("prose_values", 0) for ep in eps) > 0
        assert sum(ep.reward for ep in eps) / len(eps) >= 0.9
    finally:
        env.close()


def _same(a: str, b: str) -> bool:
    from worldforge.rollout.compare import same_value

    return same_value(a, b)


def test_oracle_never_sees_the_world_or_the_gold(small_run, tmp_path, monkeypatch):
    """The oracle gets the question and tool results only: with the world store, the gold tables, the
    evidence and the pages' provenance out of reach it writes the same answers."""
    import shutil

    import pyarrow.parquet as pq

    import worldforge.world
    from worldforge.rollout.env import Task
    from worldforge.web.search import SearchEngine
    from worldforge.world import store

    _, world, _ = small_run
    opt = RolloutOptions()
    env, eps = _oracle(world, opt)
    answers = {ep.task.id: (ep.answer, ep.reward) for ep in eps}
    env.close()
    bare = tmp_path / "bare"
    shutil.copytree(world / "web", bare / "web")
    for f in (bare / "web" / "pages").glob("*.facts.parquet"):  # no provenance left to read
        pq.write_table(pq.read_table(f).slice(0, 0), f)
    for where in (store, worldforge.world):  # the module and the package's face other packages import it from
        monkeypatch.setattr(where, "open_world", lambda *a, **k: pytest.fail("the oracle opened the world store"))
    public = ("instance_id", "query", "language", "kind", "question", "evaluation")  # evaluation: for the env to score (no gold)
    tasks = [Task({k: t.record[k] for k in public}, [c for c in t.header], []) for t in load_tasks(world)]
    blind = Environment(SearchEngine(bare / "web"), opt, seed=env.seed, as_of=env.as_of)
    try:
        beps = [blind.episode(t) for t in tasks]
        run_oracle(beps, opt)
        assert {ep.task.id: ep.answer for ep in beps} == {k: a for k, (a, _) in answers.items()}
    finally:
        blind.close()
    assert all(isinstance(r, float) for _, r in answers.values())


def test_oracle_recovers_from_every_perturbation_and_rewards_vary(small_run):
    _, world, _ = small_run
    env, eps = _oracle(world, RolloutOptions(perturbations=HEAVY))
    try:
        kinds = {s.perturbation for ep in eps for s in ep.steps if s.perturbation}
        assert kinds == set(PERTURBATION_TOOLS)
        rewards = [ep.reward for ep in eps]
        assert sum(rewards) / len(rewards) >= 0.8 and min(rewards) < 1.0  # the web misleads it now and then
        for ep in eps:
            calls = _calls(ep)
            # the message each call was made in: a later assistant message (a turn, or a research note
            # written when the context filled) says what became of a page that failed
            at = [i for i, m in enumerate(ep.messages) for _c in m.get("tool_calls") or []]
            for s in ep.steps:  # a page it needed that failed is loaded again, or a later message says what became of it
                if s.tool == "web_extractor" and s.perturbation in ("truncated_page", "stale_page", "search_error", "rate_limit"):
                    url = calls[s.call][1]["url"]
                    second = "/wiki/" not in url and "lists" not in url  # a second source, to compare: optional
                    again = calls[s.call] in calls[s.call + 1:]
                    if again or second:
                        continue
                    name = env.engine.page(url)["title"].split(" (")[0]
                    assert any(name in m["content"] for m in ep.messages[at[s.call] + 1:] if m["role"] == "assistant"), (ep.task.id, url)
            # an older duplicate is opened only to compare, or as the other page of its name when the
            # article never loaded; the turn says which
            for m in ep.messages:
                for c in m.get("tool_calls") or []:
                    url = json.loads(c["function"]["arguments"]).get("url", "")
                    if env._copy_source(url):
                        assert any(w in m["content"] for w in ("compare", "second source", "version too", "instead", "key facts")), m["content"]
            assert unseen_opens(ep.trajectory("oracle"), env.execute, ep.hide) == []
    finally:
        env.close()


def test_perturbations_are_seeded_and_consistent(small_run):
    _, world, _ = small_run
    env = Environment.for_world(world, RolloutOptions(perturbations=HEAVY), seed=9)
    other = Environment.for_world(world, RolloutOptions(perturbations=HEAVY), seed=10)
    try:
        task = load_tasks(world)[0]
        # an article with an archived capture (its entity changed since): the one kind of page a stale copy exists for
        url = next(u for t in load_tasks(world) for u in t.record["evidence"]["pages"] if env.engine.archive(u) is not None)
        q = {"query": task.record["discovery_query"]}
        seen = {}
        for call in range(300):
            name, args = ("web_search", q) if call % 2 else ("web_extractor", {"url": url})
            text, kind = env.execute("ep#0", call, name, args)
            assert (text, kind) == env.execute("ep#0", call, name, args)  # replayable
            seen.setdefault(kind, (call, text))
        assert set(seen) == set(PERTURBATION_TOOLS) | {None}
        assert sum(env.execute("ep#0", c, "web_search", q) != other.execute("ep#0", c, "web_search", q)
                   for c in range(1, 300, 2)) > 10
        clean = env.engine.web_extractor(url)
        cut = seen["truncated_page"][1]
        assert clean.startswith(cut) and perturb.looks_cut(cut) and not perturb.looks_cut(clean)  # no note: the text stops
        stale = seen["stale_page"][1]
        captured, archived = env.engine.archive(url)
        assert stale == perturb.edited(archived, captured) and archived != clean  # no banner: its last edit dates it
        live = next(t for t, k in (env.execute("ep#0", c, "web_extractor", {"url": url}) for c in range(0, 300, 2)) if k is None)
        assert live.startswith(clean.rstrip()) and live.rstrip().rsplit("\n", 1)[-1].startswith("This page was last edited on")
        assert seen["rate_limit"][1].startswith("Error 429")
        assert seen["empty_results"][1].startswith("No results found")
        # the older duplicate: on a site that has original pages, shaped like them, titled like its
        # original; its snippet agrees with its page, which always reads the same and contradicts the original
        block = seen["conflicting_page"][1]
        copy = next(u for u in re.findall(r"^\[\d+\] (https://\S+)$", block, re.M) if env._copy_source(u))
        original, look, shape = env._copy_source(copy)
        assert copy.split("/")[2] == look.split("/")[2] and env.engine.page(copy) is None
        assert (len(copy.split("/")) == len(look.split("/")) or shape == "article") and " | " not in block
        opened = [env.execute("ep#1", c, "web_extractor", {"url": copy}) for c in range(40)]
        pages = {t for t, kind in opened if kind is None}
        assert len(pages) == 1  # every clean fetch of the copy reads the same
        page = pages.pop()
        assert page != env.engine.web_extractor(original) and ("updated" in page or shape in ("news", "revision"))
        item = block.split(copy, 1)[1].split("\n\n", 1)[0]
        snippet_numbers = re.findall(r"\d[\d,]*\d", item.split("Snippet: ", 1)[1].split("\nDate:", 1)[0])
        assert all(n in page for n in snippet_numbers), ([n for n in snippet_numbers if n not in page], item)
        # a fresh environment, which never made that copy, reads the same text at its address
        fresh = Environment.for_world(world, RolloutOptions(perturbations={}), seed=9)
        try:
            assert fresh.execute("ep#1", 0, "web_extractor", {"url": copy}) == (page, None)
        finally:
            fresh.close()
    finally:
        env.close()
        other.close()


def test_copies_take_their_originals_shape_on_sites_with_originals(small_run):
    """A copy is shaped like its source, on a site that holds original pages of that shape: a
    news item syndicated by another outlet a few days later under its headline, an article
    scraped by a list site at the encyclopedia's path (which the oracle does not take for the
    encyclopedia), an old revision on the encyclopedia itself at its permanent link (dated by
    its last edit, years back; revision numbers grow with time), a second listing on a profile
    site. A fresh environment reads each at its address alone, word for word."""
    import datetime as dt
    import random

    from worldforge.rollout.reading import read_page
    from worldforge.rollout.sources import is_encyclopedia

    _, world, _ = small_run
    env = Environment.for_world(world, RolloutOptions(perturbations={}), seed=9)
    fresh = Environment.for_world(world, RolloutOptions(perturbations={}), seed=9)
    try:
        got = env.engine.pages.execute("SELECT title, kind, url FROM pages WHERE kind IN ('article', 'news')").fetchall()
        names = [t for t, k, _ in got if k == "article"]
        heads = [t for t, k, _ in got if k == "news"]
        hosts = {k: {u.split("/")[2] for _, kk, u in got if kk == k} for k in ("article", "news")}
        rng = random.Random(5)
        made: dict[str, set] = {}
        for i, q in enumerate(rng.sample(names, min(150, len(names))) + rng.sample(heads, min(150, len(heads)))):
            results, _ = env.engine.search(q)
            urls = {r["url"] for r in results}
            for r in env._inject_copy(results, f"t|{i}"):
                if r["url"] not in urls:
                    made.setdefault(r["kind"], set()).add(r["url"])
        assert {"news", "article", "profile", "revision"} <= set(made), {k: len(v) for k, v in made.items()}
        syndicated, revisions = 0, []
        for shape, urls in made.items():
            for url in sorted(urls)[:15]:
                original, look, got_shape = env._copy_source(url)
                text = env._copy_text(url)
                assert got_shape == shape and env.engine.page(url) is None and text
                assert fresh._copy_text(url) == text  # its address alone gives its text
                assert url.split("/")[2] == look.split("/")[2]
                # a second listing or an old revision: on its original's own site
                assert shape in ("profile", "revision") or url.split("/")[2] != original.split("/")[2]
                if shape == "revision":
                    assert url.startswith(f"{original}?oldid=") and is_encyclopedia(original) and not is_encyclopedia(url)
                    edited = read_page(url, text).edited
                    assert edited is not None and (env.as_of - edited).days > 180 and text != env.engine.web_extractor(original)
                    assert env._copy_source(url.replace("?oldid=", "?oldid=1")) is None  # another revision number: no page
                    revisions.append((edited, int(url.rsplit("=", 1)[1])))
                if shape == "article":
                    assert url.split("/wiki/")[1] == original.split("/wiki/")[1] and not is_encyclopedia(url)
                    assert url.split("/")[2] not in hosts["article"] and is_encyclopedia(original)
                if shape == "news":
                    assert url.split("/")[2] in hosts["news"]
                    src = env.engine.page(original)
                    if src["kind"] == "news":  # a wire story: its headline, one to five days after it
                        syndicated += 1
                        when = dt.date(*map(int, url.split("/")[3:6]))
                        assert 1 <= (when - src["date"]).days <= 5 or when == env.as_of
                        assert text.startswith(f"# {src['title']}\n")
        assert syndicated > 0
        revisions.sort()
        assert [n for _, n in revisions] == sorted(n for _, n in revisions)  # later revisions, higher numbers
    finally:
        env.close()
        fresh.close()


def test_episode_errors_turn_limit_and_accounting(small_run):
    _, world, _ = small_run
    env = Environment.for_world(world, RolloutOptions(perturbations={}, max_turns=3))
    try:
        task = load_tasks(world)[0]
        ep = env.episode(task)
        out = ep.act("try", [ToolCall("web_search", "{not json"), ToolCall("browse", "{}"), ToolCall("", "<garbage")])
        assert [m["content"][:6] for m in out] == ["Error:"] * 3
        assert [s.error for s in ep.steps] == ["malformed-arguments", "unknown-tool", "malformed-call"]
        out = ep.act("again", [ToolCall("web_extractor", '{"url": "not a url"}'), ToolCall("final_answer", "{}")])
        assert "malformed URL" in out[0]["content"] and "answer" in out[1]["content"] and not ep.done
        assert ep.turns == 2 and ep.tool_calls == 5 and ep.tokens["tool"] > 0 and ep.tokens["assistant"] > 0
        ep.act("search", [ToolCall("web_search", json.dumps({"query": task.record["discovery_query"]}))])
        assert ep.done and ep.end == "turn-limit" and ep.reward == 0.0
        with pytest.raises(RolloutError):
            ep.act("more", [])
        ep2 = env.episode(task, sample=1)
        ep2.act("done", [ToolCall("final_answer", json.dumps({"answer": task.gold_markdown()}))])
        assert ep2.end == "answer" and ep2.reward == 1.0
        ep3 = env.episode(task, sample=2)
        ep3.reply("I could not find it.")
        assert ep3.end == "answer" and ep3.reward == 0.0 and not ep3.score["parsed"]
    finally:
        env.close()


def test_rollout_resumes_to_identical_trajectories(small_run, tmp_path):
    import shutil

    _, world, _ = small_run
    w = tmp_path / "w"
    shutil.copytree(world, w, ignore=shutil.ignore_patterns("rollout"))
    ref = (rollout_dir(world) / "trajectories.jsonl").read_bytes()

    calls = []

    def stop_after_two(done, total):
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_rollout(w, on_progress=stop_after_two)
    assert not (w / "rollout").exists() and len(list((w / ".rollout.partial" / "chunks").glob("*.jsonl"))) == 2
    resumed = []
    run_rollout(w, on_progress=lambda d, n: resumed.append(d))
    assert resumed[0] == 6  # two chunks of three tasks were already done
    assert (rollout_dir(w) / "trajectories.jsonl").read_bytes() == ref
    with pytest.raises(RolloutError, match="--force"):
        run_rollout(w)
    with pytest.raises(RolloutError, match="unknown policy"):
        run_rollout(w, policy="random", force=True)
    rep = run_rollout(w, force=True, seed=77)
    assert (rollout_dir(w) / "trajectories.jsonl").read_bytes() != ref and rep.seed == 77


def test_rejection_sampling_reports_what_it_dropped_and_tokens_count_with_a_tokenizer(small_run, tiny_model, tmp_path):
    import shutil

    from typer.testing import CliRunner

    from worldforge.cli import app

    _, world, _ = small_run
    w = tmp_path / "w"
    shutil.copytree(world, w, ignore=shutil.ignore_patterns("rollout"))
    opt = RolloutOptions(perturbations=HEAVY, samples=2, min_reward=1.0, tokenizer=str(tiny_model))
    rep = run_rollout(w, opt, force=True)
    rj = rep.stats["rejection"]
    kept = [json.loads(x) for x in (rollout_dir(w) / "trajectories.jsonl").read_text().splitlines()]
    assert rj["dropped"] == rep.rejected > 0 and rj["kept"] == len(kept) == rep.trajectories
    assert all(t["reward"] >= 1.0 for t in kept) and sum(rj["dropped_rewards"].values()) == rj["dropped"]
    assert set(rj["tasks_without_a_kept_trajectory"]) == {t.id for t in load_tasks(w)} - {t["instance_id"] for t in kept}
    # tokens in the tokenizer's count (a tiny byte-level BPE: more tokens than 4 characters each), said so in the report
    assert rep.stats["token_counter"] == str(tiny_model)
    from worldforge.rollout.env import load_token_counter
    count = load_token_counter(tiny_model)
    t = kept[0]
    prompts = [m for m in t["messages"] if m["role"] in ("system", "user")] + [s["prefix"][1] for s in t["segments"][1:]]
    assert t["tokens"]["prompt"] == sum(count(m["content"]) for m in prompts) != sum(len(m["content"]) // 4 for m in prompts)
    # a bad tokenizer path: one clear line, exit 1, nothing written
    res = CliRunner().invoke(app, ["rollout", str(w), "--force", "--tokenizer", str(tmp_path / "nope")])
    assert res.exit_code == 1 and "no tokenizer at" in res.output and "Traceback" not in res.output
    assert (rollout_dir(w) / "trajectories.jsonl").read_text().splitlines() == [json.dumps(k, ensure_ascii=False) for k in kept]

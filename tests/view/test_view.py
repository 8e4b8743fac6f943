"""The browser view (`worldforge view`, and /view/ under `worldforge serve`): pages in their sites'
looks with links kept inside the view, the tools' search, provenance, tasks, trajectories
replayed and scored cell by cell, the export; over HTTP, and in a real browser (Debian's
chromium driven by Playwright)."""

from __future__ import annotations

import html as htmllib
import os
import re
import shutil
import socket
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import yaml

from tests.conftest import REPO, SMALL_COUNTS, served

pytest.importorskip("starlette")
pytest.importorskip("markdown_it")

from starlette.testclient import TestClient  # noqa: E402

from worldforge.view.data import ViewData  # noqa: E402
from worldforge.view.markdown import render  # noqa: E402
from worldforge.view.routes import create_view_app  # noqa: E402

HREF = re.compile(r'href="([^"]+)"')


@pytest.fixture(scope="module")
def view(small_run):
    _, world, dataset = small_run
    data = ViewData(world, export=dataset)
    yield data, TestClient(create_view_app(data))
    data.close()


def _get(client, path: str, status: int = 200) -> str:
    r = client.get(path)
    assert r.status_code == status, (path, r.status_code, r.text[:400])
    assert r.headers["content-type"].startswith("text/html")
    return r.text


def _links(text: str) -> list[str]:
    return [htmllib.unescape(h) for h in HREF.findall(text)]


def _page_url(href: str) -> str:
    return parse_qs(urlsplit(href).query)["url"][0]


def test_each_look_renders_with_its_site_and_links_that_stay_in_the_view(view):
    data, client = view
    con = data.engine.pages
    seen = set()
    for kind in ("article", "news", "directory", "profile"):
        url, site, title, md = con.execute("SELECT url, site, title, markdown FROM pages WHERE kind = ? AND markdown LIKE '%](http%' "
                                           "ORDER BY url LIMIT 1", [kind]).fetchone()
        text = _get(client, "/view/page?url=" + quote(url))
        look = {"article": "encyclopedia"}.get(kind, kind)
        seen.add(look)
        assert f'class="site look-{look}' in text and htmllib.escape(site) in text and htmllib.escape(title) in text
        # every link of the page's Markdown is a link of the view to that page
        targets = re.findall(r"\]\((https?://[^)\s]+)\)", md)
        hrefs = [h for h in _links(text) if h.startswith("/view/page?")]
        assert targets and {_page_url(h) for h in hrefs} >= set(targets)
        assert not any(h.startswith("http") for h in _links(text)), "a link leaves the view"
    assert seen == {"encyclopedia", "news", "directory", "profile"}
    # an earlier capture, and a duplicate an episode met, have looks of their own
    arch = con.execute("SELECT url FROM archives LIMIT 1").fetchone()
    if arch:
        assert 'look-archive' in _get(client, "/view/page?url=" + quote(arch[0]) + "&archive=1")


def test_page_markdown_cannot_inject_html_or_scripts():
    out, blocks = render("# T\n\n<script>alert(1)</script> and [x](javascript:alert(1)) and <b onclick=1>b</b>.\n\n| a |\n|---|\n| <img src=x> |",
                         lambda u: "/view/page?url=" + quote(u))
    assert "<script" not in out and "<img" not in out and "<b onclick" not in out and "href=\"javascript:" not in out
    assert "&lt;script&gt;" in out and blocks >= 3


def test_search_gives_the_tools_ranking_and_pages(view):
    data, client = view
    title = data.engine.pages.execute("SELECT title FROM pages WHERE kind = 'article' ORDER BY url LIMIT 1").fetchone()[0]
    want, total = data.engine.search(title, 0, 10)
    text = _get(client, "/view/search?q=" + quote(title))
    got = [_page_url(h) for h in re.findall(r'<a class="title" href="([^"]+)"', htmllib.unescape(text))]
    assert got == [r["url"] for r in want] and f"About {total:,} results" in text
    second = _get(client, "/view/search?q=" + quote(title) + "&offset=10")
    assert [_page_url(h) for h in re.findall(r'<a class="title" href="([^"]+)"', htmllib.unescape(second))] == \
        [r["url"] for r in data.engine.search(title, 10, 10)[0]]


def test_provenance_marks_the_sentences_and_cells_that_state_each_fact(view):
    data, client = view
    url = data.engine.pages.execute("SELECT url FROM pages WHERE kind = 'article' ORDER BY length(markdown) DESC LIMIT 1").fetchone()[0]
    ids = data.page_fact_ids(url)
    facts = data.facts(ids)
    assert ids and len(facts) == len(ids)  # every page_facts row is a fact of the world
    text = _get(client, "/view/page?url=" + quote(url) + "&facts=1")
    assert 'class="prov"' in text and f"{len(ids)} facts on this page" in text
    for fid in ids:
        assert f'href="/view/fact?id={quote(fid, safe="")}"' in text or f"id={htmllib.escape(quote(fid))}" in text or quote(fid, safe="") in text
    marked = re.findall(r'<span class="b f" data-f="([\d ]+)" title="[^"]*">(.*?)</span>', text)
    assert marked
    placed = {int(i) for ids_, _ in marked for i in ids_.split()}
    assert len(placed) >= 0.8 * len(facts), (len(placed), len(facts))
    # a marked number is in its block as the page writes it
    for ids_, inner in marked:
        plain = re.sub(r"<[^>]+>", "", htmllib.unescape(inner))
        for i in map(int, ids_.split()):
            f = facts[i]
            if f.value_type == "int":
                assert f"{int(f.value):,}" in plain or f.value in plain
            elif f.value_type == "string":
                assert f.value.lower() in plain.lower()
    # without the toggle: no marks; the fact's own page lists the page
    assert 'class="b f"' not in _get(client, "/view/page?url=" + quote(url))
    fact_page = _get(client, "/view/fact?id=" + quote(ids[0]))
    assert f'href="/view/page?url={quote(url, safe="")}&amp;facts=1"' in fact_page.replace("%3A", ":").replace("%2F", "/") \
        or quote(url, safe="") in fact_page
    urls, n = data.fact_pages(ids[0])
    assert url in urls and f"Stated on {n:,} page" in fact_page


def test_tasks_filter_and_show_gold_with_evidence_per_cell(view):
    data, client = view
    recs = [t.record for t in data.tasks.values()]
    want = [r["instance_id"] for r in recs if r["kind"] == "table" and r["split"] == "train"]
    text = _get(client, "/view/tasks?kind=table&split=train")
    assert f"{len(want):,} of {len(recs):,} tasks" in text
    shown = re.findall(r'<a href="/view/task/([^"]+)">', text)
    assert shown == [quote(i) for i in want][:50]
    assert "0 of" in _get(client, "/view/tasks?q=zzzz-no-such-words")
    from worldforge.view.routes import level

    for lv in ("easy", "medium", "hard"):
        want = [r["instance_id"] for r in recs if level(r["difficulty"]) == lv]
        assert f"{len(want):,} of {len(recs):,} tasks" in _get(client, f"/view/tasks?difficulty={lv}")
    t = next(t for t in data.tasks.values() if t.record["kind"] == "table" and t.record["evidence"].get("cells"))
    page = _get(client, f"/view/task/{quote(t.id)}")
    assert htmllib.escape(t.query) in page
    gold = re.search(r"<table class='grid gold' id=gold>(.*?)</table>", page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", gold, re.S)[1:]
    assert len(rows) == len(t.rows)
    ev = t.record["evidence"]
    for r, (html_row, gold_row) in enumerate(zip(rows, t.rows)):
        cells = re.findall(r"<td>(.*?)</td>", html_row, re.S)
        for c, (cell, value) in enumerate(zip(cells, gold_row)):
            assert cell.startswith(htmllib.escape(value))
            ref = ev["cells"][r][c]
            idx = ref if isinstance(ref, list) else [ref]
            linked = [_page_url(htmllib.unescape(h)) for h in HREF.findall(cell)]
            assert linked == [ev["pages"][i] for i in idx]


def test_a_trajectory_replays_with_calls_context_perturbations_and_cell_scores(view):
    data, client = view
    entry = max(data.trajectory_index.values(), key=lambda e: (sum(1 for _ in ()), e.turns or 0))
    tr = data.trajectory(entry.instance_id, entry.sample)
    text = _get(client, f"/view/trajectory/{quote(entry.instance_id)}?sample={entry.sample}")
    calls = re.findall(r'<div class="call( perturbed)?" data-call="(\d+)">', text)
    assert [int(c) for _, c in calls] == list(range(tr["tool_calls"]))
    perturbed = {s["call"] for s in tr["steps"] if s["perturbation"]}
    assert {int(c) for p, c in calls if p} == perturbed
    assert text.count('class="ctx"') == sum(1 for m in tr["messages"][2:] if m["role"] != "tool")
    assert f"segment {len(tr['segments'])} of {len(tr['segments'])}" in text
    # a tool result, as the agent got it
    call = next(i for i, s in enumerate(tr["steps"]) if s["tool"] == "web_extractor")
    frag = _get(client, f"/view/result/{quote(entry.instance_id)}?sample={entry.sample}&call={call}&fragment=1")
    assert 'class="page-in"' in frag
    _get(client, f"/view/result/{quote(entry.instance_id)}?sample={entry.sample}&call=99999", 404)
    # the answer cell by cell: marks that agree with the scorer
    scored = re.search(r'<table class="grid scored" id=scoredtable>(.*?)</table>', text, re.S).group(1)
    marks = re.findall(r'<td class="c-(\w+)"', scored)
    assert marks and (tr["reward"] < 1.0 or set(marks) == {"right"})


def test_cell_marks_name_each_kind_of_damage(view):
    from worldforge.tasks.scoring import Evaluation, cell_marks

    data, _ = view
    t = next(t for t in data.tasks.values() if t.record["kind"] == "table" and len(t.rows) >= 3 and len(t.header) >= 3)
    ev = Evaluation.model_validate(t.record["evaluation"])
    keys = {c for c in ev.unique_columns}
    vcol = next(i for i, h in enumerate(t.header) if h not in keys)

    def table(rows):
        return "\n".join(["| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)] + ["| " + " | ".join(r) + " |" for r in rows])

    header, rows = cell_marks(ev, t.header, t.rows, table(t.rows))
    assert all(m == "right" for r in rows for _, m, _ in r.cells) and len(rows) == len(t.rows)
    bad = [list(r) for r in t.rows]
    bad[0][vcol] = "zzz-not-it"
    extra = list(t.rows[0])
    extra[[i for i, h in enumerate(t.header) if h in keys][0]] = "No Such Entity Anywhere"
    header, rows = cell_marks(ev, t.header, t.rows, table(bad[:-1] + [extra]))
    status = [r.status for r in rows]
    assert status.count("extra") == 1 and status.count("missing") == 1
    assert rows[0].cells[[h for h in header].index(t.header[vcol])][1] == "wrong"
    assert cell_marks(ev, t.header, t.rows, "no table here") is None


def test_export_page_shows_card_splits_reports_and_plots(view):
    data, client = view
    text = _get(client, "/view/export")
    man = data.manifest()
    assert 'id=splits' in text and all(s in text for s in man["splits"])
    assert 'id=card' in text and text.count("<svg") >= 3  # rows beside WideSearch, columns, rewards
    assert "WideSearch" in text and "Render report" in text
    assert "thresholds declared by the packs" in _get(client, "/view/audit")


def test_bad_requests_get_a_page_that_says_what_is_wrong(view):
    _, client = view
    assert "no page at https://nowhere.example/x" in _get(client, "/view/page?url=https://nowhere.example/x", 404)
    assert "give a page&#x27;s address" in _get(client, "/view/page?url=ftp://x", 400)
    assert "whole number" in _get(client, "/view/tasks?offset=abc", 400)
    assert "no task" in _get(client, "/view/task/none-such", 404)
    assert "no trajectory" in _get(client, "/view/trajectory/none-such", 404)
    assert "no fact" in _get(client, "/view/fact?id=nothing/here", 404)
    assert "no site" in _get(client, "/view/site/nowhere.example", 404)
    # a query the tool refuses gets the tool's own message
    assert "has no words to search for" in _get(client, "/view/search?q=" + quote('"(*&^%$#@!'), 400)
    assert 'class="err"' not in _get(client, "/view/search?q=" + quote("<script>x</script> a"))
    r = client.get("/view/static/other.js")
    assert r.status_code == 404
    assert client.get("/view/static/view.css").headers["content-type"].startswith("text/css")


def test_serve_mounts_the_view_beside_the_environment(small_run):
    from worldforge.serve.app import create_app
    from worldforge.serve.service import EnvironmentService

    _, world, dataset = small_run
    service = EnvironmentService(world)
    data = ViewData(world, env=service.base, export=dataset)
    try:
        client = TestClient(create_app(service, view=data, mcp=False))
        assert client.get("/health").json()["status"] == "ok"
        assert "Browse the web" in _get(client, "/view/")
        assert client.get("/view/search?q=a").status_code == 200
    finally:
        data.close()
        service.close()


def test_cli_view_refuses_what_it_cannot_show(tmp_path, small_run):
    from typer.testing import CliRunner

    from worldforge.cli import app

    _, world, _ = small_run
    res = CliRunner().invoke(app, ["view", str(tmp_path / "none")])
    assert res.exit_code != 0 and "no world at" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["view", str(world), "--export", str(tmp_path)])
    assert res.exit_code != 0 and "holds no export" in res.output
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        res = CliRunner().invoke(app, ["view", str(world), "--port", str(s.getsockname()[1])])
        assert res.exit_code == 1 and "cannot listen" in res.output


# ---------------------------------------------------------------------------- in a real browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _browser_or_skip():
    pytest.importorskip("playwright")
    if CHROMIUM is None:
        if os.environ.get("WORLDFORGE_REQUIRE_BROWSER"):
            pytest.fail("no chromium: install Debian's (apt-get install chromium), as .ci/run does")
        pytest.skip("no chromium on this machine (apt-get install chromium); .ci/run installs it")


@pytest.fixture(scope="module")
def zh_view(tmp_path_factory):
    """A small Chinese world, planned and rendered (no tasks): its pages in the view."""
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    tmp = tmp_path_factory.mktemp("zhview")
    spec = yaml.safe_load((REPO / "worlds" / "demo_zh.yaml").read_text())
    spec.update(name="view_zh", counts=dict(SMALL_COUNTS), seed=11)
    (tmp / "view_zh.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True))
    info = plan_world(load_world(tmp / "view_zh.yaml"), tmp / "build")
    render_world(info.path)
    data = ViewData(info.path)
    yield data
    data.close()


@pytest.fixture(scope="module")
def browser():
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _shot(page, name: str) -> None:
    """Keep a screenshot when WORLDFORGE_SCREENSHOTS names a folder (README's pictures come from here)."""
    folder = os.environ.get("WORLDFORGE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def test_in_a_browser_a_user_searches_reads_follows_links_and_sees_provenance(view, browser):
    data, _ = view
    with served(create_view_app(data)) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(base + "/view/")
        assert "Browse the web" in page.inner_text("main")
        _shot(page, "home")
        page.click("nav.wf >> text=Web")
        assert page.locator("table.grid tr").count() > 5
        title = data.engine.pages.execute("SELECT title FROM pages WHERE kind = 'article' ORDER BY url LIMIT 1").fetchone()[0]
        page.fill("form.bigsearch input[name=q]", title)
        page.press("form.bigsearch input[name=q]", "Enter")
        page.wait_for_selector("ol.hits li.hit")
        first = data.engine.search(title, 0, 10)[0][0]
        assert page.locator("li.hit a.title").first.inner_text() == first["title"]
        _shot(page, "search")
        page.locator("li.hit a.title").first.click()
        page.wait_for_selector("article.page")
        assert page.locator(".addr input").input_value() == first["url"]
        assert page.locator(".site-name").inner_text().strip()
        # follow a link inside the page: the view opens that page
        link = page.locator("article.page a[data-url]").first
        target = link.get_attribute("data-url")
        link.click()
        page.wait_for_selector("article.page")
        assert page.locator(".addr input").input_value() == target
        # provenance on: marked passages, and hovering one lights its facts
        page.click("#prov-toggle")
        page.wait_for_selector("aside.prov")
        marked = page.locator("article.page .b.f")
        assert marked.count() > 0
        marked.first.hover()
        assert page.locator("aside.prov li.hl").count() >= 1
        _shot(page, "page-provenance")
        news = data.engine.pages.execute("SELECT url FROM pages WHERE kind = 'news' ORDER BY url LIMIT 1").fetchone()[0]
        page.goto(base + "/view/page?url=" + quote(news))
        assert page.locator(".site.look-news").count() == 1
        _shot(page, "page-news")


def test_in_a_browser_a_user_filters_tasks_and_replays_a_trajectory(view, browser):
    data, _ = view
    with served(create_view_app(data)) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(base + "/view/tasks")
        page.select_option("select[name=kind]", "table")
        page.select_option("select[name=split]", "train")
        page.click("form.filters button")
        page.wait_for_selector("#tasks")
        want = sum(1 for t in data.tasks.values() if t.record["kind"] == "table" and t.record["split"] == "train")
        assert page.inner_text("#count").startswith(f"{want:,} of")
        _shot(page, "tasks")
        iid = next(i for (i, _), e in data.trajectory_index.items() if data.tasks[i].record["kind"] == "table")
        page.goto(base + f"/view/task/{quote(iid)}")
        assert page.locator("#gold tr").count() == len(data.tasks[iid].rows) + 1
        assert page.locator("#gold sup.refs a.ev").count() > 0
        _shot(page, "task")
        page.locator("a", has_text="sample 0").first.click()
        page.wait_for_selector(".replay")
        for _ in range(3):
            page.click("#next")
        assert page.inner_text("#pos").startswith("step 3 of")
        assert page.locator("section.turn.current").count() == 1
        assert page.locator("section.turn.later").first.is_hidden()
        # open the first result of a step that has one: it loads what the agent got
        while page.locator("section.turn.current details.res").count() == 0:
            page.click("#next")
        box = page.locator("section.turn.current details.res").first
        box.locator("summary").click()
        page.wait_for_function("document.querySelector('section.turn.current details.res .res-body').getAttribute('data-loaded') && "
                               "!document.querySelector('section.turn.current details.res .res-body').textContent.startsWith('loading')")
        assert len(box.locator(".res-body").inner_text()) > 20
        _shot(page, "trajectory")
        page.click("#all")
        assert page.locator("section.turn.later").count() == 0
        page.locator("#scoredtable").scroll_into_view_if_needed()
        assert page.locator("#scoredtable td.c-right").count() > 0
        page.goto(base + "/view/export")
        assert page.locator("svg.chart").count() >= 3 and page.locator("#card").is_visible()
        _shot(page, "export")


def test_in_a_browser_chinese_pages_render(zh_view, browser):
    with served(create_view_app(zh_view)) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        url = zh_view.engine.pages.execute("SELECT url FROM pages WHERE kind = 'article' ORDER BY length(markdown) DESC LIMIT 1").fetchone()[0]
        page.goto(base + "/view/page?url=" + quote(url) + "&facts=1")
        assert page.locator("html").get_attribute("lang") == "zh"
        text = page.inner_text("article.page")
        assert re.search(r"[\u4e00-\u9fff]{4}", text)
        md = zh_view.engine.page(url)["markdown"]
        first_line = md.split("\n", 1)[0].lstrip("# ").strip()
        assert first_line in text  # the title as written, characters intact
        assert page.locator("article.page .b.f").count() > 0  # provenance reads Chinese dates and numbers
        _shot(page, "page-zh")
        page.goto(base + "/view/search?q=" + quote(first_line))
        assert page.locator("li.hit").count() > 0

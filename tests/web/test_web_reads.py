"""The web reads like the web: varied sentences, period-correct pages and archives, no
template defects, credible conflicting copies (issue 14). Measured on the demo world."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import pytest

from tests.conftest import cut_lists
from worldforge.rollout import perturb
from worldforge.web import grammar
from worldforge.web.grammar import prose_sentences
from worldforge.web.store import open_pages
from worldforge.world.store import open_world


@pytest.fixture(scope="module")
def web(demo_web):
    path, report = demo_web
    con = open_pages(path / "web")
    pages = con.execute("SELECT url, kind, date, subject, markdown FROM pages ORDER BY url").fetchall()
    facts = con.execute("SELECT url, fact_id FROM page_facts").fetchall()
    archives = con.execute("SELECT url, captured, markdown FROM archives ORDER BY url").fetchall()
    con.close()
    info = open_world(path)
    wcon = info.connect()
    world_facts = {r[0]: r[1:] for r in wcon.execute(
        "SELECT fact_id, value, value_type, valid_from, valid_to FROM facts "
            "UNION ALL SELECT fact_id, value, value_type, valid_from, valid_to FROM past_facts").fetchall()}
    wcon.close()
    return {"path": path, "report": report, "pages": pages, "facts": facts, "archives": archives, "world_facts": world_facts}


def test_variety_targets(web):
    v = web["report"].variety
    assert v["pages_measured"] == v["pages"] == web["report"].pages
    assert v["skeletons"] >= 3000, v["skeletons"]
    assert v["top_skeleton_share"] <= 0.02, v["top_skeleton"]
    assert v["share_on_10_plus_pages"] < 0.40
    # Issue 37's reader: clauses (split at , ; and/while/then) with names, numbers and dates
    # masked; at most 60 % from frames used on 10 or more pages (95 % before), no phrase tell on
    # more than 5 % of pages, and none of the slips it found.
    assert v["clauses_on_10_plus_pages"] <= 0.60, v["clauses_on_10_plus_pages"]
    assert max(v["tells"].values()) <= 0.05, v["tells"]
    assert not any(v["slips"].values()), v["slips"]
    assert max(v["prose_slips"].values(), default=0.0) <= 0.02, v["prose_slips"]  # issue 59: 'has a league of', a figure first
    assert v["relative_years"]["wrong"] == 0, v["relative_years"]  # 'three years later' counts from the year shown
    # Lengths (the old web: articles 113 words, news 31). Issue 14 asked for 320+ word articles and
    # got them partly with padding: a paragraph of the neighbours' infobox facts, an overview
    # repeating the lead, a section's prose repeating the history. Issue 37 took those out (and
    # the neighbours' background and the twice-told event from news): what is left is the page's
    # own facts, each told once: about 180 words an article, 80 a news item.
    assert v["kinds"]["article"]["mean_words"] >= 170
    assert v["kinds"]["news"]["mean_words"] >= 75
    # where facts live (issue 35): entities without an article, facts only other sites state
    src = v["sources"]
    assert 0.2 < src["without_article"] / src["entities"] < 0.6
    assert src["attributes"]["on_encyclopedia"] <= 0.5 and src["attributes"]["only_off"] >= 0.25
    assert src["links"]["only_off"] >= 0.25 and src["links"]["only_off_in_directory"] > 0.2


def test_a_profile_lists_each_fact_once(web):
    """An award edition's profile listed its prize and laureate twice (a lookup restating a
    link): 34 % of demo profiles had a label and value twice (issue 59)."""
    twice = []
    for u, kind, _d, _s, md in web["pages"]:
        if kind == "profile":
            pairs = [(a.casefold(), b) for a, b in re.findall(r"^- \*\*([^*:]+):?\*\*:? ?(.*)$", md, re.M)]
            if len(pairs) != len(set(pairs)):
                twice.append(u)
    assert not twice, twice[:3]


def test_back_reference_possessive_is_its(web):
    """'it's ownership' was a defect: a possessive back-reference to a thing is 'its'."""
    bad = [u for u, _k, _d, _s, md in web["pages"] if re.search(r"\bit's (?!been|a |an |the )", md, re.IGNORECASE)]
    assert not bad, bad[:3]
    doubled = [u for u, _k, _d, _s, md in web["pages"] if re.search(r"\b[Tt]he (it|the)\b", md)]  # "The {subject}" with "it"
    assert not doubled, doubled[:3]


def test_no_count_names_its_unit_twice_and_no_infobox_labels_merge(web):
    """'the employees of X is 651 employees' and 'our employees is 16 employees' were slips, and
    so was one infobox row for two labels whose values happened to be equal
    ('| h-index and publications | 0 |')."""
    doubled = [u for u, _k, _d, _s, md in web["pages"]
               if re.search(r"\b(employees|members|seats|runways|tracks|teams)\b[^.|]{0,40} (is|of) [\d,]+ \1\b", md)]
    assert not doubled, doubled[:3]
    merged = [u for u, _k, _d, _s, md in web["pages"] if re.search(r"^\| [A-Z][a-z-]+(?: [a-z-]+)* and [a-z-]+ \| ", md, re.M)]
    assert not merged, merged[:3]


def test_skeleton_measure_folds_names_numbers_and_dates():
    pat = re.compile("Ann Kel")
    a = grammar.skeleton("Ann Kel joined [Marcas Labs](https://x.org/wiki/M) on 4 May 2001 with 1,200 staff.", pat)
    b = grammar.skeleton("Bo Li joined [Vel Group](https://x.org/wiki/V) on May 9, 1999 with 31 staff.", re.compile("Bo Li"))
    assert a == b == "<e> joined <e> on <d> with <n> staff."
    assert grammar.prose_sentences("# T\n\n| a | b |\n\nOne. Two “Three,” she said.\n\n- item") == ["One.", "Two “Three,” she said."]


def test_no_page_states_a_fact_from_after_its_date(web):
    """News: every fact on a dated page held (or had happened) by the page's date."""
    dated = {u: d for u, k, d, _s, _m in web["pages"] if d is not None}
    bad = []
    for url, fid in web["facts"]:
        d = dated.get(url)
        if d is None:
            continue
        value, vt, start, _end = web["world_facts"][fid]
        if (start is not None and start > d) or (vt == "date" and dt.date.fromisoformat(value) > d):
            bad.append((url, fid))
    assert not bad, bad[:5]


def test_archives_are_earlier_states_without_later_years(web):
    archives = web["archives"]
    live = {u: m for u, _k, _d, _s, m in web["pages"]}
    assert len(archives) > 500
    later = 0
    for url, captured, md in archives:
        assert url in live and md != live[url]
        text = re.sub(r"\]\([^)]*\)", "]", md)  # link targets hold no dates
        years = [int(y) for y in re.findall(r"(?<![\w/-])(1[89]\d\d|20\d\d)(?![\w/-])", text)]
        later += any(y > captured.year for y in years)
    assert later == 0


def test_stale_copy_is_the_archive_dated_by_its_last_edit(web):
    """A stale article is the archived capture with no banner: its last line dates it, as every
    live article's does (weeks before the world's date, where a capture is a year or more)."""
    from worldforge.rollout.reading import read_page

    url, captured, md = web["archives"][0]
    out = perturb.edited(md, captured)
    assert out.startswith(md.rstrip()) and out.rstrip().endswith(f"last edited on {captured.strftime('%B %-d, %Y')}.")
    assert "Archived" not in out and read_page(url, out).edited == captured
    as_of = max(c for _u, c, _m in web["archives"]) + dt.timedelta(days=365)
    assert all((as_of - perturb.last_edit(1, u, as_of)).days < 90 for u, _c, _m in web["archives"][:50])


def test_a_cut_page_is_noticed_from_its_text_alone(web):
    """No complete page looks cut; every cut page does, and it is the page's own beginning."""
    cut_pages = 0
    for url, _kind, _d, _s, md in web["pages"]:
        assert not perturb.looks_cut(md), url
        cut = perturb.truncate(md, url)
        if cut is None:
            continue
        cut_pages += 1
        assert md.startswith(cut) and perturb.looks_cut(cut), (url, cut[-80:])
        assert 0.1 * len(md) <= len(cut) <= 0.8 * len(md) or len(md) < 600, url
        assert "partially loaded" not in cut and not cut.rstrip().endswith("]")
    assert cut_pages >= 0.95 * len(web["pages"])


def test_a_careless_copy_slips_plausibly():
    text = ("The Lewis Medal was established on December 24, 1902; the prize money stands at 35,762 USD "
            "and 651 people attended. See [Ann](https://enc.org/wiki/Ann_2019) (2019).")
    outs = {perturb.alter_copy(text, f"k{i}") for i in range(60)}
    assert text not in outs and len(outs) > 10
    for out in outs:
        assert "https://enc.org/wiki/Ann_2019" in out and "(2019)" in out  # links and bare years are kept
        years = [int(y) for y in re.findall(r"December 24, (\d{4})", out)]
        assert len(years) == 1 and abs(years[0] - 1902) <= 1
        money = float(re.search(r"([\d,]+) USD", out).group(1).replace(",", ""))
        assert 0.9 * 35762 <= money <= 1.1 * 35762  # rounded or a few percent off, never absurd
    assert any("36,000 USD" in o for o in outs) and any("December 24, 1903" in o or "December 24, 1901" in o for o in outs)
    # one figure is altered the same way wherever it is written (a snippet agrees with its page)
    twice = perturb.alter_copy("651 seats; again 651 seats", "k")
    assert twice.split(";")[0].split()[0] == twice.split()[-2]


def _infobox(md: str) -> list[tuple[str, str]]:
    block = md.split("|---|---|", 1)
    if len(block) < 2:
        return []
    rows = []
    for line in block[1].lstrip("\n").split("\n"):
        if not line.startswith("| "):
            break
        label, cell = line[2:-2].split(" | ", 1)
        rows.append((label, cell))
    return rows


def test_defects_are_gone(web):
    problems: Counter = Counter()
    examples: dict[str, str] = {}

    def flag(kind: str, url: str) -> None:
        problems[kind] += 1
        examples.setdefault(kind, url)

    urls = {u for u, *_ in web["pages"]}
    for url, kind, _d, _s, md in web["pages"]:
        if kind == "article":
            rows = _infobox(md)
            labels = [lab.lower() for lab, _ in rows]
            if len(labels) != len(set(labels)):
                flag("duplicated infobox label", url)
            # (two labels whose values happen to be equal are two rows, as in any infobox: merging them
            # into one row, "| h-index and publications | 0 |", was a slip issue 37 removed)
            for line in md.split("\n"):  # a timeline bullet states its date once
                m = re.match(r"- \*\*(.+?)\*\* – (.*)", line)
                if m and m.group(1) in m.group(2):
                    flag("timeline bullet restates its date", url)
            for m in re.finditer(r"(\d+) of ([\d,]+)", md):
                if "](" not in md[m.end(): m.end() + 200]:
                    flag("'N of M' without a link to the rest", url)
            for target in re.findall(r"\]\((https://[^)]+)\)", md):
                if "/wiki/" in target and target.count("/") > 4 and target.split("?")[0] not in urls:
                    flag("link to a missing list page", url)
        for s in prose_sentences(md):
            if re.search(r"\b\d{4}-\d{2}-\d{2}\b", s):
                flag("ISO date in prose", url)
            if re.search(r"\b[Aa] (?!uni|eu|one|use|usu)[aeiouAEIOU]\w", s):
                flag("'a' before a vowel", url)
            if re.search(r"employs [\d,.]+ employees", s):
                flag("unit echoed", url)
            if re.search(r"grew up in the region|of the fictional world", s):
                flag("filler", url)
        if re.search(r"Doctorate[^\n.]*since", md):
            flag("one-off event shown as a tenure", url)
    assert not problems, (dict(problems), examples)


def test_overflow_lists_hold_every_member(web):
    """An article that shows only some of its incoming links links to a list with all of them."""
    pages = {u: m for u, _k, _d, _s, m in web["pages"]}
    checked = 0
    for _url, kind, _d, _s, md in web["pages"]:
        if kind != "article":
            continue
        for _shown, total, target in cut_lists(md):
            listed, page = 0, target
            while page:
                body = pages[page]
                listed += len(re.findall(r"^\| \[", body, re.M))
                nxt = re.search(r"\[Next page →\]\(([^)]+)\)", body)
                page = nxt.group(1) if nxt else None
            assert listed >= total, (target, listed, total)
            checked += 1
    assert checked > 0


def test_sites_differ_in_date_style():
    styles = {grammar.site_style(f"Site {i}", "article")["date"] for i in range(40)}
    assert len(styles) == len(grammar.DATE_STYLES)
    d = dt.date(2019, 4, 14)
    assert {grammar.format_date(d, s) for s in grammar.DATE_STYLES} == {
        "April 14, 2019", "14 April 2019", "Apr 14, 2019", "14 Apr 2019"}
    assert grammar.format_number("1234567", "int", rounded=True) == "1.23 million"
    assert grammar.format_number("1234567", "int") == "1,234,567"
    assert grammar.fix_articles("a appliance, a university, a hour, a energy firm") == "an appliance, a university, an hour, an energy firm"



def _articles_by_definition(text: str) -> str:
    """`fix_articles` as first written: one scan for an 'a'/'A' that starts a word, then a space,
    then a vowel or an h; 'an' when the whole next word sounds like a vowel."""
    out, last = [], 0
    for m in re.finditer(r"[Aa] (?<!\w[Aa] )(?=[AEIOUaeiouHh])", text):
        i = m.start()
        word = re.match(r"[A-Za-z]*", text[i + 2:]).group().lower()
        if (word[0] in "aeiou" and not word.startswith(("uni", "eu", "one", "use", "usu", "uk", "ure"))) \
                or word.startswith(("hour", "honest", "honour", "heir")):
            out += (text[last:i + 1], "n")
            last = i + 1
    return "".join(out + [text[last:]])


def test_fix_articles_matches_its_definition_on_random_text():
    """The article fix scans a page with two literal-led patterns (twice as fast as one with a
    character class): on random text made of the characters that matter it changes exactly
    what the definition changes."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["a", "A", "an", "apple", "Hour", "hat", "uni", "umbrella", "Euro", "é", "_a", "1a", "data",
                             "Maria", "one", "oak", "[a", "(A"])
    text = st.lists(st.one_of(words, st.text(alphabet=" aAeEhHiIoOuUy_1é.\n[]", max_size=6)), max_size=30).map("".join)

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.lists(st.one_of(words, text), max_size=12).map(" ".join))
    def check(s):
        assert grammar.fix_articles(s) == _articles_by_definition(s)

    check()

def test_llm_plans_and_row_checks_hold_template_pages_and_catch_swapped_rows(web):
    """The vLLM writer gets the template's page plan (sections, era); its validator checks
    directory rows and infobox rows one by one: template pages pass, a swapped row fails."""
    from worldforge.web.llm import fact_sheet, plan_sections, table_problems
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.web.template import TemplateWriter
    from worldforge.world.options import RenderOptions

    view = WorldView(open_world(web["path"]), RenderOptions())
    writer = TemplateWriter(view)
    seen = Counter()
    try:
        for page in plan_pages(view):
            if seen[page.kind] >= 60:
                continue
            seen[page.kind] += 1
            md = writer.write(page)
            assert table_problems(view, page, md) == [], page.url
            sheet = fact_sheet(view, page)
            assert "Section:" in sheet and (page.date is None or "Era:" in sheet)
            if page.kind == "directory" and len(page.layout["rows"]) >= 2 and page.layout["columns"]:
                lines = md.split("\n")
                rows = [i for i, ln in enumerate(lines) if ln.startswith("| [")]
                a, b = rows[0], rows[1]
                cells_a, cells_b = lines[a].split(" | "), lines[b].split(" | ")
                if cells_a[1:] != cells_b[1:]:
                    lines[a] = " | ".join(cells_a[:1] + cells_b[1:])
                    lines[b] = " | ".join(cells_b[:1] + cells_a[1:])
                    assert table_problems(view, page, "\n".join(lines)), page.url
                    seen["swapped"] += 1
            if page.kind == "article":
                planned = {f.fact_id for _title, fs in plan_sections(view, page) for f in fs}
                assert planned == {f.fact_id for f in page.facts}
    finally:
        view.close()
    assert seen["swapped"] > 5


def test_column_slugs_and_wiki_paths_match_their_definitions():
    """Entity URLs are built a column at a time (`pages.slugs`, `pages.wiki_paths`): on random
    names (ASCII punctuation, accents, CJK, nothing at all) each is exactly what `slug` and
    `urllib.parse.quote` give one name at a time, but for the non-ASCII characters an IRI keeps."""
    import unicodedata
    from urllib.parse import quote

    import polars as pl
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from worldforge.web.pages import slug, slugs, wiki_paths

    names = st.lists(st.one_of(st.text(alphabet=" abzAZ09-_.,~'&()/%?#+é–Müller王伟\t\u3000\u200b\xa0，（）", max_size=12),
                               st.text(max_size=8)), max_size=20)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(names)
    def check(xs):
        assert slugs(pl.Series(xs, dtype=pl.String)) == [slug(x) for x in xs]
        assert wiki_paths(xs) == ["".join(c if ord(c) > 127 and unicodedata.category(c)[0] not in "ZCP"
                                          else quote(c, safe="_-.,~") for c in x.replace(" ", "_")) for x in xs]

    check()


def test_facts_spread_off_the_encyclopedia(web):
    """Some of an entity's facts are on its profile or official site and not in its article (issue
    35): every one is on the living profile the article links under its external links, and news
    items about an entity are its article's references."""
    kind_of = {u: k for u, k, _d, _s, _m in web["pages"]}
    subject = {u: s for u, _k, _d, s, _m in web["pages"]}
    md = {u: m for u, _k, _d, _s, m in web["pages"]}
    article = {s: u for u, k, _d, s, _m in web["pages"] if k == "article"}
    profile = {s: u for u, k, d, s, _m in web["pages"] if k == "profile" and d is None}  # living ones
    on: dict[str, set[str]] = {}
    for u, f in web["facts"]:
        on.setdefault(f, set()).add(u)
    off = checked = 0
    for f, urls in on.items():
        s = f.split("/")[0]
        if s not in article or s not in profile or f.endswith("/name") or len(f.split("/")) > 2 or "@" in f:
            continue  # attributes of entities with an article and a living profile
        checked += 1
        if article[s] not in urls:
            off += 1
            assert profile[s] in urls, f
            assert f"]({profile[s]})" in md[article[s]].split("\n## ")[-1], (f, article[s])  # its last section links it
    assert checked > 1000 and 0.2 < off / checked < 0.6, (off, checked)
    for u, k in kind_of.items():
        if k == "news" and subject[u] in article:
            assert f"]({u})" in md[article[subject[u]]], (u, article[subject[u]])


def test_prose_reader_reads_what_profiles_state_and_never_misreads():
    """The prose reader finds a label's value by generic cues (the label's words however
    inflected, a date in a fragment beside it, the unit, a value of that label seen elsewhere),
    and gives nothing where two values compete."""
    from worldforge.rollout.reading import prose_value

    text = ("# X\n\n*Site* · Player profile\n\n## About\n\nOn 15 December 1947, Alan Clark was born, it was on 30 October 2014 "
            "that the researcher died, and the researcher has a field of computer science. The club was founded in 1901; "
            "the player stands 192 cm tall. Alan Clark plays as a Defender. Records give the height of the player as 184 cm.")
    assert prose_value(text, "Born", "date") == "15 December 1947"
    assert prose_value(text, "Died", "date") == "30 October 2014"
    assert prose_value(text, "Height", "number", unit="cm") == "184 cm"  # the labelled figure, not the other one
    assert prose_value(text, "Field", "string", {"computer science", "physics"}) == "computer science"
    assert prose_value(text, "Position", "string", {"Defender", "Forward"}) == "Defender"
    assert prose_value(text, "Founded", "date") is None  # a year is not a date
    assert prose_value("Its height is 180 cm, and its height is 190 cm.", "Height", "number") is None  # two compete
    assert prose_value("The mass is 3 kg and the width is 4 m.", "Height", "number", unit="cm") is None
    assert prose_value("由张伟创立于1990年3月5日，身高为183厘米。", "身高", "number") == "183厘米"
    # a snippet that stops at a field's label gives nothing, not the field before it; a sentence
    # that ends with the label's word still gives its value
    assert prose_value("Profile - Dissolved: Aug 17, 1950 - Founded", "Founded", "date") is None
    assert prose_value("Tamview lies at 199 m elevation.", "Elevation", "number", unit="m") == "199 m"
    assert prose_value("Kim Park plays in the Defender position.", "Position", "string", {"Defender"}) == "Defender"


def test_prose_reader_agrees_with_the_facts_of_profiles(web):
    """On the demo's profiles written in prose, every value the reader finds for an attribute is
    the one the page states (its provenance), and it finds most of them; on key facts quoted as a
    search snippet quotes them (flattened, cut anywhere), it never gives a value the cut shortened."""
    import polars as pl

    from worldforge.rollout.entities import from_prose as _from_prose
    from worldforge.rollout.reading import prose_value, read_date, read_number
    from worldforge.web.pages import WorldView
    from worldforge.web.search import plain_text
    from worldforge.world.options import RenderOptions

    view = WorldView(open_world(web["path"]), RenderOptions())
    try:
        facts_on: dict[str, list[str]] = {}
        for u, f in web["facts"]:
            facts_on.setdefault(u, []).append(f)
        vocab: dict[str, set[str]] = {}
        for f, (value, vt, *_rest) in web["world_facts"].items():
            if vt == "string" and len(f.split("/")) == 2:
                vocab.setdefault(f.split("/")[1], set()).add(value)
        def attributes(url, t):  # (label, kind, unit, value) of the attribute facts a page states
            for f in facts_on.get(url, []):
                parts = f.split("/")
                if len(parts) != 2 or parts[1] == "name":
                    continue
                value, vt = web["world_facts"][f][:2]
                kind_ = "date" if vt == "date" else "number" if vt in ("int", "float") else "string" if vt == "string" else None
                if kind_ is not None:
                    pred = parts[1].split("@")[0]  # a figure of an earlier year: the attribute's
                    m = view.meta[(t, pred)]
                    yield m.label, kind_, m.unit, value, vocab.get(pred, set())

        def agrees(got, kind_, value, why):
            if kind_ == "date":
                assert read_date(got) == dt.date.fromisoformat(value), why
            elif kind_ == "number":
                tol = max(1.0, 0.01 * abs(float(value)))  # a site may round a big figure in prose
                assert any(abs(read_number(got, scaled=sc) - float(value)) <= tol for sc in (False, True)), why
            else:
                assert got.lower() == value.lower(), why

        found = tried = cut_found = 0
        for url, kind, _d, s, md in web["pages"][:40000]:
            if kind != "profile" or s is None:
                continue
            t = view.type_of[s]
            if "- **" in md:  # key facts: read as a search snippet quotes them, cut anywhere
                flat = " ".join(pl.Series([md]).to_frame("m").select(plain_text(pl.col("m")))["m"][0].split())
                for a in range(0, max(1, len(flat) - 100), 70):
                    start = flat.find(" ", a) + 1 if a else 0  # a snippet starts at a word, and may stop anywhere
                    window = flat[start:start + 160]
                    for label, kind_, unit, value, _known in attributes(url, t):
                        got = _from_prose(window, label, (kind_,), set(), unit) if kind_ != "string" else None
                        if got is not None:
                            cut_found += 1
                            agrees(got, kind_, value, (url, label, got, value, window))
                continue
            for label, kind_, unit, value, known in attributes(url, t):
                tried += 1
                got = prose_value(md, label, kind_, known, unit)
                if got is not None:
                    found += 1
                    agrees(got, kind_, value, (url, label, got, value))
            if tried > 3000:
                break
        assert tried > 500 and found / tried > 0.6, (found, tried)
        assert cut_found > 200
    finally:
        view.close()


def test_entities_without_an_article_live_on_their_profile(web):
    """Lesser-linked people, products and papers have no encyclopedia article: their profile is
    their page. Every link to them points there, it states every attribute they have, and no
    encyclopedia page does (an article's list that a directory holds in full shows only the
    entities with articles, and says how many the full list has)."""
    pages = web["pages"]
    arts = {s for _u, k, _d, s, _m in pages if k == "article"}
    home = {s: u for u, k, _d, s, _m in pages if k == "profile" and s and s not in arts}
    profiles = sum(1 for _u, k, _d, s, _m in pages if k == "profile" and s)
    assert 0.2 * profiles < len(home) < 0.6 * profiles
    on: dict[str, set[str]] = {}
    for u, f in web["facts"]:
        on.setdefault(f, set()).add(u)
    attrs: dict[str, list[str]] = {}
    for f in web["world_facts"]:
        s, _, pred = f.partition("/")
        if s in home and "/" not in pred and "@" not in pred and pred != "name":
            attrs.setdefault(s, []).append(f)
    assert len(attrs) > 0.9 * len(home)
    for s, fs in attrs.items():
        assert all(home[s] in on[f] for f in fs), s
        assert not any("pedia.org/" in u for f in fs for u in on[f]), s
    linked = {u for *_, md in pages for u in re.findall(r"\]\((https?://[^)\s]+)\)", md)}
    assert sum(u in linked for u in home.values()) > 0.95 * len(home)
    cut = [md for u, k, _d, s, md in pages if k == "article" and any(shown for shown, *_ in cut_lists(md))]
    assert cut


def test_an_old_page_gives_that_years_figure_and_the_article_todays(web):
    """A figure with a yearly history (`changes:`) is stated as it stood in the page's year on a
    profile last updated years ago and in a news item (provenance '<id>/<attribute>@<year>'), and
    the live article of an entity whose profile is stale states today's, so every current figure
    has a current source and the two disagree, each dated."""
    kind_of = {u: (k, d, s) for u, k, d, s, _ in web["pages"]}
    on_page: dict[str, set[str]] = {}
    for url, fid in web["facts"]:
        on_page.setdefault(url, set()).add(fid)
    past = [(u, f) for u, f in web["facts"] if "@" in f and f.count("/") == 1]
    assert len({u for u, _ in past}) >= 300
    year = open_world(web["path"]).world.spec.as_of.year
    articles = {s: u for u, (k, _d, s) in kind_of.items() if k == "article"}
    kept = 0
    for url, fid in past:
        kind, date, subject = kind_of[url]
        assert kind in ("profile", "news") and date is not None and date.year < year
        assert fid.endswith(f"@{date.year}") and fid in web["world_facts"]  # that year's figure
        now = fid.split("@")[0]
        assert now not in on_page[url]  # never today's figure beside it
        if kind == "profile" and subject in articles:
            kept += now in on_page[articles[subject]]
            assert now in on_page[articles[subject]], (url, fid)
    assert kept >= 100

"""Where the web keeps the answer: the measures of the "many sources" issue, on built worlds.

    python benchmarks/sources.py build/demo build/demo_zh build/aviation_music

Per world (a folder `worldforge run` built: web and tasks), a table of:

- gold facts provable from the encyclopedia alone: the share of the table tasks' gold facts
  (names aside) that some encyclopedia page states (target: at most 50%);
- gold facts stated only off the encyclopedia: stated on no encyclopedia page, only on profiles,
  official sites, directories or news (target: at least 25%), and where those are (a fact may be
  on several); the same for the gold facts that are attributes (not links);
- the most gold facts one site holds: the largest share any single site states;
- gold facts in news: the share some news item states;
- copies told from originals by title and URL alone: the 5-fold cross-validated accuracy of a
  naive Bayes classifier over the words of a result's title and the parts of its URL, on the
  copies the rollout's `conflicting_page` perturbation puts among search results and as many
  original results, each drawn at random from the same result list as its copy (target: at
  most 65%; 50% is chance);
- the exact-title article first for a name query: the share of 300 entity names (articles drawn
  at random) whose own article is result 1 when the name is searched (target: 30-80%), and how
  often it is in the first two.

- table tasks whose rows no single list holds (target: at least 20%): no directory (all its
  pages) and no article's list sections name every answer row's entity.
- gold facts an older dated source contradicts (target: at least 10%): current links of a
  relation held one at a time (a player's club, a company's chief executive, its headquarters)
  for which a dated original page (a profile last updated years ago, a news item) states another
  link of that relation for the same entity, which the page's date shows is superseded; and
  figures with a yearly history (a population, a workforce) that a page dated in an earlier year
  gives as that year's different figure.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402
from worlds_table import print_worlds  # noqa: E402

from worldforge.plumbing import stable_hash  # noqa: E402
from worldforge.rollout import Environment  # noqa: E402
from worldforge.world.options import RolloutOptions  # noqa: E402

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _pages(world: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    web = world / "web" / "pages"
    pages = pl.scan_parquet(sorted(web.glob("*.pages.parquet"))).select("url", "kind", "site", "title", "date").collect()
    facts = pl.scan_parquet(sorted(web.glob("*.facts.parquet"))).collect()
    return pages, facts


def fact_spread(world: Path, pages: pl.DataFrame, facts: pl.DataFrame) -> dict:
    gold = _gold(world)
    g = (facts.filter(pl.col("fact_id").is_in(list(gold))).join(pages.select("url", "kind", "site"), on="url")
         .with_columns(pl.col("url").str.extract(r"^https?://([^/]+)").alias("host")))
    # the encyclopedia's host: where the articles are (a Chinese world's is 桂川百科 on its pinyin host)
    arts = pages.filter(pl.col("kind") == "article")["url"].str.extract(r"^https?://([^/]+)").unique().to_list()
    is_enc = pl.col("host").is_in(arts)
    enc = g.filter(is_enc)["fact_id"].n_unique()
    stated = g["fact_id"].n_unique()
    per_host = g.group_by("host").agg(pl.col("fact_id").n_unique().alias("n")).sort("n", descending=True)
    news = g.filter(pl.col("kind") == "news")["fact_id"].n_unique()
    per_fact = g.group_by("fact_id").agg(is_enc.any().alias("enc"),
                                        pl.col("kind").unique().alias("kinds"))
    off = per_fact.filter(~pl.col("enc"))
    attrs = per_fact.filter(pl.col("fact_id").str.count_matches("/") == 1)  # an attribute's fact: subject/predicate
    only = {k: off.filter(pl.col("kinds").list.contains(k))["fact_id"].len() / len(gold) for k in ("profile", "directory", "news")}
    return {"gold_facts": len(gold), "stated": stated, "encyclopedia": enc / len(gold),
            "only_elsewhere": (stated - enc) / len(gold), "top_site": per_host["host"][0],
            "top_site_share": per_host["n"][0] / len(gold), "news": news / len(gold),
            "attr_facts": attrs.height, "attr_off": attrs.filter(~pl.col("enc")).height / max(1, attrs.height),
            "off_profile": only["profile"], "off_directory": only["directory"], "off_news": only["news"]}


def superseded(world: Path, pages: pl.DataFrame, facts: pl.DataFrame) -> dict:
    """The share of gold facts (names aside) that a dated original page (a stale profile, a news
    item) contradicts with an older value: current links of a one-at-a-time relation the page
    gives another link of, and figures with a yearly history (`changes:`) the page gives another
    year's different figure of."""
    from worldforge.world.store import open_world

    info = open_world(world)
    one_at_a_time = [r for r, rs in info.world.relations.items()
                     if (rs.history is not None and not rs.history.concurrent) or rs.since is not None]
    con = info.connect()
    try:
        current = {f for (f,) in con.execute("SELECT fact_id FROM facts WHERE value_type = 'entity' AND valid_from IS NOT NULL "
                                             "AND valid_to IS NULL AND list_contains(?, predicate)", [one_at_a_time]).fetchall()}
        has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'past_facts'").fetchone()[0]
        values = dict(con.execute("SELECT fact_id, value FROM facts WHERE value_type IN ('int', 'float')").fetchall())
        past = dict(con.execute("SELECT fact_id, value FROM past_facts").fetchall()) if has else {}
    finally:
        con.close()
    figures = {f.split("@")[0] for f in past}
    gold = _gold(world)
    parts = [pl.col("fact_id").str.split("/").list.get(0).alias("s"),
             pl.col("fact_id").str.split("/").list.get(1).str.replace("@.*", "").alias("p")]
    g = pl.DataFrame({"fact_id": sorted(gold & (current | figures))}, schema={"fact_id": pl.String}).with_columns(parts)
    dated = pages.filter(((pl.col("kind") == "profile") & pl.col("date").is_not_null()) | (pl.col("kind") == "news"))
    said = facts.join(dated.select("url"), on="url").with_columns(parts).select("s", "p", pl.col("fact_id").alias("other"))
    pairs = g.join(said, on=["s", "p"]).filter(pl.col("other") != pl.col("fact_id")).select("fact_id", "other").unique()
    # a figure's other year contradicts only with another value (an h-index of 3 for two years agrees)
    pairs = [(f, o) for f, o in pairs.rows() if o not in past or past[o] != values.get(f)]
    hit = len({f for f, _ in pairs})
    fig = len({f for f, o in pairs if o in past})
    return {"superseded": hit / max(1, len(gold)), "superseded_n": hit, "superseded_figures": fig / max(1, len(gold))}


def partial_lists(world: Path, pages: pl.DataFrame) -> dict:
    """The share of table tasks whose answer rows no single list holds: no directory (all its
    pages) and no article (its list sections) names every row's entity, so the rows come from
    several lists (an "or", a condition across groups) or from links and searches."""
    d = (pl.scan_parquet(sorted((world / "web" / "pages").glob("*.pages.parquet"))).select("url", "kind", "entity_ids")
         .filter(pl.col("kind").is_in(["directory", "article"])).collect()
         .with_columns(pl.col("url").str.replace(r"\?page=\d+$", "").alias("list")))
    lists = [set(ids) for _, ids in d.group_by("list").agg(
        pl.col("entity_ids").list.explode(keep_nulls=False, empty_as_null=False)).rows()]
    n = none = 0
    for line in (world / "tasks" / "tasks.jsonl").read_text().splitlines():
        r = json.loads(line)
        rows = {f.split("/")[0] for f in r["evidence"]["facts"] if f.endswith("/name")} if r["kind"] == "table" else set()
        if rows:
            n += 1
            none += not any(rows <= s for s in lists)
    return {"no_single_list": none / max(1, n)}


def _gold(world: Path) -> set[str]:
    gold = set()
    for line in (world / "tasks" / "tasks.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "table":
            gold |= {f for f in r["evidence"]["facts"] if not f.endswith("/name")}
    return gold


def _features(title: str, url: str) -> list[str]:
    m = re.match(r"^https?://([^/]+)(/[^?#]*)?(?:\?([^#]*))?", url)
    host, path, query = (m.group(1), m.group(2) or "", m.group(3) or "") if m else ("", url, "")
    parts = [p for p in path.split("/") if p]
    return ([f"t:{w.lower()}" for w in _TOKEN.findall(title)] + [f"h:{host}"] + [f"p{i}:{p[:20]}" for i, p in enumerate(parts[:3])]
            + [f"depth:{len(parts)}", f"pipe:{' | ' in title}"] + [f"hp:{p}" for p in parts if "." in p] + [f"q:{k.split('=')[0]}" for k in query.split("&") if k])


def _nb_accuracy(docs: list[tuple[list[str], int]], folds: int = 5) -> float:
    """Cross-validated accuracy of a multinomial naive Bayes (add-one smoothing)."""
    order = sorted(range(len(docs)), key=lambda i: stable_hash("fold", i))
    right = 0
    for f in range(folds):
        test = set(order[f::folds])
        counts = [Counter(), Counter()]
        n_docs = [0, 0]
        for i, (feats, y) in enumerate(docs):
            if i not in test:
                counts[y].update(feats)
                n_docs[y] += 1
        vocab = len(set(counts[0]) | set(counts[1])) + 1
        totals = [sum(c.values()) for c in counts]
        for i in test:
            feats, y = docs[i]
            score = [math.log(n_docs[c] / sum(n_docs)) + sum(math.log((counts[c][w] + 1) / (totals[c] + vocab)) for w in feats)
                     for c in (0, 1)]
            right += int((score[1] > score[0]) == bool(y))
    return right / len(docs)


def copies_and_ranking(world: Path, pages: pl.DataFrame, n: int = 300) -> dict:
    env = Environment.for_world(world, RolloutOptions(perturbations={}))
    try:
        rng = random.Random(7)
        arts = pages.filter(pl.col("kind") == "article").select("url", "title").rows()
        first = second = 0
        docs: list[tuple[list[str], int]] = []
        for i, (url, title) in enumerate(rng.sample(arts, min(n, len(arts)))):
            results, _ = env.engine.search(title)
            urls = [r["url"] for r in results]
            first += urls[:1] == [url]
            second += url in urls[:2]
            if len(results) >= 2:
                copy = env._inject_copy(results, f"bench|{i}")  # the results as the perturbation serves them
                injected = [r for r in copy if r["url"] not in set(urls)]
                originals = [r for r in copy if r["url"] in set(urls)]
                docs += [(_features(r["title"], r["url"]), 1) for r in injected]
                docs += [(_features(r["title"], r["url"]), 0) for r in rng.sample(originals, len(injected))]
        return {"names": min(n, len(arts)), "title_first": first / min(n, len(arts)), "title_top2": second / min(n, len(arts)),
                "copy_docs": len(docs), "copy_accuracy": _nb_accuracy(docs) if docs else float("nan")}
    finally:
        env.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("worlds", nargs="+", type=Path, help="world folders built by `worldforge run` (web and tasks)")
    args = ap.parse_args()
    rows = defaultdict(dict)
    for w in args.worlds:
        pages, facts = _pages(w)
        rows[w.name] |= fact_spread(w, pages, facts)
        rows[w.name] |= superseded(w, pages, facts)
        rows[w.name] |= partial_lists(w, pages)
        rows[w.name] |= copies_and_ranking(w, pages)
    measures = [("gold facts (table tasks, names aside)", "gold_facts", "{:,}"),
                ("provable from the encyclopedia alone (target <= 50%)", "encyclopedia", "{:.1%}"),
                ("stated only off the encyclopedia (target >= 25%)", "only_elsewhere", "{:.1%}"),
                ("  of them on a profile or official site", "off_profile", "{:.1%}"),
                ("  of them in a directory", "off_directory", "{:.1%}"),
                ("  of them in news", "off_news", "{:.1%}"),
                ("gold attribute facts (no links)", "attr_facts", "{:,}"),
                ("  stated only off the encyclopedia", "attr_off", "{:.1%}"),
                ("the most one site holds", "top_site_share", "{:.1%}"),
                ("stated in news", "news", "{:.1%}"),
                ("contradicted by an older dated source (target >= 10%)", "superseded", "{:.1%}"),
                ("  of them figures of an earlier year", "superseded_figures", "{:.1%}"),
                ("table tasks whose rows no single list holds (target >= 20%)", "no_single_list", "{:.1%}"),
                ("copies told apart by title+URL (target <= 65%)", "copy_accuracy", "{:.1%}"),
                ("  results classified", "copy_docs", "{:,}"),
                ("exact-title article first (target 30-80%)", "title_first", "{:.1%}"),
                ("exact-title article in the first two", "title_top2", "{:.1%}")]
    print_worlds(rows, measures, 54, 16)


if __name__ == "__main__":
    main()

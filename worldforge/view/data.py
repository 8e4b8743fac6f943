"""What the browser view reads from a world folder, opened once and answered fast.

Pages come from the search engine the tools use (a page is a term lookup in its index, the
search is the web_search tool's own ranking, copies come from the environment as an episode
meets them). A page's provenance is read from the one shard file that holds the page (the
shard of a URL is found through a sorted array of URL hashes), so it costs the same on a world
of a million pages as on the demo. Tasks and their gold tables load once; a trajectory is one
line of `rollout/trajectories.jsonl`, found through an index of line offsets made at the first
request that needs it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..errors import WorldforgeError
from ..plumbing import connect_duckdb
from ..world import DB_FILE, REPLAN, open_world

MAX_FACT_PAGES = 500  # pages a fact's page lists (the count is always whole)


class ViewError(WorldforgeError):
    """Something the view cannot show: `status` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class FactRow:
    """A fact as the view shows it: the world's `facts` row with the names it refers to."""

    fact_id: str
    subject: str
    subject_type: str
    predicate: str
    label: str
    value: str
    value_type: str
    valid_from: dt.date | None
    valid_to: dt.date | None
    note: str | None
    subject_name: str
    value_name: str | None  # the linked entity's name, for a link

    @property
    def shown_value(self) -> str:
        v = self.value_name if self.value_type == "entity" else self.value
        if self.note:
            v += " (" + ", ".join(x for x in self.note.split("\x1f") if x) + ")"
        return v or ""

    @property
    def span(self) -> str:
        if self.valid_from is None and self.valid_to is None:
            return ""
        a = self.valid_from.isoformat() if self.valid_from else "…"
        b = self.valid_to.isoformat() if self.valid_to else ("" if self.valid_from else "…")
        return f"{a} – {b}".strip() if b or a else ""

    def as_text_fact(self):
        """The fact as `web.text.Fact`, the form the page checker reads."""
        from ..web import Fact

        return Fact(self.fact_id, self.subject, self.predicate, self.value, self.value_type, self.valid_from, self.valid_to,
                    self.note)


@dataclass(frozen=True, slots=True)
class TrajectoryEntry:
    instance_id: str
    sample: int
    policy: str
    reward: float | None
    turns: int | None
    end: str | None
    offset: int
    length: int


_HEAD = re.compile(rb'^\{"instance_id": "((?:[^"\\]|\\.)*)", "sample": (\d+), "policy": "((?:[^"\\]|\\.)*)"')
_REWARD = re.compile(rb', "reward": (-?[0-9.eE+-]+|null), "score": ')
_TURNS = re.compile(rb', "turns": (\d+), "tool_calls": ')
_END = re.compile(rb', "end": "(\w+)", "answer": ')


def find_export(world: Path, name: str) -> Path | None:
    """The newest export of world `name`: `exports/<name>/v<N>/` under the current folder or
    beside the build folder, whose manifest names this world."""
    for root in (Path("exports") / name, world.parent.parent / "exports" / name):
        if not root.is_dir():
            continue
        got = export_version(root)
        if got is not None:
            return got
    return None


def export_version(path: Path) -> Path | None:
    """`path` if it holds a manifest.json, else its newest `v<N>/` that does."""
    if (path / "manifest.json").is_file():
        return path
    versions = sorted((p for p in path.glob("v*") if p.name[1:].isdigit() and (p / "manifest.json").is_file()),
                      key=lambda p: int(p.name[1:]))
    return versions[-1] if versions else None


class ViewData:
    """One world opened for the view. Not thread-safe: the view answers from one event loop."""

    def __init__(self, world_path: str | Path, env=None, export: str | Path | None = None):
        from ..rollout import Environment
        from ..web import Sites, predicate_meta

        self.world = Path(world_path)
        self.info = open_world(self.world)
        self.spec = self.info.world.spec
        self.own_env = env is None
        self.env = env if env is not None else Environment.for_world(self.world)
        self.engine = self.env.engine
        self.language = self.engine.language
        self.meta = predicate_meta(self.info.world, self.language)
        self.sites = Sites(self.spec.seed, self.language)
        self.encyclopedia_host = self.sites.encyclopedia.domain
        self.db = connect_duckdb(self.world / DB_FILE, REPLAN)
        self._fact_columns = {r[0] for r in self.db.execute("DESCRIBE facts").fetchall()}
        if export is not None:
            p = export_version(Path(export))
            if p is None:
                raise WorldforgeError(f"{export} holds no export (no manifest.json in it or in a v<N>/ folder under it); "
                                      "give the folder `worldforge export` wrote, e.g. exports/demo/v1")
            self.export: Path | None = p
        else:
            self.export = find_export(self.world, self.spec.name)
        self._shards = None  # (sorted URL hashes, shard of each) of the page files
        self._audit = None
        import duckdb

        self.scratch = duckdb.connect()  # reads the page files' provenance (no database of its own)
        self.scratch.execute("SET enable_progress_bar = false")

    def warm(self) -> None:
        """Read once what the first requests would (tasks, the trajectory index, the sites, the
        page shards), so that no visitor waits for it."""
        from .markdown import render

        _ = self.tasks, self.trajectory_index
        self.site_counts()
        self._shard_index()
        render("# warm\n\n[a](https://x.example/) | b\n\n| a |\n|---|\n| b |", lambda u: u)  # the parser, built once
        first = self.engine.pages.execute("SELECT url, title FROM pages LIMIT 1").fetchone()
        if first:  # the index's first reads (a page, a search) page its files in
            self.engine.page(first[0])
            self.engine.archive(first[0])  # which articles have an earlier capture: read once (0.7 s on a 1M world)
            try:
                self.engine.search(first[1])
            except WorldforgeError:
                pass
            self.engine._pages.clear()
            self.engine._searches.clear()

    def close(self) -> None:
        self.db.close()
        self.scratch.close()
        if self.own_env:
            self.env.close()

    # ------------------------------------------------------------------ pages

    def page(self, url: str) -> dict | None:
        """The page at `url` as the web_extractor tool serves it without perturbation: a stored
        page, or a duplicate (copy) an episode met, with its look; None for an unknown address."""
        p = self.engine.page(url)
        if p is not None:
            return {**p, "look": self.look(p["url"], p["kind"]), "copy_of": None}
        got = self.env.copy_page(url)
        if got is None:
            return None
        text, original = got
        title = text.split("\n", 1)[0].lstrip("# ").strip()
        return {"url": url, "title": title, "kind": "copy", "date": None, "markdown": text, "look": "copy", "copy_of": original}

    def archive(self, url: str) -> dict | None:
        got = self.engine.archive(url)
        if got is None:
            return None
        when, text = got
        title = text.split("\n", 1)[0].lstrip("# ").strip()
        return {"url": url, "title": title, "kind": "archive", "date": when, "markdown": text, "look": "archive", "copy_of": None}

    def look(self, url: str, kind: str) -> str:
        """The look a page is drawn in: its site's family."""
        host = url.split("/")[2] if url.count("/") >= 2 else ""
        if host == self.encyclopedia_host:
            return "encyclopedia"
        return {"news": "news", "directory": "directory", "profile": "profile", "article": "encyclopedia"}.get(kind, "profile")

    def site_of(self, url: str) -> str:
        """The site's name, as its pages' by-line gives it (the host when none does)."""
        return self._site_names().get(url.split("/")[2] if url.count("/") >= 2 else "", url.split("/")[2] if url.count("/") >= 2 else url)

    def _site_names(self) -> dict[str, str]:
        if getattr(self, "_sites_by_host", None) is None:
            self._sites_by_host = {h: s for s, h, _, _ in self.site_counts()}
        return self._sites_by_host

    def site_counts(self) -> list[tuple[str, str, str, int]]:
        """(site, host, look, pages) of every site, most pages first (read once: 0.5 s on a 1M world)."""
        if getattr(self, "_site_counts", None) is None:
            rows = self.engine.pages.execute(
                "SELECT any_value(site), split_part(url, '/', 3) AS host, mode(kind), count(*) AS n, any_value(url) "
                "FROM pages GROUP BY host ORDER BY n DESC, host").fetchall()
            self._site_counts = [(s, h, self.look(u, k), n) for s, h, k, n, u in rows]
        return self._site_counts

    def site_pages(self, host: str, offset: int, limit: int) -> tuple[list[tuple[str, str, str, dt.date | None]], int]:
        """(url, title, kind, date) of a site's pages in URL order, and how many it has."""
        prefix = f"https://{host}/"
        n = self.engine.pages.execute("SELECT count(*) FROM pages WHERE starts_with(url, ?)", [prefix]).fetchone()[0]
        rows = self.engine.pages.execute("SELECT url, title, kind, date FROM pages WHERE starts_with(url, ?) ORDER BY url "
                                         "LIMIT ? OFFSET ?", [prefix, limit, offset]).fetchall()
        return rows, n

    # ------------------------------------------------------------------ provenance

    def _shard_index(self):
        if self._shards is None:
            import numpy as np
            import polars as pl

            from ..web import page_files

            files = page_files(self.engine.web, "pages")
            hashes, shard = [], []
            for i, f in enumerate(files):
                h = pl.read_parquet(f, columns=["url"])["url"].hash(seed=0).to_numpy()
                hashes.append(h)
                shard.append(np.full(len(h), i, dtype=np.int32))
            h = np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.uint64)
            s = np.concatenate(shard) if shard else np.zeros(0, dtype=np.int32)
            order = np.argsort(h, kind="stable")
            self._shards = (h[order], s[order], page_files(self.engine.web, "facts"))
        return self._shards

    def _shards_of(self, url: str) -> list[int]:
        """The page shards that may hold `url` (one, but for a hash collision)."""
        import numpy as np
        import polars as pl

        hashes, shards, _ = self._shard_index()
        h = pl.Series([url]).hash(seed=0).to_numpy()[0]
        lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
        return sorted({int(x) for x in shards[lo:hi]})

    def page_fact_ids(self, url: str) -> list[str]:
        """The ids of the facts the page at `url` states (its `page_facts` rows)."""
        from ..web import parquet_list

        facts = self._shard_index()[2]
        files = [facts[i] for i in self._shards_of(url)]
        if not files:
            return []
        rows = self.scratch.execute(f"SELECT fact_id FROM read_parquet({parquet_list(files)}) WHERE url = ? ORDER BY fact_id",
                                    [url]).fetchall()
        return [r[0] for r in rows]

    def page_subject(self, url: str) -> str | None:
        """The entity a page is about (None for a list or an unknown address)."""
        from ..web import page_files, parquet_list

        pages = page_files(self.engine.web, "pages")
        files = [pages[i] for i in self._shards_of(url)]
        if not files:
            return None
        got = self.scratch.execute(f"SELECT subject FROM read_parquet({parquet_list(files)}) WHERE url = ? LIMIT 1", [url]).fetchone()
        return got[0] if got else None

    def fact_pages(self, fact_id: str, limit: int = MAX_FACT_PAGES) -> tuple[list[str], int]:
        """The pages that state a fact (URL order, at most `limit`) and how many there are."""
        from ..web import page_files, parquet_list

        src = f"read_parquet({parquet_list(page_files(self.engine.web, 'facts'))})"
        n = self.scratch.execute(f"SELECT count(*) FROM {src} WHERE fact_id = ?", [fact_id]).fetchone()[0]
        rows = self.scratch.execute(f"SELECT url FROM {src} WHERE fact_id = ? ORDER BY url LIMIT ?", [fact_id, limit]).fetchall()
        return [r[0] for r in rows], n

    def facts(self, fact_ids: list[str]) -> list[FactRow]:
        """The facts with these ids (current and past ones), in the order given; unknown ids left out."""
        by_type: dict[str, list[str]] = {}
        for fid in fact_ids:
            subject = fid.split("/", 1)[0]
            by_type.setdefault(subject.rsplit("_", 1)[0], []).append(fid)
        note = "note" if "note" in self._fact_columns else "NULL::VARCHAR AS note"
        rows: dict[str, tuple] = {}
        for t, ids in by_type.items():
            if t not in self.info.world.types:
                continue
            for view in ("facts", "past_facts"):
                want = set(i for i in ids if i not in rows)
                if not want:
                    break
                # by subject and predicate, the columns the views select as they are (a filter on
                # the fact id, which the views compute, read a 1M world's history for 0.7 s)
                subjects = sorted({i.split("/", 1)[0] for i in want})
                preds = sorted({i.split("/")[1].split("@")[0] for i in want if "/" in i})
                cols = f"fact_id, subject, subject_type, predicate, value, value_type, valid_from, valid_to, " \
                       f"{note if view == 'facts' else 'NULL::VARCHAR AS note'}"
                for r in self.db.execute(f"SELECT {cols} FROM {view} WHERE subject_type = ? AND predicate IN "
                                         "(SELECT unnest(?::VARCHAR[])) AND subject IN (SELECT unnest(?::VARCHAR[]))",
                                         [t, preds, subjects]).fetchall():
                    if r[0] in want:
                        rows[r[0]] = r
        names = self.names({r[1] for r in rows.values()} | {r[4] for r in rows.values() if r[5] == "entity"})
        out = []
        for fid in fact_ids:
            r = rows.get(fid)
            if r is None:
                continue
            fid, subj, st, pred, value, vt, vf, vt_to, nt = r
            m = self.meta.get((st, pred))
            label = m.label if m is not None else pred.replace("_", " ")
            out.append(FactRow(fid, subj, st, pred, label, value, vt, vf, vt_to, nt, names.get(subj, subj),
                               names.get(value) if vt == "entity" else None))
        return out

    def names(self, ids) -> dict[str, str]:
        """Entity id -> name."""
        by_type: dict[str, list[str]] = {}
        for i in ids:
            if isinstance(i, str) and "_" in i:
                by_type.setdefault(i.rsplit("_", 1)[0], []).append(i)
        out: dict[str, str] = {}
        for t, want in by_type.items():
            if t not in self.info.world.types:
                continue
            out.update(self.db.execute(f'SELECT id, name FROM "{t}" WHERE id IN (SELECT unnest(?::VARCHAR[]))', [want]).fetchall())
        return out

    def article_of(self, entity_id: str) -> str | None:
        """The encyclopedia article about an entity, if it has one."""
        got = self.engine.pages.execute(
            "SELECT url FROM pages WHERE subject = ? AND kind = 'article' LIMIT 1", [entity_id]).fetchone()
        return got[0] if got else None

    # ------------------------------------------------------------------ tasks

    @cached_property
    def tasks(self) -> dict:
        """Task id -> `rollout.env.Task` (record and gold table); empty for a world without tasks."""
        from ..rollout import load_tasks
        from ..tasks import TASKS_FILE, tasks_dir

        if not (tasks_dir(self.world) / TASKS_FILE).is_file():
            return {}
        return {t.id: t for t in load_tasks(self.world)}

    # ------------------------------------------------------------------ trajectories

    @cached_property
    def trajectory_index(self) -> dict[tuple[str, int], TrajectoryEntry]:
        """(task id, sample) -> where its line is in `rollout/trajectories.jsonl`, with its reward."""
        from ..rollout import TRAJECTORIES, rollout_dir

        path = rollout_dir(self.world) / TRAJECTORIES
        out: dict[tuple[str, int], TrajectoryEntry] = {}
        if not path.is_file():
            return out
        offset = 0
        with path.open("rb") as f:
            for line in f:
                m = _HEAD.match(line)
                if m is not None:
                    r = _REWARD.search(line)
                    t = _TURNS.search(line)
                    e = _END.search(line)
                    reward = None if r is None or r.group(1) == b"null" else float(r.group(1))
                    iid = json.loads(b'"' + m.group(1) + b'"')
                    out[(iid, int(m.group(2)))] = TrajectoryEntry(iid, int(m.group(2)), m.group(3).decode(), reward,
                                                                 int(t.group(1)) if t else None,
                                                                 e.group(1).decode() if e else None, offset, len(line))
                offset += len(line)
        return out

    def trajectory(self, instance_id: str, sample: int = 0) -> dict | None:
        from ..rollout import TRAJECTORIES, rollout_dir

        e = self.trajectory_index.get((instance_id, sample))
        if e is None:
            return None
        with (rollout_dir(self.world) / TRAJECTORIES).open("rb") as f:
            f.seek(e.offset)
            return json.loads(f.read(e.length))

    def trajectories_of(self, instance_id: str) -> list[TrajectoryEntry]:
        return sorted((e for (i, _), e in self.trajectory_index.items() if i == instance_id), key=lambda e: e.sample)

    # ------------------------------------------------------------------ reports

    def render_report(self) -> dict:
        from ..web import read_report

        try:
            return read_report(self.world)
        except WorldforgeError:
            return {}

    def tasks_report(self) -> dict:
        from ..tasks import tasks_dir

        p = tasks_dir(self.world) / "report.json"
        return json.loads(p.read_text()) if p.is_file() else {}

    def rollout_report(self) -> dict:
        from ..rollout import rollout_dir

        p = rollout_dir(self.world) / "report.json"
        return json.loads(p.read_text()) if p.is_file() else {}

    @cached_property
    def distribution(self) -> dict:
        """The tasks' figures (`tasks.report.distribution`), or {} without tasks."""
        from ..tasks import distribution, tasks_dir

        if not self.tasks:
            return {}
        return distribution(tasks_dir(self.world), [t.record for t in self.tasks.values()])

    def audit(self):
        """The world's audit report (`worldforge audit`), computed at the first request."""
        if self._audit is None:
            from ..world import audit_world

            self._audit = audit_world(self.world)
        return self._audit

    def manifest(self) -> dict:
        if self.export is None:
            return {}
        return json.loads((self.export / "manifest.json").read_text())

    def card(self) -> str | None:
        """The export's dataset card (README.md) without its YAML front matter."""
        if self.export is None or not (self.export / "README.md").is_file():
            return None
        text = (self.export / "README.md").read_text()
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            if end > 0:
                text = text[end + 5:]
        return text

"""The page plan: which pages a world has, where they live, and which facts each states.

The plan is backend-independent. A `Page` carries its URL, kind, site, title, date and
fact sheet (rows of the world's `facts` view); a backend only writes the Markdown. So a
template page and a vLLM page at the same URL state the same facts, and provenance is
known before any text exists.

Kinds (declared per entity type under `pages:` in the domain packs):
- `article`: an encyclopedia article with an infobox and a section per relation;
- `profile`: the entity's official or profile page on a fictional site;
- `news`: one dated item per event (event attributes and dated relations);
- `directory`: list pages grouping a type's entities by a relation target or an attribute,
  paginated so that no single page lists a whole group.

Everything is ordered (types in spec order, entities by id, pages by a fixed rule), so
the same world gives the same plan, shard by shard; resuming relies on that.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import NamedTuple

import polars as pl

from ..language import BASE
from ..language import get as get_language
from ..plumbing import iri_quote
from ..plumbing import quote_ident as _q
from ..world import (
    DEFAULT_SYLLABLES,
    CategoricalAttr,
    CodeAttr,
    DateAttr,
    LinkEntity,
    LinkNumber,
    LookupAttr,
    NumericAttr,
    RenderOptions,
    ResolvedWorld,
    WorldInfo,
    attribute_dtype,
    attribute_label,
    child_rng,
    humanise,
    relation_label,
    unit_in,
    value_translation,
)
from .grammar import bank, word
from .text import Fact, pick

KINDS = ("article", "profile", "news", "directory")
PART_PAGE_SIZE = 20  # rows per page of a per-part list ("Companies in Braeria")
NAV_LINKS = 10  # page links a paginated list shows besides previous/next (its neighbourhood, first and last)


@dataclass(slots=True)
class Page:
    url: str
    kind: str
    site: str
    title: str
    date: dt.date | None
    subject: str | None  # the entity the page is about; None for directory pages
    entity_ids: tuple[str, ...]
    facts: list[Fact]
    layout: dict = field(default_factory=dict)  # kind-specific: headline event, directory rows and paging
    numbers: tuple[int, ...] = ()  # page furniture a page may show besides its facts (page 2 of 5, 8 of 40 shown)
    archive: tuple[dt.date, list[Fact]] | None = None  # articles: an earlier capture date and the facts as they stood then


@dataclass(slots=True)
class PartLists:
    """The world's parts (the entities of its top container type: countries) and, per type with a
    to-one chain to them, each entity's part: the web lists every such type per part."""

    root: str
    of: dict[str, list[str | None]]  # per listed type: each entity's part id, aligned with `WorldView.ids[t]`
    counts: dict[str, list[tuple[str, int]]]  # per part id: (type, entities listed), in type order
    declared: dict[str, str]  # types a pack's own directory already lists per part: type -> its `by`
    former: dict[str, list[str | None]]  # per listed type: the part an entity was in when its chain ended (dissolved, moved)
    former_counts: dict[str, list[tuple[str, int]]]
    # per type placed in its part through a link that is no location: how its list names the part
    # ("won by albums from {group}"; see `world.parts.part_phrase`)
    phrases: dict[str, str] = field(default_factory=dict)

    @property
    def by(self) -> str:
        """The grouping word of a per-part list's URL ('by-country'): never a pack directory's own."""
        return "by-" + self.root

    @property
    def former_by(self) -> str:
        return "former-by-" + self.root


@dataclass(frozen=True, slots=True)
class Site:
    name: str
    domain: str


class LinkNote(NamedTuple):
    """One of a link's own attributes as pages state it: its label, the words a sentence adds
    ("in {value}"), and whether a list writes it after its label (a number or an entity: ", shirt
    number 9", ", supervisor Isaac Wilkinson"; a category alone: ", sales")."""

    label: str
    phrases: tuple[str, ...]
    labelled: bool = False

    def listed(self, value: str, lang: str) -> str:
        """The value as a list or an infobox writes it after the link."""
        if not self.labelled:
            return value
        language = get_language(lang)
        return language.mid(self.label) + language.space + value  # "shirt number 9", "号码9"


@dataclass(frozen=True, slots=True)
class PredicateMeta:
    """How pages label and phrase one predicate of one subject type."""

    label: str
    phrases: tuple[str, ...]
    unit: str | None = None
    relation: bool = False
    inverse_label: str = ""
    headlines: tuple[str, ...] = ()
    to_one: bool = False
    temporal: bool = False
    event: bool = False  # a dated one-off link (an acquisition, an award), not a tenure
    # a link's own attributes (a job's department), in order
    notes: tuple[LinkNote, ...] = ()


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def slug(text: str) -> str:
    """URL words: ASCII-folded ('Müller' -> 'muller'), Chinese in pinyin without tones
    ('安平足球俱乐部' -> 'an-ping-zu-qiu-ju-le-bu'); text with neither gets a stable hash."""
    if _CJK.search(text):
        from pypinyin import lazy_pinyin

        text = " ".join(lazy_pinyin(text))
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or f"{zlib.crc32(text.encode()):08x}"


def slugs(texts: pl.Series) -> list[str]:
    """`slug` of every text in a column: ASCII texts in one pass of polars (for them the fold is
    the identity), the rest (and texts that slug to nothing) by `slug` itself."""
    folded = texts.str.to_lowercase().str.replace_all(r"[^a-z0-9]+", "-").str.strip_chars("-")
    out = folded.to_list()
    for k in (~texts.str.contains(r"^[\x00-\x7f]*$") | (folded == "")).arg_true().to_list():
        out[k] = slug(texts[k])
    return out


# What `quote(..., safe="_-.,~")` does to each ASCII character it does not keep.
_QUOTED_ASCII = {chr(c): f"%{c:02X}" for c in range(128) if not (chr(c).isalnum() or chr(c) in "_.-~,")}
# Non-ASCII characters `iri_path` encodes: separators, controls, format marks, punctuation.
_IRI_UNSAFE = r"[^\x00-\x7f&&[\p{Z}\p{C}\p{P}]]"


def iri_path(title: str) -> str:
    """An article URL's path from its title, as an IRI (RFC 3987), the form a browser's address bar
    and the encyclopedias of other languages show (`/wiki/北京`, not `/wiki/%E5%8C%97%E4%BA%AC`):
    spaces become underscores, ASCII characters `urllib.parse.quote(..., safe='_-.,~')` would not
    keep are percent-encoded as it does, and so are non-ASCII separators, controls, format marks
    and punctuation (`plumbing.iri_quote`); every other character is kept. The search engine opens the
    percent-encoded form of the same URL too."""
    return iri_quote(title.replace(" ", "_"), safe="_-.,~")


def wiki_paths(titles: list[str]) -> list[str]:
    """`iri_path` of every title: in one polars pass (each ASCII character it does not keep
    becomes its %XX), titles with a non-ASCII separator, control or punctuation mark one by one."""
    col = pl.Series(titles, dtype=pl.String).str.replace_all(" ", "_", literal=True)
    out = col.str.replace_many(list(_QUOTED_ASCII), list(_QUOTED_ASCII.values())).to_list()
    for k in col.str.contains(_IRI_UNSAFE).arg_true().to_list():
        out[k] = iri_path(titles[k])
    return out


def predicate_meta(world: ResolvedWorld, lang: str) -> dict[tuple[str, str], PredicateMeta]:
    """How pages label and phrase every (subject type, predicate), in the world's language: a
    pack's own text in that language, else (labels, units) its English, and (phrasings) the
    grammar's generic ones. The tasks stage reads the same labels into its questions."""

    def own(item, field: str) -> tuple[str, ...]:  # phrasings are never borrowed from another language
        if lang == BASE:
            return tuple(getattr(item, field))
        lt = item.i18n.get(lang)
        return tuple(getattr(lt, field) or ()) if lt is not None else ()

    lexicon = world.lexicon(lang)
    meta: dict[tuple[str, str], PredicateMeta] = {}
    for t, et in world.types.items():
        meta[(t, "name")] = PredicateMeta(word(lang, "name_label"), ())
        for a, s in et.attributes.items():
            label = attribute_label(s, a, lang)
            unit = unit_in(s, lang)  # (none where the language has no word for it: no English unit in Chinese)
            meta[(t, a)] = PredicateMeta(label, own(s, "phrases"), unit,
                                         headlines=own(s, "headlines") if isinstance(s, DateAttr) else ())
    for r, rs in world.relations.items():
        inverse = lexicon.inverse_label(r)
        meta[(rs.source, r)] = PredicateMeta(
            relation_label(rs, r, lang), own(rs, "phrases"), relation=True,
            inverse_label=inverse,
            headlines=own(rs, "headlines"), to_one=rs.cardinality in ("1:1", "N:1") and not rs.history,
            temporal=bool(rs.history or rs.date or rs.since), event=rs.date is not None,
            notes=tuple(LinkNote(attribute_label(s, a, lang), own(s, "phrases"), isinstance(s, (LinkNumber, LinkEntity)))
                        for a, s in ((a, rs.attributes[a]) for a in rs.note_order)),
        )
    return meta


class Sites:
    """The fictional sites of one world, named from its seed (stable within a world)."""

    # News outlets and the years they published in: an item goes to an outlet of its day (no
    # "Business Wire" story of 1880). Papers that closed before the web keep their archives on
    # .org hosts (a library's digitised newspapers); the others are .com. Their names, and every
    # site's, are the language's (`sites` in worldforge/language/<code>.yaml).
    OUTLETS = (("gazette", 1840, 1962, "org"), ("courier", 1866, 1958, "org"), ("herald", 1948, None, "com"),
               ("times", 1956, None, "com"), ("dailypost", 1971, None, "com"), ("wire", 1998, None, "com"))

    def __init__(self, seed: int, lang: str = "en"):
        self.seed = seed
        self.lang = lang
        self.names = get_language(lang).sites
        ns = self.names
        self.encyclopedia = self._site(ns["encyclopedia"], "encyclopedia")
        self.directory = self._site(ns["directory"], "directory")
        self.outlets = tuple(Site(ns["outlets"][d].format(Root=self._root(d)[0]), f"www.{self._root(d)[1]}{d}.{tld}")
                             for d, _, _, tld in self.OUTLETS)
        self.outlet_years = tuple((start, end) for _, start, end, _ in self.OUTLETS)
        self._profiles: dict[str, Site] = {}

    def _root(self, word: str) -> tuple[str, str]:
        """A site's root from the world's seed: two syllables of the name maker ('Velan'), or two of
        the language's characters (安平); as a name, and as its host writes it (ASCII, pinyin)."""
        chars = self.names["roots"]
        rng = child_rng(self.seed, self.names["stream"], word)
        if chars is None:
            r = "".join(DEFAULT_SYLLABLES[i] for i in rng.integers(0, len(DEFAULT_SYLLABLES), 2))
        else:
            r = "".join(chars[i] for i in rng.integers(0, len(chars), 2))
        return r.title(), slug(r).replace("-", "")

    def _site(self, form: dict, word: str) -> Site:
        name, host = self._root(word)
        return Site(form["name"].format(Root=name), form["host"].format(root=host))

    def outlets_in(self, year: int) -> tuple[Site, ...]:
        """The outlets publishing in `year` (the oldest one before any was founded)."""
        return tuple(o for o, (a, b) in zip(self.outlets, self.outlet_years) if a <= year and (b is None or year <= b)) \
            or self.outlets[:1]

    def profile(self, word: str) -> Site:
        if word not in self._profiles:
            ns = self.names
            name, host = self._root("profile:" + word)
            w = ns["profiles"].get(word) or ns["profile_other"] or humanise(word)
            self._profiles[word] = Site(ns["profile"].format(Root=name, Word=w), f"www.{host}{word.replace('_', '')}.com")
        return self._profiles[word]


class WorldView:
    """What rendering needs from a stored world: names, page URLs, predicate labels, and
    fact sheets per entity, loaded one entity type at a time."""

    def __init__(self, info: WorldInfo, options: RenderOptions):
        self.info = info
        self.world: ResolvedWorld = info.world
        self.options = options
        self.as_of = self.world.spec.as_of
        self.lang = self.world.spec.language
        self.lexicon = self.world.lexicon(self.lang)  # how the world names its things in its language
        self.sites = Sites(self.world.spec.seed, self.world.spec.language)
        self.relations = self.world.relations
        # Plain dicts of what page planning asks per fact (the spec's properties cost microseconds a call).
        self.types = self.world.types
        # Values with a yearly history (`changes:`): a page dated in an earlier year states that year's.
        self.changing = {t: frozenset(a for a, s in et.attributes.items()
                                      if (getattr(s, "changes", None) is not None or getattr(s, "stages", None) is not None)
                                      and not s.hidden)
                         for t, et in self.types.items()}
        self.timeless = {t: frozenset(a for a, s in et.attributes.items()
                                      if isinstance(s, (CategoricalAttr, CodeAttr, LookupAttr)) and a not in self.changing[t])
                         for t, et in self.types.items()}
        self._past: dict[str, tuple[dict, pl.Series, pl.Series]] = {}
        # Stages (`pack.Stages`): attribute -> (start date, end date, its values by stage as stored)
        self.stages = {t: {a: (s.stages.start, s.stages.end,
                               tuple(None if v is None else value_translation(self.world, t, a).get(v, v) for v in s.stage_values()))
                           for a, s in et.attributes.items() if isinstance(s, CategoricalAttr) and s.stages is not None}
                       for t, et in self.types.items()}
        # Figures a pack gives no history (a height, an elevation, an area): an old page states today's.
        self.constant = {t: frozenset(a for a, s in et.attributes.items() if isinstance(s, NumericAttr) and s.changes is None)
                         for t, et in self.types.items()}
        # Lookups that restate a link ("Nationality" via the citizenship link): prose says one of the two.
        self.echoes = {t: {a: s.via for a, s in et.attributes.items() if isinstance(s, LookupAttr) and s.attribute in ("id", "name")}
                       for t, et in self.types.items()}
        # Types whose entities can speak in a news quote: those with a birth date.
        self.person_like = {t: any("birth" in a for a in et.attributes) for t, et in self.types.items()}
        # Types a spokesperson speaks for: organisations people work, play or serve in (the target of
        # a many-to-many link from people, or holding tenures of people); not products, places or papers.
        self.has_spokesperson = {t: any(
            (rs.target == t and self.person_like.get(rs.source) and rs.cardinality == "N:M")
            or (rs.source == t and self.person_like.get(rs.target) and rs.history is not None)
            for rs in self.relations.values()) for t in self.types}
        self.con = info.connect()
        self.ids: dict[str, list[str]] = {t: self.con.sql(f"SELECT id FROM {_q(t)} ORDER BY id").pl()["id"].to_list()
                                          for t in self.types}
        self._summary_ready = False
        self._part_lists: PartLists | None = None
        self._parts_done = False
        self.meta = predicate_meta(self.world, self.lang)

    # Every entity's name, type, aliases and page URLs: loaded together, the first time one is
    # asked for (a Ray render's driver plans and merges shards without them; at a million
    # entities they take seconds and a gigabyte).
    @cached_property
    def names(self) -> dict[str, str]:
        return self._entities()["names"]

    @cached_property
    def home_of(self) -> dict[str, str]:
        """Each entity's home: the target of its first timeless to-one link (a club's city, a
        firm's headquarters, a city's country), by id; text may describe an entity by it ("the
        Heshalland club Athletic Valdel"). Timeless, so true on a page of any date. People have none."""
        # (not a person's birthplace or nationality, nor a country's capital: 'the Tamview country')
        rels = sorted(r for r, rs in self.relations.items() if rs.cardinality == "N:1" and not rs.history
                      and not self.person_like.get(rs.source))
        if not rels:
            return {}
        rows = self.con.execute(
            "SELECT subject, value FROM facts WHERE value_type = 'entity' AND valid_from IS NULL AND valid_to IS NULL "
            "AND list_contains(?, predicate) QUALIFY row_number() OVER (PARTITION BY subject ORDER BY predicate, fact_id) = 1",
            [rels]).fetchall()
        return dict(rows)

    @cached_property
    def type_of(self) -> dict[str, str]:
        return self._entities()["type_of"]

    @cached_property
    def aliases(self) -> dict[str, list[str]]:
        return self._entities()["aliases"]

    @cached_property
    def article_url(self) -> dict[str, str]:
        return self._entities()["article_url"]

    @cached_property
    def profile_url(self) -> dict[str, str]:
        return self._entities()["profile_url"]

    @cached_property
    def article_title(self) -> dict[str, str]:
        """Article titles that are not the entity's name (namesakes: 'Name (person, 1961)')."""
        return self._entities()["article_title"]

    def _entities(self) -> dict:
        """Loads the entity dicts above into the instance (where the properties find them next)."""
        d = self.__dict__
        if "_entities_loaded" not in d:
            names: dict[str, str] = {}
            type_of: dict[str, str] = {}
            frames: dict[str, pl.DataFrame] = {}
            for t, ids in self.ids.items():
                df = frames[t] = self.con.sql(f"SELECT id, name FROM {_q(t)} ORDER BY id").pl()
                names.update(zip(ids, df["name"].to_list()))
                type_of.update(dict.fromkeys(ids, t))
            al = self.con.sql("SELECT entity_id, list(alias ORDER BY alias) AS aliases FROM aliases GROUP BY entity_id").pl()
            d.update(names=names, type_of=type_of, aliases=dict(zip(al["entity_id"].to_list(), al["aliases"].to_list())))
            d["article_url"], d["profile_url"], d["article_title"] = self._entity_urls(frames)
            d["_entities_loaded"] = True
        return d

    def close(self) -> None:
        self.con.close()

    # ------------------------------------------------------------------ metadata

    def noun(self, t: str) -> str:
        """The type as a common noun in the world's language ('football player', '球员'; the lexicon's)."""
        return self.lexicon.noun(t)

    def description(self, t: str) -> str:
        """What an entity of type t is, for an article's first sentence ('a professional football
        player', '一名职业足球运动员'): the pack's `pages.description` in the language, else
        (English) the type's description, else the noun."""
        et = self.types[t]
        d = et.pages.text("description", self.lang)
        if d:
            return d.rstrip(".。")
        if self.lang == BASE and et.description:  # the pack's own words
            desc = et.description.rstrip(".")
            return desc[0].lower() + desc[1:]
        return word(self.lang, "a_noun", noun=self.noun(t))

    def _entity_urls(self, frames: dict[str, pl.DataFrame]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """Every entity's article and profile URL, a type's column at a time (`slugs`, `wiki_paths`;
        `frames`: each type's ids and names, by id); namesakes' article titles ('Name (person,
        1961)') are told apart in id order."""
        enc = self.sites.encyclopedia.domain
        names = self.__dict__["names"]
        everyone = pl.concat([f.select("name") for f in frames.values()]) if frames else pl.DataFrame({"name": []})
        clashing = set(everyone.filter(pl.len().over("name") > 1)["name"].unique().to_list())  # names of two or more entities
        article, profile, article_title = {}, {}, {}
        taken_titles: set[str] = set()
        for t, et in self.types.items():
            df = frames[t]
            ids = self.ids[t]
            namesake = df.select(pl.len().over("name") > 1).to_series()
            titles = df.select(pl.when(pl.col("name").is_in(list(clashing)))
                               .then(pl.col("name") + f" ({t.replace('_', ' ')})").otherwise(pl.col("name"))).to_series().to_list()
            if namesake.any():  # 'Name (person, 1961)', like an encyclopedia's namesake titles
                era: dict[str, str] = {}
                if et.lifecycle is not None:  # told apart by era
                    era = {i: str(y) for i, y in self.con.execute(
                        f"SELECT id, year({_q(et.lifecycle.start)}) FROM {_q(t)} WHERE {_q(et.lifecycle.start)} IS NOT NULL").fetchall()}
                sep = get_language(self.lang).comma
                for k in namesake.arg_true().to_list():
                    i, n = ids[k], names[ids[k]]
                    title = f"{n} ({self.noun(t)}{sep}{era.get(i, i[-4:])})"
                    if title in taken_titles:
                        title = f"{n} ({self.noun(t)}{sep}{i[-6:]})"
                    article_title[i] = title
                    taken_titles.add(title)
                    titles[k] = title
            article.update(zip(ids, [f"https://{enc}/wiki/{p}" for p in wiki_paths(titles)]))
            ps = et.pages.profile
            if ps is None:
                continue
            name_slugs = slugs(df["name"])
            if ps.url:
                cols = sorted({f for f in re.findall(r"{(\w+)}", ps.url) if f not in ("slug", "site")})
                rows = self.con.sql(f"SELECT id{''.join(', ' + _q(c) for c in cols)} FROM {_q(t)} ORDER BY id").fetchall()
                site = self.sites.profile(ps.site).domain
                taken: set[str] = set()
                for row, name_slug in zip(rows, name_slugs):
                    vals = {c: ("" if v is None else str(v)) for c, v in zip(cols, row[1:])}
                    url = ps.url.format(slug=name_slug, site=site, **vals)
                    # A missing or shared value would give two entities one URL: those get the profile site's.
                    if any(v == "" for v in vals.values()) or url in taken or not url.startswith(("http://", "https://")):
                        url = f"https://{site}/{slug(t)}/{name_slug}-{row[0][-6:]}"
                    taken.add(url)
                    profile[row[0]] = url
            else:
                base = f"https://{self.sites.profile(ps.site).domain}/{slug(t)}/"
                profile.update(zip(ids, [f"{base}{s}-{i[-6:]}" for s, i in zip(name_slugs, ids)]))
            for i in self.homeless.intersection(ids):  # their profile is their page
                article[i] = profile[i]
                article_title.pop(i, None)
        return article, profile, article_title

    def part_lists(self) -> PartLists | None:
        """Each entity's part, by the same chains as the tasks stage's world-level splits (so "in
        Braeria" in a question and "Companies in Braeria" on the web mean the same set); computed
        once per view; None when the world has no parts."""
        if not self._parts_done:
            self._parts_done = True
            import numpy as np

            from ..world import WorldArrays, entity_parts, former_parts, part_phrase

            a = WorldArrays(self.con, self.world)
            parts = entity_parts(a, self.world.spec.stages.tasks.part_type)
            was = former_parts(a, parts)
            if parts.root is not None:
                root_ids = a.ids[parts.root]
                of: dict[str, list[str | None]] = {}
                counts: dict[str, list[tuple[str, int]]] = {}
                declared: dict[str, str] = {}
                former: dict[str, list[str | None]] = {}
                former_counts: dict[str, list[tuple[str, int]]] = {}
                for t in self.types:
                    home = parts.home.get(t)
                    if t == parts.root or not home or not len(parts.of[t]):
                        continue
                    if len(home) == 1 and any(d.by == home[0].name for d in self.types[t].pages.directories):
                        declared[t] = home[0].name  # "Airports in X" by the airport's own country link: that list serves
                    codes = parts.of[t]
                    ids = np.where(codes >= 0, root_ids[np.maximum(codes, 0)], None)
                    of[t] = ids.tolist()
                    n = np.bincount(codes[codes >= 0], minlength=len(root_ids))
                    for c in np.flatnonzero(n):
                        counts.setdefault(str(root_ids[c]), []).append((t, int(n[c])))
                    prev = was.get(t)
                    if prev is not None and (prev >= 0).any():
                        former[t] = np.where(prev >= 0, root_ids[np.maximum(prev, 0)], None).tolist()
                        n = np.bincount(prev[prev >= 0], minlength=len(root_ids))
                        for c in np.flatnonzero(n):
                            former_counts.setdefault(str(root_ids[c]), []).append((t, int(n[c])))
                phrases = {}
                if self.lang == BASE:  # (a part's phrase is built from the pack's own English asks)
                    for t in of:
                        st = parts.home[t][0]
                        got = part_phrase(self.world, st.source, st.name, self.plural(st.target))
                        if got is not None:
                            phrases[t] = got
                self._part_lists = PartLists(parts.root, of, counts, declared, former, former_counts, phrases)
        return self._part_lists

    def part_list_columns(self, t: str) -> list[str]:
        """The columns of a per-part list, as list pages of people and firms show them: the type's
        first directory's (else its first two plain attributes), with the dates its life starts
        and ends (born and died, founded and dissolved)."""
        et = self.types[t]
        if et.pages.directories:
            cols = list(et.pages.directories[0].columns)
        else:
            cols = [a for a, s in et.attributes.items()
                    if isinstance(s, (CategoricalAttr, NumericAttr, DateAttr)) and not s.hidden][:2]
        if et.lifecycle is not None:
            cols += [a for a in (et.lifecycle.start, et.lifecycle.end) if a and a not in cols and not et.attributes[a].hidden]
        return cols

    def part_list_title(self, t: str, group_name: str, former: bool = False) -> str:
        if former:
            return word(self.lang, "former_title", plural=self.plural(t), group=group_name)
        plural_ = humanise(self.plural(t))
        pl_ = self.part_lists()
        phrase = pl_.phrases.get(t) if pl_ is not None else None
        if phrase is not None:  # "Award ceremonies won by albums from Riia", not "... in Riia"
            return f"{plural_} {phrase.format(group=group_name)}"
        return word(self.lang, "part_title", plural=plural_, group=group_name)

    def directory_url(self, t: str, by: str, group_name: str, key: str | None) -> str:
        """First page of a directory; entity groups carry the target id's tail, so equal names differ."""
        tail = f"-{key[-6:]}" if key else ""
        return f"https://{self.sites.directory.domain}/{slug(self.plural(t))}/{slug(by)}/{slug(group_name)}{tail}"

    def plural(self, t: str) -> str:
        return self.lexicon.plural(t)

    def label(self, subject_type: str, predicate: str) -> PredicateMeta:
        return self.meta[(subject_type, predicate)]

    def dtype(self, t: str, a: str) -> str:
        return attribute_dtype(self.world, t, a)

    # ------------------------------------------------------------------ where facts live

    @cached_property
    def homeless(self) -> frozenset[str]:
        """The entities without an encyclopedia article: their profile or official site is their
        page (what links name them points there), and directories and news are their other
        sources. Of the types that have both (a person, a company, a paper; not the part type or
        the smallest type), an entity keeps its article when it is much
        linked (more than `max_list_items` links of one kind point at it: a page lists them all)
        or, otherwise, with chance `article_share`, per entity id."""
        share = round(self.options.article_share * 1000)
        if share >= 1000:
            return frozenset()
        smallest = min(self.types, key=lambda x: (len(self.ids[x]), x)) if self.types else None
        kinds = [t for t, et in self.types.items() if et.pages.article and et.pages.profile is not None
                 and t != smallest and not _may_be_part_type(self, t)]
        if not kinds:
            return frozenset()
        rels = [r for r, rs in self.relations.items() if rs.target in kinds]
        linked = {v for (v,) in self.con.execute(
            "SELECT DISTINCT value FROM facts WHERE value_type = 'entity' AND list_contains(?, predicate) "
            "GROUP BY value, predicate HAVING count(*) > ?", [rels, self.options.max_list_items]).fetchall()} if rels else set()
        out = []
        for t in kinds:
            out += [e for e in self.ids[t] if e not in linked and pick(e + "/article", 1000) >= share]
        return frozenset(out)

    def notable_only(self, t: str) -> frozenset[str]:
        """The relations into type t whose lists an article of t cuts to the entities that have
        articles themselves, because the full list is elsewhere (a directory, or a page of the
        entity's profile or official site: the 'N of M' line links there); the rest are on that
        list and their own pages."""
        if not self.homeless:
            return frozenset()
        return frozenset(r for r, rs in self.relations.items() if rs.target == t and full_list_elsewhere(self.world, r))

    def off_fact(self, f: Fact) -> bool:
        """Whether the encyclopedia leaves fact f to its subject's profile (see `off_encyclopedia`),
        were that profile living: a choice by the fact's id and kind alone."""
        t = f.subject.rsplit("_", 1)[0] if f.subject else ""
        share = self.off_share.get((t, f.predicate))
        return bool(share) and pick(f.fact_id + "/spread", 100) < share

    def off_encyclopedia(self, t: str, facts: list[Fact]) -> frozenset[str]:
        """The ids of the attribute facts an entity's article leaves out, so that its profile or
        official site (and the news items) is their only source: about two figures in three, half
        the dates and nearly one category in three, chosen per fact. Names, codes and lookups (what
        identifies an entity or links it elsewhere) stay in the infobox."""
        return frozenset(f.fact_id for f in facts if self.off_fact(f))

    @cached_property
    def off_share(self) -> dict[tuple[str, str], int]:
        """Per (type, attribute) of the types with a profile page: the percent of facts the
        encyclopedia leaves to the profile."""
        out = {}
        for t, et in self.types.items():
            if et.pages.profile is None or not et.pages.article:
                continue
            for a, s in et.attributes.items():
                share = (65 if isinstance(s, NumericAttr) else 50 if isinstance(s, DateAttr)
                         else 30 if isinstance(s, CategoricalAttr) else 0)
                if share and a != "name":
                    out[(t, a)] = share
        return out

    # ------------------------------------------------------------------ fact sheets

    def grouped_facts(self, sql: str, key: str, params: list | None = None) -> dict[str, list[Fact]]:
        """The query's facts (columns in `Fact` order) by `key`, keys and rows in query order."""
        df = self.con.sql(sql, params=params).pl() if params else self.con.sql(sql).pl()
        if df.is_empty():
            return {}
        # tuple.__new__ makes each Fact from its row without a Python-level call (Fact._make is one)
        # (a query without `note`, the links' own attributes, reads as links without any)
        facts = list(map(tuple.__new__, repeat(Fact), zip(*(_shared_strings(df[c]) if c in _REPEATED else df[c].to_list()
                                                              if c in df.columns else repeat(None, df.height)
                                                              for c in Fact._fields))))
        k = df[key]
        starts = (k != k.shift(1)).fill_null(True).arg_true()
        keys = k.gather(starts).to_list()
        if len(set(keys)) == len(keys):  # each key's rows in one run (the queries sort by key)
            bounds = starts.to_list() + [len(facts)]
            return {x: facts[a:b] for x, a, b in zip(keys, bounds, bounds[1:])}
        rows = df.select(pl.col(key), pl.int_range(pl.len()).alias("_i")).group_by(key, maintain_order=True).agg("_i")
        return {x: [facts[i] for i in ii] for x, ii in rows.iter_rows()}

    def neighbour_facts(self, t: str, lo: str | None = None, hi: str | None = None, per_entity: int = 5) -> dict[str, list[Fact]]:
        """A few facts about each entity linked to type t either way (the places, makers, clubs it
        links to; the people and firms that link to it): dates, undated links and attributes that
        do not change (categories, codes, lookups); at most `per_entity` each."""
        if not self._summary_ready:
            timeless = sorted(set().union(*self.timeless.values()))
            # Once per view: every entity's few summary facts, in a temporary table.
            self.con.execute(
                "CREATE OR REPLACE TEMP TABLE wf_summary AS SELECT fact_id, subject, predicate, value, value_type, "
                "valid_from, valid_to, note FROM (SELECT *, row_number() OVER (PARTITION BY subject ORDER BY value_type = 'entity', "
                "predicate, fact_id) AS k FROM facts WHERE value_type = 'date' OR (value_type = 'entity' AND valid_from IS NULL) "
                f"OR list_contains(?, predicate)) WHERE k <= {int(per_entity)}", [timeless])
            if self.homeless:
                self.con.execute("CREATE OR REPLACE TEMP TABLE wf_homeless AS SELECT unnest(?::VARCHAR[]) AS id",
                                 [sorted(self.homeless)])
            else:
                self.con.execute("CREATE OR REPLACE TEMP TABLE wf_homeless (id VARCHAR)")
            self._summary_ready = True
        inc = [r for r, rs in self.relations.items() if rs.target == t]
        cut = sorted(self.notable_only(t))  # lists that show only entities with articles
        lo = lo if lo is not None else ""
        hi = hi if hi is not None else "\U0010ffff"
        # Of the entities linking in, only those an article lists: `_cap` keeps the latest
        # max_list_items per predicate (by valid_from, undated first, then fact id), and a
        # city with thousands of residents would otherwise fetch every resident's facts.
        return self.grouped_facts(  # entities ids lo..hi of type t (all of them by default)
            "WITH n AS (SELECT value AS id FROM facts WHERE subject_type = ? AND value_type = 'entity' AND subject BETWEEN ? AND ? "
            "UNION SELECT subject FROM (SELECT subject, row_number() OVER (PARTITION BY value, predicate "
            "ORDER BY valid_from DESC NULLS LAST, fact_id DESC) AS r FROM facts WHERE value_type = 'entity' "
            "AND list_contains(?, predicate) AND value BETWEEN ? AND ? "
            "AND NOT (list_contains(?, predicate) AND subject IN (SELECT id FROM wf_homeless))) WHERE r <= ?) "
            "SELECT s.* FROM wf_summary s SEMI JOIN n ON s.subject = n.id ORDER BY s.subject, s.predicate, s.fact_id",
            "subject", [t, lo, hi, inc, lo, hi, cut, self.options.max_list_items])

    def has_history(self, t: str, subject: str, predicate: str) -> bool:
        """Whether the world holds earlier years of this value (not for an entity whose life has
        ended, nor in a world planned before values had histories)."""
        return (subject, predicate) in self._past_of(t)[0]

    def past_fact(self, t: str, subject: str, predicate: str, year: int) -> Fact | None:
        """A changing value as it stood in an earlier `year` (its fact id '<id>/<attribute>@<year>'),
        None outside its history."""
        index, values, kinds = self._past_of(t)
        got = index.get((subject, predicate))
        if got is None or not 0 <= year - got[1] < got[2]:
            return None
        row = got[0] + year - got[1]  # a history's years are consecutive, first to the year before as_of
        return Fact(f"{subject}/{predicate}@{year}", subject, predicate, values[row], kinds[row], None, None)

    def _past_of(self, t: str) -> tuple[dict, pl.Series, pl.Series]:
        """A type's histories: (subject, attribute) -> (first row, first year, years), and the
        values and value types by row, kept in Arrow columns (a million people's occupations
        would be gigabytes as Python objects)."""
        got = self._past.get(t)
        if got is None:
            has = self.changing[t] and self.con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_name = 'past_facts'").fetchall()[0][0]
            df = self.con.sql("SELECT subject, predicate, year, value, value_type FROM past_facts WHERE subject_type = ? "
                              "ORDER BY subject, predicate, year", params=[t]).pl() if has else None
            if df is None or df.is_empty():
                got = ({}, pl.Series([], dtype=pl.String), pl.Series([], dtype=pl.String))
            else:
                heads = df.with_row_index("row").group_by(["subject", "predicate"], maintain_order=True).agg(
                    pl.col("row").first(), pl.col("year").first(), pl.len())
                got = ({(s_, p_): (r, y, n) for s_, p_, r, y, n in heads.iter_rows()}, df["value"], df["value_type"])
            self._past[t] = got
        return got

    def facts_of_type(self, t: str) -> tuple[dict[str, list[Fact]], dict[str, list[Fact]]]:
        """(attribute and outgoing facts by subject, incoming relation facts by target) for type t."""
        own = self.grouped_facts(
            f"SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM facts "
            f"WHERE subject_type = '{t}' ORDER BY subject, predicate, valid_from NULLS FIRST, value", "subject")
        inc_rels = [r for r, rs in self.relations.items() if rs.target == t]
        incoming: dict[str, list[Fact]] = {}
        if inc_rels:
            preds = ", ".join(f"'{r}'" for r in inc_rels)
            incoming = self.grouped_facts(
                f"SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM facts "
                f"WHERE value_type = 'entity' AND predicate IN ({preds}) ORDER BY value, predicate, valid_from NULLS FIRST, subject",
                "value")
        return own, incoming


_REPEATED = frozenset(("subject", "predicate", "value", "value_type"))  # columns whose values repeat across facts


def _shared_strings(col: pl.Series) -> list:
    """A string column as a list in which equal values are one Python string: a shard's fact
    sheets hold millions of facts whose subject, predicate and kind repeat, and a string per
    row would hold them as many times over. (Interning: a dict lookup a row, two to three times
    faster than mapping a dense rank to the distinct values.)"""
    if col.null_count():
        return col.to_list()
    return list(map(sys.intern, col.to_list()))


# --------------------------------------------------------------------------- planning


def _cap(facts: list[Fact], n: int) -> list[Fact]:
    """At most n facts per predicate (the latest by date), so no page grows without bound."""
    counts: Counter = Counter(f.predicate for f in facts)
    if all(c <= n for c in counts.values()):
        return facts
    keep: list[Fact] = []
    by_pred: dict[str, list[Fact]] = {}
    for f in facts:
        by_pred.setdefault(f.predicate, []).append(f)
    for fs in by_pred.values():
        if len(fs) > n:
            fs = sorted(fs, key=lambda f: (f.valid_from or dt.date.min, f.fact_id), reverse=True)[:n]
            fs.sort(key=lambda f: (f.valid_from or dt.date.min, f.fact_id))
        keep.extend(fs)
    return keep


def news_predicates(view: WorldView, t: str) -> set[str]:
    """Predicates of type t whose facts get a news item: event attributes and dated relations,
    narrowed by the pack's `pages.news`."""
    et = view.types[t]
    events = {a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event}
    dated = {r for r, rs in view.relations.items() if rs.source == t and (rs.history or rs.date or rs.since)}
    return events | dated if et.pages.news is None else (events | dated) & set(et.pages.news)


def plan_pages(view: WorldView) -> Iterator[Page]:
    """Every page of the world, in a fixed order (`shards.py` cuts the same plan into shards)."""
    seen_urls: set[str] = set()
    for t, et in view.types.items():
        own, incoming = view.facts_of_type(t)
        neigh = view.neighbour_facts(t)
        yield from entity_pages(view, t, view.ids[t], own, incoming, neigh, seen_urls)
        for d in et.pages.directories:
            yield from directory_pages(view, t, d, own)
        yield from part_directory_pages(view, t, own)
        yield from part_directory_pages(view, t, own, former=True)
        yield from part_index_pages(view, t, own)


def entity_pages(view: WorldView, t: str, ids: list[str], own: dict[str, list[Fact]], incoming: dict[str, list[Fact]],
                 neigh: dict[str, list[Fact]], seen_urls: set[str]) -> Iterator[Page]:
    """The articles, profiles, news items and full lists of entities `ids` of type t, given their
    own facts and incoming links (news items also their neighbours' summary facts)."""
    opts = view.options
    et = view.types[t]
    ps = et.pages
    news = news_predicates(view, t)
    context = [a for a, s in et.attributes.items() if view.dtype(t, a) == "string" and not isinstance(s, NumericAttr)][:2]
    homeless = view.homeless
    in_dirs = view.notable_only(t)
    for eid in ids:
        facts = own.get(eid, [])
        attr_facts = [f for f in facts if not view.meta[(t, f.predicate)].relation]
        out_facts = _cap([f for f in facts if view.meta[(t, f.predicate)].relation], opts.max_list_items)
        all_in = incoming.get(eid, [])
        home = eid in homeless  # no article: the profile is the entity's page
        article = ps.article and not home
        shown_in = [f for f in all_in if f.subject not in homeless or f.predicate not in in_dirs] if in_dirs and article else all_in
        in_facts = _cap(shown_in, opts.max_list_items)
        name = view.names[eid]
        archive = _archive(view, t, eid, attr_facts + out_facts, in_facts, context) if article else None
        # Three in five profiles of entities that changed lately were last updated on the archive's date:
        # they state the entity as it stood then (an old club, no later dates), dated by their by-line.
        stale = archive is not None and ps.profile is not None and pick(eid + "/stale-profile", 5) < 3
        # The encyclopedia leaves some facts to the entity's own profile or official site (a living
        # one states them all): those are on the profile and the news items, not the article.
        # A stale profile states some as they were (an older figure, no later date): the article keeps those.
        off = view.off_encyclopedia(t, attr_facts) if ps.profile is not None else frozenset()
        if stale and off:  # left to it only what it states as it is today, never a value that changes
            then_ids = {f.fact_id for f in archive[1]}
            off = frozenset(f.fact_id for f in attr_facts
                            if f.fact_id in off and f.fact_id in then_ids and f.predicate not in view.changing[t])
        if off and eid in view.article_title and et.lifecycle is not None:  # 'Name (person, 1961)' keeps its year's date
            off = off - {f.fact_id for f in attr_facts if f.predicate == et.lifecycle.start}
        stories = [_news_page(view, t, eid, f, facts, context, seen_urls, neigh) for f in facts
                   if f.predicate in news and (f.value_type == "date" or f.valid_from is not None)]
        report = _figures_page(view, t, eid, attr_facts, facts, context, seen_urls) if view.changing[t] else None
        if report is not None:
            stories.append(report)
        more: dict = {}
        if article:
            if len(in_facts) < len(all_in):  # the rest is on the directory pages, if the source type has one
                shown = Counter(f.predicate for f in in_facts)
                for pred, n in Counter(f.predicate for f in all_in).items():
                    if n > shown[pred]:
                        src = view.relations[pred].source
                        listed = any(d.by == pred for d in view.types[src].pages.directories)
                        more[pred] = (n, view.directory_url(src, pred, name, eid) if listed else overflow_url(view, eid, pred))
            lists = _part_lists_of(view, t, eid)
            furniture = {n for *_, n in lists} | ({opts.max_list_items, *(n for n, _ in more.values())} if more else set())
            capture = archive  # the article's capture leaves out what the live article does
            if off and archive is not None:
                capture = (archive[0], [f for f in archive[1] if f.fact_id not in off])
            shown = [f for f in attr_facts if f.fact_id not in off] if off else attr_facts
            layout = {"more": more, "lists": lists,
                      "refs": [(s.url, s.title, s.site, s.date) for s in stories]}
            if ps.profile is not None:
                layout["external"] = (view.profile_url[eid], bool(ps.profile.url), own_site(view, t, eid))
            yield Page(view.article_url[eid], "article", view.sites.encyclopedia.name, view.article_title.get(eid, name), None, eid,
                       _entities(eid, out_facts, in_facts), shown + out_facts + in_facts,
                       layout, tuple(sorted(furniture)), capture)
        if home:  # the entity's one page: all it is and links to, and (few: see `homeless`) all that link to it
            yield Page(view.profile_url[eid], "profile", own_site(view, t, eid), name, None, eid, _entities(eid, out_facts, in_facts),
                       attr_facts + out_facts + in_facts, {"home": True})
        elif ps.profile is not None:
            site = own_site(view, t, eid)  # an official site is the entity's own
            day, then = archive if stale else (None, facts)
            then = [f for f in then if f.subject == eid]  # the archive also holds links into the entity
            then_attrs = [f for f in then if not view.meta[(t, f.predicate)].relation] if stale else attr_facts
            then_links = [f for f in then if view.meta[(t, f.predicate)].relation] if stale else out_facts
            prof = [f for f in then_links if view.meta[(t, f.predicate)].to_one
                    or (view.meta[(t, f.predicate)].temporal and f.valid_to is None and f.valid_from is not None
                        and view.relations[f.predicate].history is not None)]
            yield Page(view.profile_url[eid], "profile", site, name, day, eid, _entities(eid, prof, []), then_attrs + prof)
        if article and more:
            yield from _overflow_pages(view, eid, all_in, more)
        yield from stories


def _part_lists_of(view: WorldView, t: str, eid: str) -> list[tuple[str, str, int]]:
    """A part's article links its per-part lists: (title, first page URL, entities listed)."""
    pl_ = view.part_lists() if _may_be_part_type(view, t) else None
    if pl_ is None or pl_.root != t:
        return []
    name = view.names[eid]
    out = [(part_index_title(view, t), view.directory_url(t, "all", "list", None), len(view.ids[t]))]
    former = dict(pl_.former_counts.get(eid, []))
    for u, n in pl_.counts.get(eid, []):
        d = next((d for d in view.types[u].pages.directories if d.by == pl_.declared[u]), None) if u in pl_.declared else None
        title = d.text("title", view.lang).replace("{group}", name) if d is not None else view.part_list_title(u, name)
        out.append((title, view.directory_url(u, d.by if d is not None else pl_.by, name, eid), n))
        if u in former and u not in pl_.declared:
            out.append((view.part_list_title(u, name, former=True), view.directory_url(u, pl_.former_by, name, eid), former.pop(u)))
    out += [(view.part_list_title(u, name, former=True), view.directory_url(u, pl_.former_by, name, eid), n)
            for u, n in former.items() if u not in pl_.declared]
    return out


def _may_be_part_type(view: WorldView, t: str) -> bool:
    """Whether t can be the part type (`world.parts`: the configured one, else a type at the top
    of a `parent` tree), so parts are computed only where they can matter."""
    pt = view.world.spec.stages.tasks.part_type
    if pt is not None:
        return t == pt
    types = view.types
    return types[t].parent is None and any(et.parent and et.parent.type == t for et in types.values())


def _entities(eid: str, out_facts: list[Fact], in_facts: list[Fact]) -> tuple[str, ...]:
    ids = dict.fromkeys([eid])
    ids.update(dict.fromkeys(f.value for f in out_facts))
    ids.update(dict.fromkeys(f.subject for f in in_facts))
    return tuple(ids)


def overflow_url(view: WorldView, eid: str, pred: str) -> str:
    """The full list of an entity's incoming links of one kind, when no directory lists them: on
    its profile or official site (a city's people, a company's staff), else the encyclopedia's;
    shaped like a directory's address (listed type, grouping link, the entity)."""
    own = view.profile_url.get(eid)
    host = own.split("/")[2] if own else view.sites.encyclopedia.domain
    src = view.relations[pred].source
    return f"https://{host}/{slug(view.plural(src))}/{slug(pred)}/{slug(view.names[eid])}-{eid[-6:]}"


def full_list_elsewhere(world: ResolvedWorld, rel: str) -> bool:
    """Whether the full list of the entities linking to one through `rel` is off the encyclopedia:
    a directory of the linking type, or a page of the target's profile or official site."""
    rs = world.relations[rel]
    return world.types[rs.target].pages.profile is not None or any(d.by == rel for d in world.types[rs.source].pages.directories)


def own_site(view: WorldView, t: str, eid: str) -> str:
    """The site an entity's profile is on: its official site (named as the entity), else its
    type's profile site; the encyclopedia for a type without profiles."""
    ps = view.types[t].pages.profile
    if ps is None:
        return view.sites.encyclopedia.name
    return view.names[eid] if ps.url else view.sites.profile(ps.site).name


def _overflow_pages(view: WorldView, eid: str, all_in: list[Fact], more: dict) -> Iterator[Page]:
    """Paginated full lists behind an article's 'N of M shown' sections that no directory covers."""
    size = 20
    for pred, (_total, url) in sorted(more.items()):
        if url != overflow_url(view, eid, pred):
            continue
        src = view.relations[pred].source
        rows = sorted((f for f in all_in if f.predicate == pred),
                      key=lambda f: (view.names[f.subject], f.valid_from or dt.date.min, f.fact_id))
        n_pages = -(-len(rows) // size)
        urls = [url if i == 0 else f"{url}?page={i + 1}" for i in range(n_pages)]
        label = view.meta[(src, pred)].inverse_label
        title = word(view.lang, "list_title", subject=view.names[eid], label=label)
        for p in range(n_pages):
            chunk = rows[p * size:(p + 1) * size]
            yield Page(urls[p], "directory", own_site(view, view.type_of[eid], eid),
                       title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages), None, None,
                       tuple(dict.fromkeys([eid, *(f.subject for f in chunk)])), list(chunk),
                       {"rows": [(f.subject, f, []) for f in chunk], "columns": [], "by": pred, "type": src,
                        "group": view.names[eid], "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                        "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * size + 1, "urls": urls},
                       tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))


def _archive(view: WorldView, t: str, eid: str, own: list[Fact], incoming: list[Fact],
             context: list[str]) -> tuple[dt.date, list[Fact]] | None:
    """An earlier capture of an article: a date one to eight years before as_of (after the
    entity's first dated fact), and the facts as they stood on it. Links that ended later are
    shown as ongoing then; links and dates from after it are absent. None when nothing about the
    entity changed since that date (an archive would be the live page)."""
    dates = [f.valid_from or dt.date.fromisoformat(f.value) for f in own if f.valid_from or f.value_type == "date"]
    if not dates:
        return None
    years = 1 + pick(eid + "/archive", 8)
    try:
        captured = view.as_of.replace(year=view.as_of.year - years) - dt.timedelta(days=pick(eid + "/archive-day", 300))
    except ValueError:
        return None
    if captured <= min(dates) + dt.timedelta(days=365):
        return None
    changed = any((f.valid_from and f.valid_from > captured) or (f.valid_to and captured < f.valid_to <= view.as_of)
                  or (f.value_type == "date" and dt.date.fromisoformat(f.value) > captured) for f in own + incoming)
    changed = changed or any(  # a figure of another year (an entity whose life has ended has none)
        f.predicate in view.changing[t] and (p := view.past_fact(t, eid, f.predicate, captured.year)) is not None
        and p.value != f.value for f in own)
    if not changed:
        return None
    then = facts_at(view, t, own, captured, context)
    then += [f for f in incoming if f.valid_from is not None and f.valid_from <= captured
             and (f.valid_to is None or f.valid_to >= captured)]
    then = [f._replace(valid_to=None) if f.valid_to and f.valid_to > captured else f for f in then]
    return captured, then


def stage_on(stage: tuple, facts: list[Fact], day: dt.date) -> str | None:
    """The stage an entity was in on `day`, from its start and end dates among `facts`
    (`WorldView.stages`): finished once it ended, under way once begun, else planned."""
    start, end, (before, during, after) = stage
    got = {f.predicate: dt.date.fromisoformat(f.value) for f in facts if f.predicate in (start, end) and f.value_type == "date"}
    if end in got and got[end] <= day:
        return after
    return during if start in got and got[start] <= day or before is None else before


def _stage_holds(view: WorldView, t: str, f: Fact, facts: list[Fact], day: dt.date) -> bool:
    """Whether a page dated `day` may state `f`: any value but a stage's, and a stage's only
    where the entity was in it on that day (its history is by mid-year: in a year the stage
    changed, a page from the other side of the change leaves it out)."""
    stage = view.stages[t].get(f.predicate)
    return stage is None or f.value == stage_on(stage, facts, day)


def facts_at(view: WorldView, t: str, facts: list[Fact], day: dt.date, context: list[str]) -> list[Fact]:
    """The facts about an entity that a page dated `day` may state: dates up to that day, links
    that held on that day (their end, if any, lies in the page's future and is not stated), and
    undated attributes only when they cannot have changed (categories, the page's context
    attributes, figures without a history) or the page is recent (within a year of the world's
    as_of); a figure with a yearly history as it stood in the page's year."""
    recent = (view.as_of - day).days <= 365
    out = []
    for f in facts:
        m = view.meta[(t, f.predicate)]
        if m.relation:
            if f.valid_from is not None and f.valid_from <= day:  # ongoing then, or already over (its end is past too)
                out.append(f)
            elif f.valid_from is None and recent:
                out.append(f)
        elif f.value_type == "date":
            if dt.date.fromisoformat(f.value) <= day:
                out.append(f)
        elif f.predicate in view.changing[t] and view.has_history(t, f.subject, f.predicate):
            # that year's value (today's fact if it has not changed since)
            then = f if day.year >= view.as_of.year else view.past_fact(t, f.subject, f.predicate, day.year)
            if then is not None and _stage_holds(view, t, then, facts, day):
                out.append(f if then.value == f.value else then)
        elif f.predicate in view.changing[t]:  # no history (its life has ended): its last value, on recent pages
            if recent and _stage_holds(view, t, f, facts, day):
                out.append(f)
        elif f.predicate != "name" and (recent or f.predicate in view.timeless[t] or f.predicate in view.constant[t]):
            out.append(f)
    return out


def _news_page(view: WorldView, t: str, eid: str, event: Fact, facts: list[Fact], context: list[str], seen: set[str],
               neigh: dict[str, list[Fact]]) -> Page:
    when = event.valid_from or dt.date.fromisoformat(event.value)
    lag = pick(event.fact_id + "/lag", view.options.news_lag_days + 1)
    published = min(when + dt.timedelta(days=lag), view.as_of)
    alive = view.sites.outlets_in(published.year)
    outlet = alive[pick(event.fact_id + "/outlet", len(alive))]
    meta = view.meta[(t, event.predicate)]
    name = view.names[eid]
    fields = {"subject": name}
    if meta.relation:
        fields |= {"object": view.names[event.value], "start": str(when.year)}
        default = word(view.lang, "headline_link", subject=name, object=view.names[event.value], label=meta.label.lower())
    else:
        fields |= {"value": str(when.year)}
        default = word(view.lang, "headline_attr", subject=name, label=meta.label.lower())
    # Published when the event happens, so a headline never mentions a tenure's end.
    options = [h for h in meta.headlines if "{end}" not in h]
    headline = options[pick(event.fact_id + "/headline", len(options))].format(**fields) if options else default
    url = _story_url(outlet.domain, published, headline, seen)
    # Background as it stood on the publication day: never a fact from the page's future.
    ctx = [f for f in facts_at(view, t, facts, published, context) if f.fact_id != event.fact_id]
    # a paper gives the subject's figures and standing of the day ('the company, which employs 5,400 people')
    figures = [f for f in ctx if f.predicate in view.changing[t]]
    ctx = figures + sorted((f for f in ctx if f not in figures), key=lambda f: pick(url + f.fact_id, 1 << 30))[:max(0, 14 - len(figures))]
    ctx.sort(key=lambda f: f.fact_id)
    if event.value_type == "entity":  # what the other party was on that day
        other = view.type_of[event.value]
        ctx += [f for f in facts_at(view, other, neigh.get(event.value, []), published, []) if f.value != eid][:6]
    # (Not the places and firms the subject links to: their infobox facts in a story about
    # something else were padding, issue 37.) A link is said once, not again as its lookup
    # ("is a citizen of X", not also "has a nationality of X").
    # The subject's standing facts (nationality, birthplace, birth date, height) are background a
    # paper gives in one story in three, not in every one.
    et = view.types[t]
    start = et.lifecycle.start if et.lifecycle is not None else None
    ctx = [f for f in ctx if f.subject != eid or not (f.predicate in view.timeless[t] or f.predicate == start
                                                      or (f.value_type == "entity" and f.valid_from is None))
           or pick(url + "/bg/" + f.fact_id, 3) == 0]
    stated = {(f.subject, f.predicate) for f in ctx} | {(eid, event.predicate)}
    ctx = [f for f in ctx if (f.subject, view.echoes[view.type_of[f.subject]].get(f.predicate)) not in stated]
    ids = dict.fromkeys([eid] + ([event.value] if event.value_type == "entity" else []))
    speaker = None
    if view.person_like[t]:
        speaker = eid
    else:
        for f in [event, *ctx]:
            if f.value_type == "entity" and view.person_like[view.type_of[f.value]]:
                speaker = f.value
                break
    ids.update(dict.fromkeys(f.value for f in ctx if f.value_type == "entity"))
    return Page(url, "news", outlet.name, headline, published, eid, tuple(ids), [event, *ctx],
                {"event": event.fact_id, "speaker": speaker})


def _story_url(domain: str, day: dt.date, headline: str, seen: set[str]) -> str:
    """A news item's address, `https://<outlet>/YYYY/MM/DD/<headline>`, made unique among `seen`
    ('-2', '-3' after a headline the outlet ran that day already), and added to it."""
    base = f"https://{domain}/{day:%Y/%m/%d}/{slug(headline)[:80]}"
    url, k = base, 2
    while url in seen:
        url, k = f"{base}-{k}", k + 1
    seen.add(url)
    return url


def _figures_page(view: WorldView, t: str, eid: str, attr_facts: list[Fact], facts: list[Fact], context: list[str],
                  seen: set[str]) -> Page | None:
    """A paper's yearly figures about an entity whose figures have a history (a city's census, a
    company's annual results, an airport's passengers): dated in one of the last twelve years
    (of the last three for an entity whose history is younger), it states that year's figures,
    which later years changed, so an old report and the live pages disagree, each dated. Only
    the figures the type's `pages.news` lists, when it lists; None for an entity without such a
    figure's history."""
    listed = view.types[t].pages.news
    figs = [f for f in attr_facts if f.predicate in view.changing[t] and f.value_type in ("int", "float")
            and (listed is None or f.predicate in listed) and view.has_history(t, eid, f.predicate)]
    if not figs:
        return None
    then: list[Fact] = []
    for back in (1 + pick(eid + "/report", 12), 1 + pick(eid + "/report-late", 3)):  # a young entity's: lately
        year = view.as_of.year - back
        day = dt.date(year, 1 + pick(eid + "/report-month", 12), 1 + pick(eid + "/report-day", 28))
        then = facts_at(view, t, figs, day, [])
        if then:
            break
    if not then:
        return None  # the entity's history starts later
    alive = view.sites.outlets_in(day.year)
    outlet = alive[pick(eid + "/report-outlet", len(alive))]
    name = view.names[eid]
    options = bank(view.lang)["headline_figures"]
    headline = options[pick(eid + "/report-headline", len(options))].format(subject=name, year=year)
    url = _story_url(outlet.domain, day, headline, seen)
    then.sort(key=lambda f: f.fact_id)
    # and what else a paper says of it that day: its other changing values (a city's mayor), its standing
    told = {f.predicate for f in then}
    ctx = [f for f in facts_at(view, t, facts, day, context)
           if f.subject == eid and f.predicate not in told and not view.meta[(t, f.predicate)].relation]
    ctx = sorted(ctx, key=lambda f: (f.predicate not in view.changing[t], pick(url + f.fact_id, 1 << 30)))[:2]  # a mayor of the day first
    ctx.sort(key=lambda f: f.fact_id)
    return Page(url, "news", outlet.name, headline, day, eid, (eid,), [*then, *ctx],
                {"event": then[0].fact_id, "speaker": None, "figures": year})


def part_directory_pages(view: WorldView, t: str, own: dict[str, list[Fact]], former: bool = False) -> Iterator[Page]:
    """The per-part lists of a type ("Companies in Braeria"): every entity of the type whose chain
    of to-one links leads to the part, by name, `PART_PAGE_SIZE` rows a page, with the columns of
    the type's first directory. A question scoped to a part ("companies in Braeria") has a list to
    start from, as "List of companies of X" pages do on the real web. `former`: the entities that
    were in the part when their chain ended (a dissolved company), in lists of their own."""
    pl_ = view.part_lists()
    members = (pl_.former if former else pl_.of) if pl_ is not None else {}
    if pl_ is None or t not in members or t in pl_.declared:
        return
    groups: dict[str, list[str]] = {}
    for eid, part in zip(view.ids[t], members[t]):
        if part is not None:
            groups.setdefault(part, []).append(eid)
    columns = view.part_list_columns(t)
    for key in sorted(groups, key=lambda k: (view.names[k], k)):
        group_name = view.names[key]
        base = view.directory_url(t, pl_.former_by if former else pl_.by, group_name, key)
        yield from _list_pages(view, t, groups[key], own, columns, view.part_list_title(t, group_name, former), base,
                               {"part": pl_.root, "group": group_name}, first=key)


def part_index_pages(view: WorldView, t: str, own: dict[str, list[Fact]]) -> Iterator[Page]:
    """The list of every part ("List of countries"), by name, with the part type's directory
    columns: where a question about countries by their capital or government starts."""
    pl_ = view.part_lists()
    if pl_ is None or t != pl_.root:
        return
    title = part_index_title(view, t)
    yield from _list_pages(view, t, view.ids[t], own, view.part_list_columns(t), title,
                           view.directory_url(t, "all", "list", None), {"part": t, "index": True, "group": title})


def part_index_title(view: WorldView, t: str) -> str:
    return word(view.lang, "all_title", plural=view.plural(t))


def _list_pages(view: WorldView, t: str, members: list[str], own: dict[str, list[Fact]], columns: list[str], title: str,
                base: str, layout: dict, first: str | None = None) -> Iterator[Page]:
    """A list of entities by name, `PART_PAGE_SIZE` a page, with their `columns` (from `own`, their
    facts), numbered page links and previous/next; `first`: the entity the list is about, named
    first among the page's entities (a country for its list of companies)."""
    rows = sorted(members, key=lambda e: (view.names[e], e))
    size = PART_PAGE_SIZE
    n_pages = max(1, -(-len(rows) // size))
    urls = [base if i == 0 else f"{base}?page={i + 1}" for i in range(n_pages)]
    for p in range(n_pages):
        chunk = rows[p * size:(p + 1) * size]
        facts: list[Fact] = []
        table = []
        for eid in chunk:
            cols = [c for c in own.get(eid, []) if c.predicate in columns]
            facts.extend(cols)
            table.append((eid, None, cols))
        yield Page(urls[p], "directory", view.sites.directory.name, title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages),
                   None, None, tuple(dict.fromkeys([first, *chunk] if first else chunk)), facts,
                   {"rows": table, "columns": columns, "by": None, "type": t, **layout,
                    "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                    "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * size + 1, "urls": urls},
                   tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))


def page_links(page: int, pages: int) -> list[int]:
    """The page numbers a paginated list links to from page `page`: all of them when few, else the
    first, the last and the `NAV_LINKS` nearest."""
    if pages <= NAV_LINKS + 1:
        return list(range(1, pages + 1))
    lo = max(1, min(page - NAV_LINKS // 2, pages - NAV_LINKS + 1))
    return sorted({1, pages, *range(lo, lo + NAV_LINKS)})


def directory_pages(view: WorldView, t: str, d, own: dict[str, list[Fact]]) -> Iterator[Page]:
    """Group a type's entities by a relation target or attribute value; page_size rows per page."""
    groups: dict[str, list[tuple[str, Fact]]] = {}
    for eid in view.ids[t]:
        for f in own.get(eid, []):
            if f.predicate == d.by:
                groups.setdefault(f.value, []).append((eid, f))
    columns = set(d.columns)
    site = view.sites.directory
    slugs = Counter(slug(k) for k in groups)
    for key in sorted(groups, key=lambda k: (view.names.get(k, k), k)):
        rows = sorted(groups[key], key=lambda r: (view.names[r[0]], r[1].valid_from or dt.date.min, r[1].fact_id))
        entity_group = groups[key][0][1].value_type == "entity"
        group_name = view.names[key] if entity_group else key
        title = d.text("title", view.lang).replace("{group}", group_name)
        n_pages = -(-len(rows) // d.page_size)
        base = view.directory_url(t, d.by, group_name, key if entity_group else None)
        if not entity_group and slugs[slug(key)] > 1:  # values that differ only in punctuation
            base += f"-{zlib.crc32(key.encode()):08x}"
        urls = [base if i == 0 else f"{base}?page={i + 1}" for i in range(n_pages)]
        for p in range(n_pages):
            chunk = rows[p * d.page_size:(p + 1) * d.page_size]
            facts: list[Fact] = []
            table = []
            for eid, f in chunk:
                cols = [c for c in own.get(eid, []) if c.predicate in columns]
                facts.append(f)
                facts.extend(cols)
                table.append((eid, f, cols))
            ids = dict.fromkeys([key] if groups[key][0][1].value_type == "entity" else [])
            ids.update(dict.fromkeys(eid for eid, _ in chunk))
            yield Page(urls[p], "directory", site.name, title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages),
                       None, None, tuple(ids), facts,
                       {"rows": table, "columns": list(d.columns), "by": d.by, "type": t, "group": group_name,
                        "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                        "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * d.page_size + 1, "urls": urls},
                       tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))

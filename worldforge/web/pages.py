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
from .grammar import word
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
                 and t != smallest and not may_be_part_type(self, t)]
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
        # Of the entities linking in, only those an article lists: `cap_facts` keeps the latest
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


def cap_facts(facts: list[Fact], n: int) -> list[Fact]:
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


def may_be_part_type(view: WorldView, t: str) -> bool:
    """Whether t can be the part type (`world.parts`: the configured one, else a type at the top
    of a `parent` tree), so parts are computed only where they can matter."""
    pt = view.world.spec.stages.tasks.part_type
    if pt is not None:
        return t == pt
    types = view.types
    return types[t].parent is None and any(et.parent and et.parent.type == t for et in types.values())


def linked_entities(eid: str, out_facts: list[Fact], in_facts: list[Fact]) -> tuple[str, ...]:
    ids = dict.fromkeys([eid])
    ids.update(dict.fromkeys(f.value for f in out_facts))
    ids.update(dict.fromkeys(f.subject for f in in_facts))
    return tuple(ids)


def full_list_elsewhere(world: ResolvedWorld, rel: str) -> bool:
    """Whether the full list of the entities linking to one through `rel` is off the encyclopedia:
    a directory of the linking type, or a page of the target's profile or official site."""
    rs = world.relations[rel]
    return world.types[rs.target].pages.profile is not None or any(d.by == rel for d in world.types[rs.source].pages.directories)

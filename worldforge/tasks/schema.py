"""What task generation needs to know about a world: which hops lead from a type to
another, which attributes can be constrained or shown, how to name them in a question and
in a column header, and how to turn a constraint or a column into SQL over the world store.

A hop (`Step`) is a relation link (source to target), its reverse, or an entity-valued
lookup attribute (`city.country`). Relations with a `since:` date (headquarters) count only
the current link; tenure relations (chief executives, clubs) count any link, past or present.

Column headers come from a small naming grammar rather than concatenated labels: an
attribute's noun ("founding date" for a `Founded` label), a link's noun ("headquarters",
"home country" from the pack's `noun:`), and "<attribute> of <link>" for a linked entity's
attribute ("population of headquarters"), with the unit last ("area of country (km²)").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from ..language import BASE, Language
from ..language import get as get_language
from ..plumbing import quote_ident as _q
from ..web import phrase_label, predicate_meta
from ..world import CategoricalAttr, DateAttr, DerivedAttr, Lexicon, NumericAttr, Step, WorldArrays, lookup_target, note_sql, world_hops
from .banks import question_bank

# Value kinds of a column or a constrained attribute, and WideSearch's pipeline for each.
STRING, NUMBER, DATE, URL, LIST = "string", "number", "date", "url", "list"
LIST_SEPARATOR = "; "

__all__ = ["Atom", "Column", "DATE", "LIST", "NUMBER", "STRING", "Step", "TaskSchema", "URL", "eval_entry", "list_criterion", "lit",
           "rel_fact_sql", "walk"]


def eval_entry(kind: str, tolerance: float, *, exact: bool = False, items: str = "items", language: str = "en") -> dict:
    """A column's WideSearch `eval_pipeline` entry. Lists are judged as WideSearch judges free
    text, by `llm_judge` with a criterion in the task's language, and carry `llm_free:
    set_match`: the deterministic metric worldforge's scorer applies instead (the same set of
    items, in any order)."""
    if kind == NUMBER:
        return {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.0 if exact else tolerance}
    if kind == DATE:
        return {"preprocess": ["norm_date"], "metric": ["date_near"]}
    if kind == URL:
        return {"preprocess": [], "metric": ["url_match"]}
    if kind == LIST:
        return {"preprocess": [], "metric": ["llm_judge"], "llm_free": "set_match", "criterion": list_criterion(items, language)}
    return {"preprocess": ["norm_str"], "metric": ["exact_match"]}


def list_criterion(items: str, language: str = "en") -> str:
    """The grading criterion of a list column, for WideSearch's LLM judge, in the task's language."""
    return question_bank(language)["list_criterion"].format(items=items)


def rel_fact_sql(alias: str, relation: str) -> str:
    """A relation link's fact id, exactly as the store's `facts` view writes it."""
    return (f"{alias}.source || '/{relation}/' || {alias}.target || "
            f"coalesce('@' || strftime({alias}.valid_from, '%Y-%m-%d'), '')")


def lit(v) -> str:
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(float(v)) if isinstance(v, (float, np.floating)) and not float(v).is_integer() else str(int(v))
    return "'" + str(v).replace("'", "''") + "'"


@dataclass(frozen=True)
class Join:
    """One table a path step joins: `table alias`, the conditions tying it to the previous
    entity, and the fact id the step follows (a SQL expression)."""

    table: str
    conds: tuple[str, ...] = ()
    fact: str | None = None


def walk(path: tuple[Step, ...] | list[Step], cur: str, row: str | None, rel_alias: str, row_alias: str,
         first: int = 0) -> tuple[list[Join], str]:
    """The joins that follow `path` from the entity id `cur` (whose own table row is `row`,
    if joined), and the SQL expression of the id reached. Aliases are `rel_alias`+i for link
    tables and `row_alias`+i for entity rows a lookup reads."""
    joins: list[Join] = []
    for i, st in enumerate(path, start=first):
        if st.kind == "rel":
            a = f"{rel_alias}{i}"
            near, far = ("target", "source") if st.reverse else ("source", "target")
            conds = (f"{a}.{near} = {cur}",) + ((f"{a}.valid_to IS NULL",) if st.current else ())
            joins.append(Join(f"{_q('rel_' + st.name)} {a}", conds, rel_fact_sql(a, st.name)))
            cur, row = f"{a}.{far}", None
        elif st.kind == "held":  # the entity a link names (its own column), from the link's source
            a = f"{rel_alias}{i}"
            r, col = st.name.split(".")
            joins.append(Join(f"{_q('rel_' + r)} {a}", (f"{a}.source = {cur}", f"{a}.{_q(col)} IS NOT NULL"), rel_fact_sql(a, r)))
            cur, row = f"{a}.{_q(col)}", None
        else:
            if row is None:
                row = f"{row_alias}{i}"
                joins.append(Join(f"{_q(st.source)} {row}", (f"{row}.id = {cur}",)))
            joins.append(Join("", (), f"{row}.id || '/{st.name}'"))  # a lookup reads a column: no table
            cur, row = f"{row}.{_q(st.name)}", None
    return joins, cur


@dataclass(frozen=True)
class Atom:
    """One constraint: follow `path` from the row entity, then test the end entity
    (`entity`: it is `value`) or one of its attributes (`eq` or a closed `range`)."""

    path: tuple[Step, ...]
    test: str  # entity | eq | range
    attr: str | None = None
    value: object = None  # entity id | value | (lo, hi) with None for an open end
    scope: bool = False  # the part of the world a held-out task is posed in ("in Braeria")

    @property
    def end_type(self) -> str | None:
        return self.path[-1].target if self.path else None


@dataclass(frozen=True)
class Column:
    """One answer column. `base` says what the path starts from: the row entity (`row`), the
    other end of a link row (`other`), or the link itself (`link`: its start or end year, or
    its date). Then follow to-one `path` and take `attr` of the end entity (None: its name),
    or aggregate over the to-many hop `via` from there (`agg`: list of names, count, latest
    year). `rank`: the row's position in a ranked table."""

    name: str
    path: tuple[Step, ...]
    attr: str | None
    kind: str
    desc: str = ""
    base: str = "row"  # row | other | link | rank
    agg: str | None = None  # list | count | latest
    via: Step | None = None
    items: str = ""  # lists: what the items are ("founders")
    only: tuple[str, str] | None = None  # lists: only the links whose own attribute has this value (the one PI)

    @property
    def hops(self) -> int:
        """How many entities away from the row its value is stated (0: on the row's own page)."""
        if self.agg:
            return len(self.path) + 1
        return max(0, len(self.path) - (1 if self.attr is None else 0))


# Participle labels ("Founded") read as nouns in a column header ("founding date").
_NOUNS = {"born": "birth date", "founded": "founding date", "established": "date established", "launched": "launch date",
          "published": "publication date", "independence": "independence date", "released": "release date",
          "opened": "opening date", "died": "death date"}


class TaskSchema:
    """Hops, attributes, labels and question phrasings of one stored world."""

    def __init__(self, arrays: WorldArrays):
        self.a = arrays
        self.world = arrays.world
        self.types = arrays.types
        self.relations = arrays.relations
        self.con = arrays.con
        self.steps, self.in_steps = world_hops(self.world)  # forward hops; relations read from their target
        self._kinds: dict[tuple[str, str], str | None] = {}
        # The language column names and qualifiers are worded in (the tasks stage sets it):
        # Chinese reads the packs' zh labels and nouns and puts qualifiers before the noun.
        self.language = BASE

    @property
    def lexicon(self) -> Lexicon:
        """How the world names its things in the task's language (`world.lexicon`)."""
        return self.world.lexicon(self.language)

    @property
    def lang(self) -> Language:
        """The task language's way of writing (`worldforge.language`)."""
        return get_language(self.language)

    @property
    def page_meta(self) -> dict:
        """How the web labels every predicate in the task's language (`web.pages.predicate_meta`)."""
        key = ("_page_meta", self.language)
        if getattr(self, "_meta_key", None) != key:
            self._meta_key, self._meta = key, predicate_meta(self.world, self.language)
        return self._meta

    # ------------------------------------------------------------------ attributes

    def dtype(self, t: str, a: str) -> str:
        return self.a.dtype(t, a)

    def attr_kind(self, t: str, a: str) -> str | None:
        """string | number | date | url, or None for entity-valued attributes."""
        key = (t, a)
        if key not in self._kinds:
            self._kinds[key] = self._attr_kind(t, a)
        return self._kinds[key]

    def _attr_kind(self, t: str, a: str) -> str | None:
        if a == "name":
            return STRING
        if self.types[t].attributes[a].hidden:  # a working attribute: on no page, in no task
            return None
        dtype = self.dtype(t, a)
        if dtype == "entity" or lookup_target(self.world, t, a):
            return None
        if dtype in ("int", "float"):
            return NUMBER
        if dtype == "date":
            return DATE
        if dtype == "bool":
            return None
        if dtype == "string" and isinstance(self.types[t].attributes[a], DerivedAttr):
            col = self.a.frame(t)[a].drop_nulls()
            if len(col) and str(col[0]).startswith(("http://", "https://")):
                return URL
        return STRING

    def constrainable(self, t: str) -> list[tuple[str, str]]:
        """(attribute, test) pairs usable as constraints: categorical equality, numeric and date ranges."""
        out = []
        for a, s in self.types[t].attributes.items():
            if s.hidden:
                continue
            if isinstance(s, CategoricalAttr):
                out.append((a, "eq"))
            elif isinstance(s, (NumericAttr, DateAttr)) or (isinstance(s, DerivedAttr) and s.dtype in ("int", "float", "date")):
                out.append((a, "range"))
        return out

    def rankable(self, t: str) -> list[str]:
        """Numeric attributes a table can be ranked by."""
        return [a for a, s in self.types[t].attributes.items() if not s.hidden and
                (isinstance(s, NumericAttr) or (isinstance(s, DerivedAttr) and s.dtype in ("int", "float")))]

    def linked_columns(self, t: str) -> set[str]:
        """What a table may ask about an entity of type t that a row links to (the pack's
        `linked_columns`: attributes and outgoing links)."""
        return set(self.types[t].linked_columns)

    def shown(self, t: str) -> list[str]:
        """Attributes that can be a column (not entity-valued; those are hops)."""
        return [a for a in self.types[t].attributes if self.attr_kind(t, a) is not None]

    def link_notes(self, rel: str) -> list[tuple[str, str]]:
        """A relation's own link attributes (a job's department): (name, page label), in order."""
        rs = self.relations[rel]
        labels = [n.label for n in self.page_meta[(rs.source, rel)].notes]
        return list(zip(rs.note_order, labels))

    def label(self, t: str, pred: str) -> str:
        """The page label of an attribute or an outgoing relation ('Headquarters'; the lexicon's)."""
        return self.lexicon.label(t, pred)

    def inverse_label(self, r: str) -> str:
        return self.lexicon.inverse_label(r)

    def unit(self, t: str, a: str) -> str | None:
        return getattr(self.types[t].attributes.get(a), "unit", None)

    def own_unit(self, t: str, a: str, unit: str | None) -> str | None:
        """An attribute's unit as a header in the task's language gives it (the lexicon's: the
        pack's own word in it, else the usual word for a common one, else none)."""
        return self.lexicon.unit(t, a) if unit else None

    def singular(self, t: str) -> str:
        """The type as a noun ('company', 'empresa', '公司'; the lexicon's)."""
        return self.lexicon.noun(t)

    def plural(self, t: str) -> str:
        return self.lexicon.plural(t)

    def asks(self, t: str, pred: str) -> list[str]:
        """Qualifier templates for a constraint on `pred` of type `t` ({value} or {object})."""
        rs = self.relations.get(pred)
        forward = rs is not None and rs.source == t
        item = rs if forward else self.types[t].attributes.get(pred)
        own = item.text("ask", self.language) if item is not None else None
        if own and (self.language == BASE or own != item.ask):  # the pack's own phrasings in the language
            return list(own)
        lab = self.lang.mid(self.label(t, pred))
        asks = question_bank(self.language)["default_asks"]  # (Chinese qualifiers stand before the noun, before its 的)
        if forward:
            form = "to_one" if rs.cardinality in ("1:1", "N:1") and not rs.history else "to_many"
        else:  # ranges read on from the label: 人口介于…之间, 成立日期在1990年代
            form = "range" if self.attr_kind(t, pred) in (NUMBER, DATE) else "value"
        return [a.format(label=lab, object="{object}", value="{value}") for a in asks[form]]

    def word(self, en: str) -> str:
        """A fixed header or cell word in the task's language ('rank' / '排名')."""
        return question_bank(self.language)["words"].get(en, en)

    def of(self, noun: str, owner: str) -> str:
        """'population of headquarters' / '总部所在地的人口'."""
        return question_bank(self.language)["of"].format(noun=noun, owner=owner)

    # ------------------------------------------------------------------ the naming grammar

    def attr_noun(self, t: str, a: str) -> str:
        """An attribute as a column noun: its label ('population'), participles as nouns
        ('Founded' -> 'founding date'), never its long description."""
        if a == "name":
            return self.word("name")
        if self.language != BASE:  # the pack's label in the language is its noun (English derives one)
            return self.lang.mid(self.label(t, a))
        s = self.types[t].attributes[a]
        word = (s.label or a.replace("_", " ")).strip()
        low = word.lower()
        return _NOUNS.get(low, low if word[:1].isupper() and not word[1:2].isupper() else word)

    def link_noun(self, step: Step) -> str:
        """A to-one hop as a noun: the pack's `noun` ('the home country of {subject}' ->
        'home country') when it reads as one, else its label ('headquarters')."""
        if step.kind == "rel" and not step.reverse:
            noun = self.relations[step.name].noun
        elif step.kind == "lookup":
            noun = getattr(self.types[step.source].attributes[step.name], "noun", None)
        else:
            noun = None
        if self.language != BASE:  # (the pack's nouns are English)
            return self.singular(step.target) if step.reverse else self.lang.mid(self.label(step.source, step.name))
        if noun and noun.endswith(" of {subject}") and noun.startswith("the "):
            return noun[4:-len(" of {subject}")]
        if step.reverse:
            return self.singular(step.target)
        return self.label(step.source, step.name).lower()

    def link_name(self, step: Step) -> str:
        """The header of a column holding the hop's entity name ('headquarters', 'nationality')."""
        if step.reverse:
            return self.singular(step.target)
        return self.lang.mid(self.label(step.source, step.name))

    def with_unit(self, t: str, a: str, name: str) -> str:
        u = self.own_unit(t, a, self.unit(t, a))  # a word unit ('employees') is said by the name already
        if u and not (u.isalpha() and u.islower() and len(u) > 3) and u.lower() not in name:
            return name + self.lang.paren(u)
        return name

    def hop_noun(self, step: Step) -> str | None:
        """'the headquarters of {subject}': the noun phrase for one to-one hop."""
        if step.kind == "held":  # the entity a link names: 'the supervisor of {subject}'
            r, a = step.name.split(".")
            own = self.relations[r].attributes[a]
            lt = own.i18n.get(self.language)
            noun = own.noun if self.language == BASE else getattr(lt, "noun", None)  # (never an English noun in another language)
            if noun:
                return noun
            label = dict(self.link_notes(r))[a]
            return question_bank(self.language)["hop_noun"].format(label=self.lang.mid(label), subject="{subject}")
        if self.language != BASE:  # 华星科技有限公司的总部所在地 (the pack's nouns and English shapes are English)
            return question_bank(self.language)["hop_noun"].format(label=self.lang.mid(self.label(step.source, step.name)),
                                                                   subject="{subject}")
        if step.kind == "rel":
            rs = self.relations[step.name]
            if rs.noun:
                return rs.noun
        else:
            s = self.types[step.source].attributes[step.name]
            if getattr(s, "noun", None):
                return s.noun
        label = self.lang.mid(self.label(step.source, step.name))
        shape = phrase_label(label)
        if shape is not None:  # "the city {subject} is based in", not "the based in of {subject}"
            return f"the {self.singular(step.target)} {{subject}} is {'the ' if shape == 'role' else ''}{label}"
        return f"the {label} of {{subject}}"

    # ------------------------------------------------------------------ SQL

    def atom_sql(self, atom: Atom, base_type: str, base: str = "t") -> str:
        """A boolean SQL expression, never NULL, true when the row `base` satisfies the atom."""
        if not atom.path:
            return f"coalesce({self._test_sql(f'{base}.{_q(atom.attr)}', atom)}, FALSE)"
        joins, cur = walk(atom.path, f"{base}.id", base, "s", "e")
        froms = [j.table for j in joins if j.table]
        wheres = [c for j in joins for c in j.conds]
        if atom.test == "entity":
            wheres.append(f"{cur} = {lit(atom.value)}")
        else:
            froms.append(f"{_q(atom.end_type)} u")
            wheres.append(f"u.id = {cur}")
            wheres.append(self._test_sql(f"u.{_q(atom.attr)}", atom))
        if not froms:
            return f"coalesce({' AND '.join(wheres)}, FALSE)"
        return f"EXISTS (SELECT 1 FROM {', '.join(froms)} WHERE {' AND '.join(wheres)})"

    @staticmethod
    def _test_sql(col: str, atom: Atom) -> str:
        if atom.test == "eq":
            return f"{col} = {lit(atom.value)}"
        lo, hi = atom.value
        parts = []
        if lo is not None:
            parts.append(f"{col} >= {lit(lo)}")
        if hi is not None:
            parts.append(f"{col} <= {lit(hi)}")
        return "(" + " AND ".join(parts) + ")"

    def column_sql(self, col: Column, j: int, bases: dict[str, str]) -> tuple[list[str], str]:
        """LEFT JOINs and the value expression of one column; `bases` maps `row` / `other` to
        the SQL id of that entity and `link` to the link table's alias."""
        if col.base == "link":
            x = bases["link"]
            if col.attr == "start":
                return [], f"year({x}.valid_from)"
            if col.attr == "end":
                present = self.word("present").replace("'", "''")  # an open end, as the task's language says it
                return [], f"coalesce(CAST(year({x}.valid_to) AS VARCHAR), '{present}')"
            if col.attr != "date":  # the link's own attribute (a job's department; a supervisor by name)
                return [], note_sql(self.world, bases["rel"], col.attr, table=x)
            return [], f"{x}.valid_from"
        if col.base == "rank":
            return [], "rank"
        start = bases[col.base]
        steps, cur = walk(col.path, start, None, f"c{j}r", f"c{j}e")
        joins = [f"LEFT JOIN {x.table} ON {' AND '.join(x.conds)}" for x in steps if x.table]
        if col.agg:
            return joins, self._agg_sql(col, cur)
        end = col.path[-1].target if col.path else None
        if not col.path:
            alias = bases[col.base + "_row"]
            return joins, f"{alias}.{_q(col.attr or 'name')}"
        e = f"c{j}v"
        joins.append(f"LEFT JOIN {_q(end)} {e} ON {e}.id = {cur}")
        return joins, f"{e}.{_q(col.attr or 'name')}"

    def _agg_sql(self, col: Column, cur: str) -> str:
        st = col.via
        near, far = ("target", "source") if st.reverse else ("source", "target")
        cond = f"x.{near} = {cur}" + (" AND x.valid_to IS NULL" if st.current else "")
        tbl = _q("rel_" + st.name)
        if col.only is not None:  # only the links whose own attribute has the value (a grant's principal investigator)
            cond += f" AND {note_sql(self.world, st.name, col.only[0], table='x')} = {lit(col.only[1])}"
        if col.agg == "count":
            return f"(SELECT count(*) FROM {tbl} x WHERE {cond})"
        if col.agg == "latest":
            return f"(SELECT max(year(x.valid_from)) FROM {tbl} x WHERE {cond})"
        return (f"(SELECT string_agg(m.name, '{LIST_SEPARATOR}' ORDER BY m.name) FROM {tbl} x "
                f"JOIN {_q(st.target)} m ON m.id = x.{far} WHERE {cond})")

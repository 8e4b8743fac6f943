"""Multi-hop single-answer questions: start at a named entity and follow 2 to 4 hops, each
of which leads to exactly one entity ("the headquarters of the maker of Loor Air"), then
ask for the last entity or one of its attributes.

The hop graph holds the world's functional links only: to-one relations (a since-relation's
current link), lookups, tenures with exactly one current holder ("the current chief
executive"), many-to-many links with exactly one partner ("the sole founder"), and the
reverse of links whose target has one source ("the company that acquired X"). It is kept as
integer arrays (one row per link) so it scales to millions of links.

Chains are drawn backwards: first the type of the answer (the type furthest below its share,
so answers spread over every type instead of piling up on the geography every chain runs
into), then an answer entity, then random incoming functional links; the chain's start is
where the walk ends, so starts spread too.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..language import Language, written_in
from ..plumbing import stable_hash
from ..web import format_date, format_number
from ..world import Step, iso
from .banks import balanced, question_bank, question_date
from .schema import DATE, NUMBER, STRING, URL, TaskSchema, walk
from .table import cell_text


def nest(nouns: list[str], subject: str) -> str:
    """The noun phrase of a chain of hops from `subject` ("the country of the birthplace of X")."""
    for noun in nouns:
        subject = noun.replace("{subject}", subject)
    return subject


def nested_of(text: str) -> int:
    """Levels of nesting in a sentence's noun phrases, as the language it is written in counts
    them (`reading.nesting`): "of the" and clauses inside noun phrases in English ("the calling
    code of the country of the birthplace of X": 2); the possessive 的 in Chinese ("X的出生地的所属
    国家的国际电话区号": 3)."""
    return sum(len(p.findall(text)) for p in written_in(text).reading.nesting)


def _centre(noun: str) -> bool:
    """A hop noun whose subject sits inside it ("the album {subject} is a sequel to")."""
    return not noun.rstrip().endswith("{subject}")


def _levels(part: list[str]) -> int:
    """How deep a chain of hop nouns nests: a level a hop, and two more for each noun that wraps a
    phrase inside it ("the city [the label that released X] is based in": the hardest to read)."""
    return len(part) - 1 + 2 * sum(1 for noun in part[1:] if _centre(noun))


def _that(type_: str, noun: str, mh: dict) -> str:
    """How a sentence names the entity the previous one reached: "that album", or "that one"
    inside a noun of the same type ("the album that one is a sequel to", not "the album that album")."""
    same = _centre(noun) and noun.startswith(mh["reverse"].format(type=type_, ask=""))
    return (mh["that_same"] if same else mh["that"]).format(type=type_)


def split_chain(nouns: list[str], types: list[str], start: str, ask, lead: str, then: str, mh: dict,
                lang: Language) -> str:
    """A chain too nested to read ("the calling code of the country of the birthplace of the
    founder of X") as sentences a person would write: the first hops, then each next hop from
    "that <type>", then the question ("Take the birthplace of X. What is the calling code of
    the country that city lies in?"). The cut gives the fewest sentences with at most two "of
    the" in any (fewer when none can); the start's own name is not counted ("Models of Noisy
    Channels")."""
    best = None
    n = len(nouns)
    for mask in range(1, 1 << (n - 1)):  # every set of cuts between hops
        cuts = [j for j in range(1, n) if mask >> (j - 1) & 1]
        bounds = [0, *cuts, n]
        parts = [nouns[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1)]
        subj = [start] + [_that(types[c - 1], nouns[c], mh) for c in cuts]
        counted = [lead.format(np=nest(parts[0], "X"))] + [then.format(np=nest(p, x)) for p, x in zip(parts[1:-1], subj[1:-1])] \
            + [ask(nest(parts[-1], subj[-1]))]
        worst = max(max(nested_of(text), _levels(part)) if mh["levels"] else nested_of(text) for text, part in zip(counted, parts))
        key = (max(worst, 2), len(parts), worst)  # two levels read fine: then as few sentences as can be
        if best is None or key < best[0]:
            text = [lead.format(np=nest(parts[0], start)), *counted[1:]]
            best = (key, lang.space.join(x[:1].upper() + x[1:] for x in text))
    return best[1] if best else ask(nest(nouns, start))


@dataclass
class Hop:
    source: str
    target: str
    noun: str  # with {subject}
    fact: str
    kind: str  # forward | current | sole | reverse | lookup | held
    step: Step | None = None  # the link the hop follows, oriented as it goes


@dataclass
class MultiHopTask:
    start: str
    hops: list[Hop]
    answer_entity: str
    answer_attr: str | None
    answer: str
    answer_kind: str
    aliases: list[str]
    question: str
    columns: list[str]
    gold_rows: list[list[str]]
    facts: list[str]
    sql: str
    nodes: list[int]  # global entity indexes along the chain, start first


@dataclass(frozen=True)
class HopKind:
    step: Step  # oriented as the hop goes (reverse for "the company that acquired X")
    noun: str
    kind: str


class HopGraph:
    """Functional hops of a world as arrays: per link, source and target (global entity
    indexes), the hop kind and the link's index in `arrays.links(step)`."""

    def __init__(self, schema: TaskSchema, offset: dict[str, int], n_nodes: int):
        self.s = schema
        a = schema.a
        self.offset = offset
        self.kinds: list[HopKind] = []
        src, dst, kind, link = [], [], [], []
        mh = question_bank(schema.language)["multihop"]  # hop nouns in the task's language

        def add(step: Step, noun: str, k: str, keep: np.ndarray | None = None) -> None:
            lk = a.links(step)
            idx = np.arange(len(lk.src)) if keep is None else np.flatnonzero(keep)
            self.kinds.append(HopKind(step, noun, k))
            src.append(offset[step.source] + lk.src[idx])
            dst.append(offset[step.target] + lk.dst[idx])
            kind.append(np.full(len(idx), len(self.kinds) - 1, dtype=np.int64))
            link.append(idx.astype(np.int64))

        for r, rs in schema.relations.items():
            lab = schema.label(rs.source, r)
            to_one = rs.cardinality in ("1:1", "N:1") and not rs.history
            if to_one:
                st = Step("rel", r, rs.source, rs.target, current=rs.since is not None)
                add(st, schema.hop_noun(st), "forward")
            elif one := schema.lang.singular(lab):  # a to-many link where only one holds: "the sole club of X"
                how = "current" if rs.history else "sole"
                st = Step("rel", r, rs.source, rs.target, current=bool(rs.history), to_one=False)
                lk = a.links(st)
                add(st, mh[how].replace("{noun}", one), how, np.diff(lk.starts)[lk.src] == 1)
            for a_, at in rs.attributes.items():  # the entity a link names: "the supervisor of X"
                if getattr(at, "holds", None) is None or at.hidden:
                    continue
                st = Step("held", f"{r}.{a_}", rs.source, at.entity_type(schema.relations), to_one=to_one)
                if to_one:
                    add(st, schema.hop_noun(st), "held")
                else:  # a source's only link of the relation ("the parent club of X", of X's only loan)
                    only = np.diff(a.links(Step("rel", r, rs.source, rs.target, to_one=False)).starts) == 1
                    add(st, schema.hop_noun(st), "held", only[a.links(st).src])
            if rs.cardinality in ("1:1", "1:N") and not rs.history:
                asks = schema.asks(rs.source, r)
                noun = mh["reverse"].format(type=schema.singular(rs.source), ask=asks[0].replace("{object}", "{subject}"))
                add(Step("rel", r, rs.target, rs.source, reverse=True), noun, "reverse")
        for steps in schema.steps.values():
            for st in steps:
                if st.kind == "lookup":
                    add(st, schema.hop_noun(st), "lookup")
        self.src = np.concatenate(src) if src else np.zeros(0, dtype=np.int64)
        self.dst = np.concatenate(dst) if dst else np.zeros(0, dtype=np.int64)
        self.kind = np.concatenate(kind) if kind else np.zeros(0, dtype=np.int64)
        self.link = np.concatenate(link) if link else np.zeros(0, dtype=np.int64)
        order = np.lexsort((self.src, self.dst))  # incoming links, by target
        self.in_order = order
        self.in_starts = np.searchsorted(self.dst[order], np.arange(n_nodes + 1))
        self.has_in = np.diff(self.in_starts) > 0
        self.n_nodes = n_nodes
        self.depth = self.depths(None)

    def depths(self, allowed: np.ndarray | None) -> np.ndarray:
        """How many hops a chain can run back from each entity (up to 4), through `allowed`
        entities only: a walk only takes a step from which it can still go as far as it needs."""
        keep = np.ones(len(self.src), dtype=bool) if allowed is None else allowed[self.src] & allowed[self.dst]
        src, dst = self.src[keep], self.dst[keep]
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for _ in range(4):
            nxt = depth.copy()
            np.maximum.at(nxt, dst, np.minimum(depth[src] + 1, 4))
            if np.array_equal(nxt, depth):
                break
            depth = nxt
        return depth

    def fact(self, e: int) -> str:
        """The fact id a hop follows."""
        hk = self.kinds[int(self.kind[e])]
        st = hk.step
        a = self.s.a
        if st.kind == "lookup":
            return f"{a.ids[st.source][self.src[e] - self.offset[st.source]]}/{st.name}"
        lk = a.links(st)
        i = int(self.link[e])
        u, v = a.ids[st.source][lk.src[i]], a.ids[st.target][lk.dst[i]]
        if st.kind == "held":  # the link that names the entity: its fact states it
            r = st.name.split(".")[0]
            v = a.ids[self.s.relations[r].target][lk.via[i]]
            day = iso(lk.valid_from[i:i + 1])[0]
            return f"{u}/{r}/{v}" + (f"@{day}" if day else "")
        day = iso(lk.valid_from[i:i + 1])[0]
        s_, d_ = (v, u) if st.reverse else (u, v)
        return f"{s_}/{st.name}/{d_}" + (f"@{day}" if day else "")

    def walk_back(self, end: int, hops: int, rng: np.random.Generator, allowed: np.ndarray | None,
                  depth: np.ndarray, prefer=None) -> list[int] | None:
        """Link indexes of a simple chain of `hops` functional links ending at `end` (start first)."""
        path, seen, cur = [], {end}, end
        for left in range(hops - 1, -1, -1):
            lo, hi = self.in_starts[cur], self.in_starts[cur + 1]
            cands = [int(e) for e in self.in_order[lo:hi] if int(self.src[e]) not in seen
                     and depth[self.src[e]] >= left and (allowed is None or allowed[self.src[e]])]
            if not cands:
                return None
            if left == 0 and prefer is not None:  # the chain's start: the least used type first
                best = min(prefer(int(self.src[e])) for e in cands)
                cands = [e for e in cands if prefer(int(self.src[e])) == best]
            e = cands[int(rng.integers(len(cands)))]
            path.append(e)
            cur = int(self.src[e])
            seen.add(cur)
        return path[::-1]


def answer_aliases(value, kind: str, unit: str | None) -> list[str]:
    if kind == DATE:
        d = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        return list(dict.fromkeys(format_date(d, s) for s in range(3)))
    if kind == NUMBER:
        plain = cell_text(value, NUMBER)
        vt = "float" if isinstance(value, float) and not float(value).is_integer() else "int"
        out = [plain, format_number(plain, vt)]
        if unit:
            out.append(format_number(plain, vt, unit))
        return list(dict.fromkeys(out))
    return [str(value)]


class MultiHopSampler:
    def __init__(self, schema: TaskSchema, graph: HopGraph, rng: np.random.Generator, name_counts: dict[str, int],
                 as_of: dt.date, aliases, allowed: np.ndarray | None = None, openings: Counter | None = None):
        self.s = schema
        self.openings = Counter() if openings is None else openings  # openings said so far (`banks.balanced`)
        self.g = graph
        self.rng = rng
        self.name_counts = name_counts
        self.as_of = as_of
        self.aliases = aliases  # eid -> list of aliases
        self.allowed = allowed
        self.starts: dict[str, int] = dict.fromkeys(schema.types, 0)  # questions kept per start type
        self.depth = graph.depths(allowed)
        if allowed is not None:
            self.depth[~allowed] = 0
        self.reach = {t: int(self.depth[graph.offset[t]:graph.offset[t] + schema.a.n(t)].max(initial=0)) for t in schema.types}
        self.types = [t for t in schema.types if self.reach[t] >= 2]

    def entity(self, node: int) -> tuple[str, int]:
        for t, off in self.g.offset.items():
            if off <= node < off + self.s.a.n(t):
                return t, node - off
        raise IndexError(node)

    def eid(self, node: int) -> str:
        t, c = self.entity(node)
        return str(self.s.a.ids[t][c])

    def sample(self, hops: int, end_type: str) -> MultiHopTask | str:
        """A question whose answer is an entity of `end_type` (or one of its attributes), or
        the reason the draw was dropped. The chain passes through `allowed` entities only."""
        s, g, a = self.s, self.g, self.s.a
        off, n = g.offset[end_type], a.n(end_type)
        cands = np.flatnonzero(self.depth[off:off + n] >= hops)
        if not len(cands):
            return "no-path"
        end = off + int(cands[int(self.rng.integers(len(cands)))])
        path = g.walk_back(end, hops, self.rng, self.allowed, self.depth,
                           prefer=lambda node: self.starts[self.entity(node)[0]])
        if path is None:
            return "no-path"
        start = int(g.src[path[0]])
        start_id = self.eid(start)
        start_name = a.name(start_id)
        if self.name_counts.get(start_name, 0) != 1:
            return "ambiguous-name"
        for e in path:  # an entity a link names is found by its name: one entity of the world holds it
            if g.kinds[int(g.kind[e])].kind == "held" and self.name_counts.get(a.name(self.eid(int(g.dst[e]))), 0) != 1:
                return "ambiguous-name"
        nouns = [g.kinds[int(g.kind[e])].noun for e in path]
        np_ = nest(nouns, start_name)
        end_id = self.eid(end)
        start_type = a.type_of(start_id)
        facts = [g.fact(e) for e in path]
        pick = lambda xs: xs[int(self.rng.integers(len(xs)))]  # noqa: E731  (what is asked)
        code = end - off
        frame = a.frame(end_type)
        attrs = [x for x in s.shown(end_type) if s.attr_kind(end_type, x) != URL and frame[x][code] is not None]
        # how it is worded comes from a generator of its own, seeded by the chain: wording never
        # changes which questions are drawn
        wording = np.random.default_rng(stable_hash("multihop wording", start_id, end_id, hops))
        say = lambda xs: xs[int(wording.integers(len(xs)))]  # noqa: E731
        bank = question_bank(s.language)
        mh = bank["multihop"]
        if attrs and self.rng.random() < 0.5:
            attr = pick(attrs)
            v = frame[attr][code]
            kind = s.attr_kind(end_type, attr)
            answer = cell_text(v, kind)
            aliases = answer_aliases(v, kind, s.unit(end_type, attr))
            lab = s.lang.mid(s.label(end_type, attr))
            unit = s.unit(end_type, attr)
            count = mh["number_of"]  # 'Teams' holds how many: 'the number of teams of ...' (not 'listeners' in thousands)
            if kind == NUMBER and s.lang.plural(lab) and count["unless"] not in lab \
                    and (unit is None or unit.lower().split()[-1] == lab.split()[-1]):
                lab = count["say"].format(label=lab)
            # the column says its unit ('listeners (thousand monthly listeners)'): the figure is written as the pages give it
            ans_col = s.with_unit(end_type, attr, lab)
            if kind == DATE:  # 'When was X founded?' of an event, 'What is the date of ...' else
                happened = s.lang.participle(lab) or lab in mh["happened_words"]
                tmpl = say(mh["happened_did"] if lab in mh["did"] else mh["happened"] if happened else mh["date"])
            else:  # (Chinese asks what a number is with 是多少, a name or category with 是什么)
                tmpl = say(mh["attr_number"] if kind == NUMBER else mh["attr"])
            q = tmpl.format(label=lab, np=np_, verb=mh["did"].get(lab, lab))
            facts.append(f"{end_id}/{attr}")
        else:
            answer = a.name(end_id)
            if self.name_counts.get(answer, 0) != 1:
                return "ambiguous-name"
            kind, attr = STRING, None
            ans_col = s.singular(end_type)
            aliases = [answer, *self.aliases(end_id)]
            tmpl, lab = say(mh["entity"]), ""
            if tmpl == mh["entity"][0] and np_.startswith(mh["reverse"].format(type=s.singular(end_type), ask="")):
                tmpl = mh["entity"][2]  # not "Which album is the album the album that won X is a sequel to?"
            q = tmpl.format(type=s.singular(end_type), np=np_)
        verb = mh["did"].get(lab, lab)  # 'When did X die?'
        if nested_of(tmpl.format(type=s.singular(end_type), label=lab, verb=verb, np=nest(nouns, mh["placeholder"]))) >= 3 \
                or (mh["levels"] and _levels(nouns) >= 3):
            # "the calling code of the country of the birthplace of X": a chain in sentences, as a person asks it
            types = [s.singular(a.type_of(self.eid(int(g.dst[e])))) for e in path]
            q = split_chain(nouns, types, start_name, lambda np: tmpl.format(type=s.singular(end_type), label=lab, verb=verb, np=np),
                            say(mh["leads"]), say(mh["thens"]), mh, s.lang)
        q = q[:1].upper() + q[1:]
        key_col = s.singular(start_type)
        # the answer column is named for what is asked (the attribute, or the type reached)
        if ans_col == key_col:
            ans_col = mh["answer_column"].format(col=ans_col)
        cols = [key_col, ans_col]
        hint = mh["name_hint"] if attr is None else mh["hints"].get(kind, "")
        both = bank["column_sep"].join(cols)
        tail = say(mh["tails"]).format(cols=bank["column"].format(name=both, hint=hint) if hint else both)
        when = say(mh["when"]).format(date=question_date(self.as_of, s.language))
        purpose = balanced(mh["purposes"], self.openings, lambda n: int(wording.integers(n)))
        question = s.lang.agree(bank["sentence_sep"].join([purpose, q, when, tail]))  # articles that agree ('la ciudad')
        hops_out = []
        for e in path:
            hk = g.kinds[int(g.kind[e])]
            hops_out.append(Hop(self.eid(int(g.src[e])), self.eid(int(g.dst[e])), hk.noun, g.fact(e), hk.kind, hk.step))
        nodes = [start] + [int(g.dst[e]) for e in path]
        return MultiHopTask(start=start_id, hops=hops_out, answer_entity=end_id, answer_attr=attr, answer=answer,
                            answer_kind=kind, aliases=list(dict.fromkeys(aliases)), question=question, columns=cols,
                            gold_rows=[[start_name, answer]], facts=facts, sql=self._sql(start_id, path, attr),
                            nodes=nodes)

    def _sql(self, start: str, path: list[int], attr: str | None) -> str:
        """The answer as SQL over the world store: one join per hop, from the named start."""
        from ..plumbing import quote_ident as _q

        s, g = self.s, self.g
        st_type = s.a.type_of(start)
        steps = []
        for e in path:
            hk = g.kinds[int(g.kind[e])]
            st = hk.step
            steps.append(Step(st.kind, st.name, st.source, st.target, current=hk.kind in ("current",) or st.current,
                              reverse=st.reverse))
        joins, cur = walk(steps, "e0.id", "e0", "h", "n", first=1)
        end_type = steps[-1].target
        froms = [f"{_q(st_type)} e0", *(j.table for j in joins if j.table), f"{_q(end_type)} ev"]
        conds = [f"e0.id = '{start}'", *(c for j in joins for c in j.conds), f"ev.id = {cur}"]
        value = f"ev.{_q(attr)}" if attr else "ev.name"
        return (f"SELECT e0.name AS {_q(s.singular(st_type))}, {value} AS answer\nFROM " + ", ".join(froms)
                + "\nWHERE " + "\n  AND ".join(conds))

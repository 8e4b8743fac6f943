"""Questions in Chinese, in the manner of WideSearch's Chinese tasks: why the user asks, what
they want (qualifiers before the noun: "总部所在地为怀和市且成立日期在1990年代的公司"), as of
when, every column with a short formatting instruction (列名（说明）), then how to answer.
Column names and qualifiers come from the packs' zh labels (`TaskSchema` in Chinese)."""

from __future__ import annotations

from ..world.pack import CountAttr
from .schema import DATE, Atom
from .table import fill, range_text
from .wording import Wording

COUNTED = {"people", "employees", "students", "citations", "seats"}


class ZhWording(Wording):
    """`Wording` in Chinese: the same choices from the same generator, Chinese phrasings (the
    bank `questions/zh.yaml`) in Chinese order (qualifiers before the noun)."""

    language = "zh"

    # ------------------------------------------------------------------ constraints

    def atom_text(self, t: str, atom: Atom) -> tuple[str, list[str]]:
        """The qualifier for a constraint ('总部所在地为所属行政区为宁云省的城市') and the values it names."""
        s = self.s
        if atom.scope:
            name = s.a.name(atom.value)
            if len(atom.path) == 1:
                st = atom.path[0]
                return fill(self.pick(s.asks(st.source, st.name)), name), [name]
            return f"位于{name}", [name]
        if atom.test == "entity":
            name = s.a.name(atom.value)
            inner, vals = name, [name]
        elif atom.test == "eq":
            inner, vals = str(atom.value), [str(atom.value)]
        else:
            tt = atom.end_type or t
            kind = s.attr_kind(tt, atom.attr)
            inner, vals = range_text(*atom.value, kind, s.dtype(tt, atom.attr) == "int", language="zh")
        if atom.test in ("eq", "range"):
            tt = atom.end_type or t
            inner = fill(self.pick(s.asks(tt, atom.attr)), inner)
            path = atom.path
        else:
            path = atom.path[:-1]
            last = atom.path[-1]
            inner = fill(self.pick(s.asks(last.source, last.name)), inner)
        for st in reversed(path):
            inner = fill(self.pick(s.asks(st.source, st.name)), f"{inner}的{s.plural(st.target)}")
        return inner, vals

    def phrase(self, combo: str, texts: dict[str, str], plural: str) -> str:
        """The rows as one noun phrase: qualifiers, 的, the noun; an exclusion after it."""
        a, b, c, scope = texts.get("A"), texts.get("B"), texts.get("C"), texts.get("S")
        pre = f"{scope}、" if scope and combo else scope or ""
        if not combo:
            return f"{pre}的{plural}" if pre else plural
        if combo == "A":
            return f"{pre}{a}的{plural}"
        if combo == "A&B":
            return f"{pre}{a}且{b}的{plural}"
        or_, not_ = self.bank["or_words"][0], self.bank["not_words"][0]  # one form each: nothing to pick
        if combo == "A|B":
            return f"{pre}{a}{or_.format(x=b)}的{plural}"
        if combo == "A&!B":
            return f"{pre}{a}的{plural}{not_.format(x=b)}"
        if combo == "A&B&C":
            return f"{pre}{a}、{b}且{c}的{plural}"
        if combo == "(A|B)&C":
            return f"{pre}{c}，并且{a}{or_.format(x=b)}的{plural}"
        return f"{pre}{a}且{b}的{plural}{not_.format(x=c)}"  # A&B&!C

    # ------------------------------------------------------------------ columns

    def period(self, window, verb: str) -> tuple[str, list[str]]:
        lo, hi = window
        text, vals = range_text(lo, hi, DATE, language="zh")
        return f"{verb}{text}", vals

    def extreme(self, t: str, a: str, desc: bool) -> str:
        """最大 for areas, 最多 for head counts, else 最高 (and their opposites)."""
        unit = self.s.unit(t, a)
        if unit == "km²":
            return "最大" if desc else "最小"
        if unit in COUNTED or isinstance(self.s.types[t].attributes.get(a), CountAttr):
            return "最多" if desc else "最少"
        return "最高" if desc else "最低"

    # ------------------------------------------------------------------ a table task

    def describe(self, task) -> tuple[str, list[str], list[str], str]:
        s = self.s
        c = task.cand
        t = c.t
        texts, values = {}, []
        for k in sorted(c.atoms):
            texts[k], vals = self.atom_text(t, c.atoms[k])
            values += vals
        scope = texts.get("S", "")
        plural = one = s.plural(t)
        cols = task.columns
        if c.shape == "filter":
            what = self.phrase(c.combo, texts, plural)
            q = self.table("filter", what, plural, one, cols, self.when_now())
            return q, list(texts.values()), values, f"{texts.get('A') or scope} {plural}".strip()
        if c.shape == "ranked":
            noun = s.attr_noun(t, c.rank_attr)
            word = noun + self.extreme(t, c.rank_attr, c.rank_desc)
            n = len(task.gold_rows)
            base = self.phrase(c.combo, texts, plural)
            what = f"{base}中{word}的前{n}个{one}，按{noun}{'从高到低' if c.rank_desc else '从低到高'}排名"
            values.append(str(n))
            q = self.table("ranked", what, plural, one, cols, self.when_now(), rank_word=word)
            where = " ".join(x for x in (texts.get("A"), scope) if x)
            return q, list(texts.values()), values, f"{where} {plural} {noun}".strip()
        st = c.rows.step
        rs = s.relations[st.name]
        if c.shape == "timeline":
            role = cols[[i for i, x in enumerate(cols) if x.base == "other"][0]].name
            other_t = st.target
            if c.anchor:
                anchor = s.a.name(c.anchor)
                values.append(anchor)
                target = anchor
            else:
                target = self.phrase(c.combo, texts, plural)
            if st.reverse:
                what = fill(self.pick(s.asks(rs.source, st.name)), target) + f"的所有{s.plural(other_t)}"
            else:
                what = f"{target}的每一任{role}"
            if c.window:
                p, vals = range_text(*c.window, DATE, language="zh")
                what += f"（只统计{p.removeprefix('在')}开始的任期）"
                values += vals
            if c.note:
                label = dict(s.link_notes(st.name))[c.note[0]]
                what += f"（仅限{label}为{c.note[1]}的）"
                values.append(c.note[1])
            one = "任期"
            q = self.table("timeline", what, plural, one, cols, self.when_history())
            return q, list(texts.values()) + ([anchor] if c.anchor else []), values, f"{target} {role}".strip()
        label = s.label(rs.source, st.name)
        p, vals = self.period(c.window, "日期")
        values += vals
        what = f"{p}的所有{label}事件"
        if c.combo or scope:
            what += f"，仅限涉及{self.phrase(c.combo, texts, plural)}的"
        q = self.table("events", what, plural, "事件", cols, "")
        return q, list(texts.values()), values, f"{label} {p}"

"""Questions in Chinese, in the manner of WideSearch's Chinese tasks: why the user asks, what
they want (qualifiers before the noun: "总部所在地为怀和市且成立日期在1990年代的公司"), as of
when, every column with a short formatting instruction (列名（说明）), then how to answer.
Column names and qualifiers come from the packs' zh labels (`TaskSchema` in Chinese)."""

from __future__ import annotations

from ..plumbing import stable_hash
from ..world.pack import CountAttr
from .schema import DATE, LIST, NUMBER, STRING, URL, Atom, Column
from .table import fill, range_text
from .wording import Wording

PURPOSES = {
    "filter": [
        "我正在为一个研究项目整理关于{plural}的参考资料，需要做到完整无遗漏。",
        "我在写一份行业概览，需要一份完整的{plural}名单。",
        "我想建立一个关于{plural}的小型数据集，希望覆盖所有情况，而不仅仅是知名的那些。",
        "我们团队正在用公开资料核对内部的{plural}记录。",
        "我在准备一份简报，需要关于部分{plural}的可靠而完整的数据。",
        "我在做背景调研，想要一张可以排序和筛选的{plural}汇总表。",
        "我们的通讯要做一期关于{plural}的专题，编辑要求名单必须有出处。",
        "我在核查同事做的一份{plural}表格，看起来不全。",
        "客户要一页关于{plural}的摘要，一个都不能漏。"],
    "ranked": [
        "我在写一篇对比文章，想看看哪些{plural}名列前茅。",
        "我的报告里需要一张{plural}的排名图表。",
        "我想了解一下规模：哪些{plural}处于领先地位？",
        "下周开会要用，我需要一份{plural}的排行榜。",
        "我在为一次比较筛选{plural}，只需要两头的那些。"],
    "timeline": [
        "我在写一段简史，需要完整的更替记录，而不只是最近几年。",
        "我在梳理领导层和成员随时间的变化，每一个时期都很重要。",
        "我在设计一张时间线图，需要每一段任期的起止时间。",
        "我在根据零散的资料还原一段历史，希望汇总成一张表。",
        "一篇周年纪念文章需要完整记录谁在何时任职。"],
    "events": [
        "我在编一份大事年表，需要某一时期内同一类的所有事件。",
        "我在画一条时间线，需要每一次发生的事件及其确切日期。",
        "我在研究一段时期内的动态，需要完整的记录，每个事件一行。",
        "我在核实一篇文章，需要这一时期内每一件此类事件，并注明日期。",
        "我参与的一个档案项目缺少这一时期的条目。"],
}
# 任务规则：什么算数、去哪里查；每条都与标准答案的构造方式一致。
# (no rule says how hard the search is or where lists fall short: that is the agent's to find)
RULES = {
    "filter": ["只统计在该日期满足全部条件的，过去满足的不算。"],
    "ranked": ["请使用截至该日期的数值，不要用旧数据。",
               "请按准确数值排名，摘要里的约数不足以区分接近的情况。"],
    "timeline": ["已经结束的任期和现任都要包括。"],
    "events": ["事件按发生日期计，而不是按报道日期。"],
}
ASKS = {
    "filter": ["请找出所有{what}。", "请列出全部{what}。", "我需要所有{what}，一个都不要漏。", "哪些是{what}？请全部列出。"],
    "ranked": ["请列出{what}。", "请找出{what}。", "我需要{what}。"],
    "timeline": ["请列出{what}。", "请帮我找出{what}。", "我需要{what}，包括每一段的起止时间。"],
    "events": ["请列出{what}。", "请帮我找出{what}。", "我需要{what}。"],
}
WHEN_NOW = ["所有信息以{date}为准。", "请给出截至{date}的情况。", "如果信息随时间有变化，请以{date}的状态为准。"]
WHEN_HISTORY = ["请涵盖截至{date}的全部历史，包括现任。", "请尽可能追溯到最早的记录，截至{date}。", "过去和现在的任期都要包括，截至{date}。"]
COLUMN_LEADS = ["表格需要包含以下列：{cols}。", "请严格使用这些列：{cols}。", "列依次为：{cols}。", "我需要以下几列：{cols}。"]
CLOSINGS = [
    "请包含所有符合条件的{one}，即使列表很长，也不要加入不符合条件的。请以一个Markdown表格作答，表头与上述列名完全一致，每个{one}一行。",
    "不要遗漏任何{one}，也不要加入不符合条件的{one}。请用一个Markdown表格输出，使用上述列名作为表头，每行一个{one}。",
    "完整性比速度更重要。请将结果整理成一个Markdown表格，列名与上面完全相同，每行一个{one}。",
    "如果某个值确实查不到，请填写“未知”，不要猜测。请把所有结果放在一个Markdown表格中，表头使用上述列名，每个{one}一行。"]


COUNTED = {"people", "employees", "students", "citations", "seats"}


class ZhWording(Wording):
    """`Wording` in Chinese: the same choices from the same generator, Chinese phrasings."""

    def date(self) -> str:
        d = self.as_of
        return f"{d.year}年{d.month}月{d.day}日"

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
        if combo == "A|B":
            return f"{pre}{a}或{b}的{plural}"
        if combo == "A&!B":
            return f"{pre}{a}的{plural}（不包括{b}的）"
        if combo == "A&B&C":
            return f"{pre}{a}、{b}且{c}的{plural}"
        if combo == "(A|B)&C":
            return f"{pre}{c}，并且{a}或{b}的{plural}"
        return f"{pre}{a}且{b}的{plural}（不包括{c}的）"  # A&B&!C

    # ------------------------------------------------------------------ columns

    def hint(self, c: Column, one: str, rank_word: str = "") -> str:
        if c.base == "rank":
            return f"1表示{rank_word}" if rank_word else "1表示第一名"
        if c.base == "link" and c.attr == "end":
            return self.pick(["结束的年份，仍在持续的填“至今”", "结束年份，至今未结束的填“至今”"])
        if c.base == "link" and c.attr == "start":
            return self.pick(["开始的年份", "四位数年份"])
        if c.kind == LIST:
            return self.pick([f"全部{c.items}，用分号分隔", f"列出所有{c.items}，以分号隔开"])
        if c.kind == DATE:
            return self.pick(["YYYY-MM-DD", "格式为YYYY-MM-DD", "完整日期，YYYY-MM-DD"])
        if c.kind == NUMBER:
            if c.agg == "count":
                return "整数"
            if c.agg == "latest":
                return "四位数年份"
            return self.pick(["纯数字", "只写数字，不带单位", "不带单位的数字"])
        if c.kind == URL:
            return "完整网址"
        if c.kind == STRING and c.base == "row" and not c.path and c.attr is None:
            return self.pick([f"{c.name}的全称", "完整名称", "常用的正式名称"])
        return ""

    def columns_text(self, columns: list[Column], one: str, rank_word: str = "") -> str:
        parts = []
        for c in columns:
            h = self.hint(c, one, rank_word)
            parts.append(f"{c.name}（{h}）" if h else c.name)
        return self.pick(COLUMN_LEADS).format(cols="、".join(parts))

    # ------------------------------------------------------------------ questions

    def table(self, shape: str, what: str, plural: str, one: str, columns: list[Column], when: str,
              rank_word: str = "") -> str:
        purpose = self.pick(PURPOSES[shape]).format(plural=plural)
        ask = self.pick(ASKS[shape]).format(what=what)
        cols = self.columns_text(columns, one, rank_word)
        closing = self.pick(CLOSINGS).format(one=one)
        # most tasks state a rule, some leave it to the reader; chosen by the question's own words,
        # so the task draws that follow are those they were without rules
        rules = [*RULES[shape], ""]
        rule = rules[stable_hash("rule", purpose, ask, when) % len(rules)]
        return "".join(x for x in (purpose, ask, when, rule, cols, closing) if x)

    def when_now(self) -> str:
        return self.pick(WHEN_NOW).format(date=self.date())

    def when_history(self) -> str:
        return self.pick(WHEN_HISTORY).format(date=self.date())

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

"""Which of a page's facts (its `page_facts` rows) one sentence or cell states.

A block states a fact when it holds the fact's value in a form the page checker accepts
(`web.text`): a full date in any written form, a number up to rounding (or scaled, "1.2
million"), a string, or for a link the name of the entity at its other end (both ends' names
when the page is about neither). The page checker holds whole pages to their facts; this reads
the same surface forms one block at a time, so the marks show where on the page each fact is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ..web import dates_in, numbers_in, same_on_page, scaled_in
from .data import FactRow
from .markdown import escape


class Marker:
    """`marker(text)` -> the attributes marking a block with the facts it states ("" for none)."""

    def __init__(self, facts: Sequence[FactRow], subject: str | None):
        self.facts = list(facts)
        self.subject = subject
        self.used: set[int] = set()
        self._names = []
        for f in self.facts:
            if f.value_type == "entity":
                ends = [n for e, n in ((f.subject, f.subject_name), (f.value, f.value_name or "")) if e != subject and n]
                self._names.append([n.lower() for n in ends])
            else:
                self._names.append([])

    def states(self, text: str) -> list[int]:
        if not text:
            return []
        low = text.lower()
        dates: set[dt.date] | None = None
        nums: list[float] | None = None
        out = []
        for i, f in enumerate(self.facts):
            vt = f.value_type
            if vt == "entity":
                ok = bool(self._names[i]) and all(n in low for n in self._names[i])
            elif vt == "date":
                if dates is None:
                    dates, rest = dates_in(text)
                    nums = numbers_in(rest) + [x for pair in scaled_in(rest) for x in pair]
                ok = dt.date.fromisoformat(f.value) in dates
            elif vt in ("int", "float"):
                if nums is None:
                    dates, rest = dates_in(text)
                    nums = numbers_in(rest) + [x for pair in scaled_in(rest) for x in pair]
                v = float(f.value)
                ok = any(same_on_page(x, v) for x in nums)
            elif vt == "bool":
                ok = False
            else:
                ok = bool(f.value) and f.value.lower() in low
            if ok:
                out.append(i)
        return out

    def __call__(self, text: str) -> str:
        got = self.states(text)
        if not got:
            return ""
        self.used.update(got)
        title = "; ".join(f"{self.facts[i].label}: {self.facts[i].shown_value}" for i in got)
        return f' data-f="{" ".join(str(i) for i in got)}" title="{escape(title)}"'

"""The grounding check: every training sample is supported by what the model saw in it.

Run per sample (`context.samples`) at every export and in the tests. A sample passes when:

- **opens**: every URL it opens with `web_extractor` appears earlier in the sample's visible
  context (the system prompt, the task and any state carried into it, and tool results; never
  the assistant's own text), and so does every URL a research state it writes names;
- **cells**: every informative cell of the answer it submits (3 characters or more, not a
  placeholder such as "unknown") appears in its visible context, compared after the date and
  number normalisation the scorer uses: a date in any style the web writes, a number however
  it is grouped or scaled ("1.2 million"), a name or text case- and space-insensitively, each
  item of a list. A rank is grounded when the values it orders are (the policy's `ranked`
  claim names them), a count when it is not informative or appears;
- **claims**: every count its narration states (`Episode.claims`: rows submitted, candidates
  found, candidates dropped, list pages read, tries of a failing page, progress, values
  ranked) is written in its message and equals what the trajectory's actions and observations
  show: the rows of the submitted table, the calls made, the pages opened, the names seen.

A state is a summary the model wrote, so what a later segment takes from it is only as good
as the state: a state's URLs are checked against its own segment, and so, through the same
rule applied segment by segment, is everything carried forward.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field

from ..language import date_forms, date_of, scale_alternation, scale_factors, scale_words
from ..tasks import WIDESEARCH, norm_column, parse_date, parse_table
from .context import Sample, samples
from .reading import DATE_RE, NUMBER_RE, PAGE_OF, URL_RE, plain_number, urls_in

_SCALED = re.compile(rf"([-−]?\d[\d,]*(?:\.\d+)?)\s*({scale_alternation()})")
_SCALE = scale_words()
PLACEHOLDERS = {"unknown", "present", "n/a", "none", "not found", "—", "-", "未知", "至今", "不详"}
DERIVED = ("rank", "count")  # cells computed from other values: grounded through them


@dataclass
class SampleCheck:
    """What the grounding check found in one sample."""

    opens: int = 0
    unseen_opens: list[str] = field(default_factory=list)
    state_urls: int = 0
    unseen_state_urls: list[str] = field(default_factory=list)
    cells: int = 0  # informative answer cells
    visible_cells: int = 0
    missing_cells: list[str] = field(default_factory=list)
    claims: int = 0
    contradicted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.unseen_opens or self.unseen_state_urls or self.missing_cells or self.contradicted)

    def problems(self) -> list[str]:
        out = [f"opened {u} before anything showed it" for u in self.unseen_opens]
        out += [f"its state names {u}, which it never saw" for u in self.unseen_state_urls]
        out += [f"answer cell {c!r} appears nowhere in its context" for c in self.missing_cells]
        return out + [f"narration: {c}" for c in self.contradicted]


class _Visible:
    """The context visible so far in a sample, with the URLs, numbers and dates it holds (each
    part is read once, when it is first asked about)."""

    def __init__(self):
        self.parts: list[str] = []
        self.urls: set[str] = set()
        self._folded: list[str] = []
        self._text = ""
        self._text_of: list[str] = []
        self._read = 0  # parts whose numbers and dates are in the sets
        self._numbers: set[float] = set()
        self._dates: set[str] = set()

    def add(self, text: str) -> None:
        if not text:
            return
        self.parts.append(text)
        self.urls.update(urls_in(text))

    @property
    def folded(self) -> list[str]:
        """The parts case-folded, their whitespace collapsed (a value never spans two messages)."""
        if len(self._folded) < len(self.parts):
            self._folded += [" ".join(p.casefold().split()) for p in self.parts[len(self._folded):]]
        return self._folded

    @property
    def text(self) -> str:
        if len(self._text_of) != len(self.parts):
            self._text = " ".join(self.folded)
            self._text_of = list(self.parts)
        return self._text

    def _scan(self) -> None:
        while self._read < len(self.parts):
            raw = self.parts[self._read]
            self._read += 1
            self._numbers.update(float(m.group(0).replace(",", "").replace("−", "-")) for m in NUMBER_RE.finditer(raw))
            for m in _SCALED.finditer(raw):  # as scaled, and in a unit that holds a scale ('1.856亿美元': 185.6 百万美元)
                big = float(m.group(1).replace(",", "").replace("−", "-")) * _SCALE[m.group(2)]
                self._numbers.update((big, *(big / f for f in scale_factors())))
            for m in DATE_RE.finditer(raw):
                try:
                    d = date_of(m)
                except (KeyError, ValueError):
                    continue
                self._dates.add(f"{d[0]:04d}-{d[1]:02d}-{d[2]:02d}")

    @property
    def numbers(self) -> set[float]:
        self._scan()
        return self._numbers

    @property
    def dates(self) -> set[str]:
        self._scan()
        return self._dates

    def has_text(self, value: str) -> bool:
        v = " ".join(str(value).casefold().split())
        return bool(v) and any(v in p for p in self.folded)

    def has_number(self, value: float) -> bool:
        # as most pages write it first (plain, or grouped in thousands), then every number read
        forms = {plain_number(value)}
        if float(value).is_integer() and abs(value) >= 1000:
            forms.add(f"{int(value):,}")
        if any(_standalone(p, f) for p in self.folded for f in forms):
            return True
        nums = self.numbers
        return value in nums or any(abs(x - value) <= 1e-9 * max(1.0, abs(value)) for x in nums)

    def has_date(self, iso: str) -> bool:
        y, m, d = (int(x) for x in iso.split("-"))
        forms = (iso, *date_forms(dt.date(y, m, d)))
        return any(f in p for p in self.folded for f in forms) or iso in self.dates


def _standalone(text: str, number: str) -> bool:
    """Whether `number` is written in `text` as a number of its own ('181' in '181 cm', not in '1811'
    or '1.181')."""
    i = text.find(number)
    n = len(number)
    while i >= 0:
        before = text[i - 1] if i else " "
        after = text[i + n:i + n + 2]
        if not (before.isdigit() or before in ".,") and not (after[:1].isdigit() or (after[:1] in ".," and after[1:2].isdigit())):
            return True
        i = text.find(number, i + 1)
    return False


def _number(cell: str) -> float | None:
    m = _SCALED.search(cell)
    if m:
        return float(m.group(1).replace(",", "").replace("−", "-")) * _SCALE[m.group(2)]
    m = NUMBER_RE.search(cell)
    return float(m.group(0).replace(",", "").replace("−", "-")) if m else None


def informative(cell: str) -> bool:
    c = str(cell).strip()
    return len(c) >= 3 and c.casefold() not in PLACEHOLDERS


def cell_visible(cell: str, kind: str, vis: _Visible) -> bool:
    """Whether a cell of a column of `kind` (date, number, text, list) appears in the context."""
    c = str(cell).strip()
    if kind == "list":
        items = [x.strip() for x in re.split(r"[;；]", c) if x.strip()]
        return all(vis.has_text(x) for x in items)
    if kind == "date":
        d = parse_date(c)
        if d is not None:
            return vis.has_date(d.isoformat())
    if kind == "number":
        v = _number(c)
        if v is not None:
            return vis.has_number(v)
    if vis.has_text(c):
        return True
    v = _number(c) if re.fullmatch(r"[-−]?[\d,.]+", c) else None
    return v is not None and vis.has_number(v)


def _column_kinds(record: dict, header: list[str]) -> list[tuple[str, str]]:
    """Per answer column: (role, kind), from the task's columns, roles and evaluation."""
    cols = record.get("columns") or []
    roles = record.get("column_roles") or ["key"] + ["value"] * (len(cols) - 1)
    pipe = (record.get("evaluation") or {}).get("eval_pipeline") or {}
    by = {}
    for name, role in zip(cols, roles):
        entry = pipe.get(norm_column(name)) or {}
        pre = entry.get("preprocess") or []
        kind = "date" if "norm_date" in pre else "number" if "extract_number" in pre else \
            "list" if "llm_judge" in (entry.get("metric") or []) or entry.get("llm_free") else "text"
        by[norm_column(name)] = (role, kind)
    return [by.get(norm_column(h), ("value", "text")) for h in header]


def _calls(msg: dict) -> list[tuple[str, dict]]:
    out = []
    for c in msg.get("tool_calls") or ():
        fn = c.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except (ValueError, TypeError):
            args = {}
        out.append((fn.get("name") or "", args if isinstance(args, dict) else {}))
    return out


def _answer(msg: dict) -> str | None:
    for name, args in _calls(msg):
        if name == "final_answer" and isinstance(args.get("answer"), str):
            return args["answer"]
    return None


def check_trajectory(trajectory: dict, record: dict, mode: str = "segments", scorer: str = WIDESEARCH) -> list[tuple[Sample, SampleCheck]]:
    """Every sample of a trajectory with its check (`record`: the task's record)."""
    msgs = trajectory["messages"]
    claims: dict[int, list] = {}
    for i, kind, value, ref in trajectory.get("claims") or ():
        claims.setdefault(i, []).append((kind, value, ref))
    ranked: dict[str, str] = {}  # name -> the value it was ranked by (the latest `ranked` claim)
    shared: set[str] = set()  # names two candidates share (namesakes: one may be kept, the other dropped)
    for i in sorted(claims):
        for kind, _, ref in claims[i]:
            if kind == "ranked":
                ranked = {str(n).casefold(): v for n, v in ref if v}
            elif kind == "candidates":
                names = [str(n).casefold() for n in ref or ()]
                shared |= {n for n in names if names.count(n) > 1}
    opened_before = _opens_index(msgs)
    out = []
    for s in samples(trajectory, mode):
        out.append((s, _check(s, msgs, claims, ranked, shared, opened_before, record, scorer)))
    return out


def _opens_index(msgs: list[dict]) -> list[list[str]]:
    """Per message index, the URLs opened by the calls of messages before it (the actions so far)."""
    out, acc = [], []
    for m in msgs:
        out.append(list(acc))
        acc += [a.get("url") for n, a in _calls(m) if n == "web_extractor" and isinstance(a.get("url"), str)]
    return out


def _check(s: Sample, msgs: list[dict], claims: dict, ranked: dict, shared: set[str], opened_before: list, record: dict,
           scorer: str) -> SampleCheck:
    res = SampleCheck()
    vis = _Visible()
    n_prefix = len(s.messages) - (s.turns[1] - s.turns[0]) if s.segment >= 0 else 2
    index = list(range(-n_prefix, 0)) + list(range(s.turns[0], s.turns[1])) if s.segment >= 0 else None
    if index is None:  # a whole trajectory: its messages are the trajectory's, compaction exchanges left out
        index = _full_index(s, msgs)
    last = len(s.messages) - 1
    for j, m in enumerate(s.messages):
        gi = index[j]
        if m["role"] != "assistant":
            vis.add(m.get("content") or "")
            continue
        for name, args in _calls(m):
            if name == "web_extractor":
                res.opens += 1
                url = args.get("url")
                if not isinstance(url, str) or url not in vis.urls:
                    res.unseen_opens.append(str(url))
        if j == last and not s.final:  # the research state it writes: only what it saw
            for u in {u.rstrip(".,;:") for u in URL_RE.findall(m.get("content") or "")}:
                res.state_urls += 1
                if u not in vis.urls:
                    res.unseen_state_urls.append(u)
        answer = _answer(m) if s.final else None
        if answer is None and s.final and j == last and not m.get("tool_calls"):
            answer = m.get("content")
        if answer is not None:
            _check_cells(answer, record, vis, ranked, scorer, res)
        for kind, value, ref in claims.get(gi, ()) if gi is not None and gi >= 0 else ():
            res.claims += 1
            why = _claim_problem(kind, value, ref, m, vis, opened_before[gi] if gi < len(opened_before) else [], answer, scorer,
                                 shared)
            if why:
                res.contradicted.append(why)
    return res


def _full_index(s: Sample, msgs: list[dict]) -> list[int | None]:
    """For a whole-trajectory sample, the trajectory index of each of its messages."""
    out: list[int | None] = [None, None]
    want = s.messages[2:]
    k = 0
    for i in range(2, len(msgs)):
        if k < len(want) and msgs[i] is want[k]:
            out.append(i)
            k += 1
    while len(out) < len(s.messages):
        out.append(None)
    return out


def _check_cells(answer: str, record: dict, vis: _Visible, ranked: dict, scorer: str, res: SampleCheck) -> None:
    table = parse_table(answer, scorer)
    if table is None:
        return
    header, rows = table
    kinds = _column_kinds(record, header)
    for row in rows:
        name = row[0] if row else ""
        for cell, (role, kind) in zip(row, kinds):
            if role in DERIVED:
                if role == "rank" and ranked:
                    v = ranked.get(str(name).casefold())
                    if v is None:
                        continue
                    res.cells += 1
                    if cell_visible(v, "number", vis):
                        res.visible_cells += 1
                    else:
                        res.missing_cells.append(f"{name}: ranked by {v}")
                    continue
                if not informative(cell):
                    continue
            if not informative(cell):
                continue
            res.cells += 1
            if cell_visible(cell, kind, vis):
                res.visible_cells += 1
            else:
                res.missing_cells.append(str(cell))


def _claim_problem(kind: str, value, ref, msg: dict, vis: _Visible, opened: list[str], answer: str | None, scorer: str,
                   shared: set[str] = frozenset()) -> str | None:
    """Why a claim contradicts what the trajectory did or showed (None: it holds)."""
    text = msg.get("content") or ""

    def says(n) -> bool:
        return re.search(rf"(?<![\d.,]){re.escape(str(n))}(?![\d])", text) is not None

    if kind not in ("ranked", "progress") and not says(value):
        return f"{kind} {value} is not what the message says"
    if kind == "rows":
        table = parse_table(answer or "", scorer)
        got = len(table[1]) if table else 0
        return None if got == value else f"says {value} rows, submits {got}"
    if kind in ("dropped", "rejected", "candidates"):
        # a dropped count may name apart the candidates whose names a kept row shares (namesakes)
        names = list(ref.get("names", [])) if isinstance(ref, dict) else list(ref or [])
        shared = shared | {str(n).casefold() for n in (ref.get("shared", []) if isinstance(ref, dict) else [])}
        if len(names) + (len(ref.get("shared", [])) if isinstance(ref, dict) else 0) != value:
            return f"says {value} {kind}, names {len(names)}"
        if kind == "candidates":
            unseen = [n for n in names if not vis.has_text(n)]
            if unseen:
                return f"counts {len(unseen)} candidate(s) it never saw, e.g. {unseen[0]!r}"
        if kind == "dropped" and answer:
            table = parse_table(answer, scorer)
            keys = {str(r[0]).casefold() for r in table[1]} if table else set()
            both = [n for n in names if str(n).casefold() in keys and str(n).casefold() not in shared]
            if both:
                return f"says {both[0]!r} was dropped, but it is in the answer"
        return None
    if kind == "list_pages_read":
        urls = set(ref or [])
        if len(urls) != value:
            return f"says {value} list pages read, names {len(urls)}"
        never = [u for u in urls if u not in opened]
        return f"says it read {never[0]}, never opened" if never else None
    if kind == "list_pages_total":
        said = any(int(m.group("n" + m.lastgroup[1:])) == value for m in PAGE_OF.finditer(vis.text))  # 'page 1 of 3'
        return None if said else f"says the list has {value} pages; no page said so"
    if kind == "tries":
        n = sum(1 for u in opened if u == ref)
        return None if n == value else f"says {ref} was tried {value} times, opened {n}"
    if kind == "progress":
        r = ref or {}
        total, kept, left = r.get("total"), r.get("kept"), r.get("left")
        if None in (total, kept, left) or not (0 <= kept <= value <= total) or left != total - value:
            return f"progress {value}/{total}, {kept} kept, {left} left does not add up"
        return None if says(total) and says(kept) else "progress counts not all stated"
    if kind == "ranked":
        pairs = list(ref or [])
        if len(pairs) != value:
            return f"says {value} values ranked, names {len(pairs)}"
        unseen = [n for n, v in pairs if v and not cell_visible(v, "number", vis)]
        return f"ranks {unseen[0]!r} by a value it never saw" if unseen else None
    return None


@dataclass
class GroundingReport:
    """Counts over a dataset's samples (the card and the run summary report them)."""

    samples: int = 0
    failed: int = 0
    opens: int = 0
    unseen_opens: int = 0
    state_urls: int = 0
    unseen_state_urls: int = 0
    cells: int = 0
    visible_cells: int = 0
    claims: int = 0
    contradicted: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, sample_id: str, c: SampleCheck) -> None:
        self.samples += 1
        self.failed += not c.ok
        self.opens += c.opens
        self.unseen_opens += len(c.unseen_opens)
        self.state_urls += c.state_urls
        self.unseen_state_urls += len(c.unseen_state_urls)
        self.cells += c.cells
        self.visible_cells += c.visible_cells
        self.claims += c.claims
        self.contradicted += len(c.contradicted)
        if not c.ok and len(self.examples) < 5:
            self.examples.append(f"{sample_id}: {c.problems()[0]}")

    def merge(self, other: dict) -> None:
        """Add another report's counts (as `as_dict` gave them)."""
        for k, v in other.items():
            if k == "examples":
                self.examples += v[:max(0, 5 - len(self.examples))]
            elif k in self.__dict__:
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["visible_cell_share"] = round(self.visible_cells / self.cells, 6) if self.cells else 1.0
        return d

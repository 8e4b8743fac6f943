"""How honest and how varied trajectories are, measured from the trajectories themselves.

- `reasoning_skeletons`: the sentences of the assistant's messages with names, links, dates and
  numbers folded (`web.grammar.skeleton`, the measure the web's variety report uses): a policy
  that fills twenty f-strings shows a few dozen skeletons however many trajectories it writes.
- `unseen_opens`: pages opened whose address no earlier tool result showed (an agent can only
  open what a search or a page showed it), over the whole trajectory, its results replayed
  through `Environment.execute` (the grounding check, `grounding.py`, asks the same of each
  sample, against what that sample shows).
- `rejected_opens`: on tasks with NOT or OR, how many page opens were of candidates that did not
  make it into the answer (checking and dropping candidates is the skill those tasks train).
- `sample_tokens`: the length of a training sample (a context segment, `context.samples`), tool
  schemas included, with a tokenizer or the 4-characters-a-token estimate.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable

from ..language import written_in
from ..plumbing import URL_PATTERN
from ..tasks import negates_or_chooses, parse_combo
from ..web import prose_sentences, skeleton

_URL = re.compile(URL_PATTERN)


def reasoning_skeletons(trajectories: Iterable[dict]) -> Counter:
    """Skeleton -> sentences, over every assistant message of the trajectories."""
    out: Counter = Counter()
    for t in trajectories:
        for m in t["messages"]:
            if m["role"] == "assistant" and m.get("content"):
                for s in prose_sentences(m["content"]):
                    out[skeleton(s, None)] += 1
    return out


def _calls(t: dict) -> list[tuple[str, dict]]:
    out = []
    for m in t["messages"]:
        for c in m.get("tool_calls") or ():
            try:
                args = json.loads(c["function"]["arguments"])
            except ValueError:
                args = {}
            out.append((c["function"]["name"], args if isinstance(args, dict) else {}))
    return out


def unseen_opens(t: dict, execute: Callable[..., tuple[str, str | None]], hide: frozenset[str] = frozenset()) -> list[str]:
    """URLs a trajectory opened that no earlier result of its own showed. `execute` replays a call
    (`Environment.execute`) for the original text of every result; `hide`: the pages the episode's
    searches left out (`Environment.hidden_for` its task: a training task's searches do not find
    held-out evidence, so the same search without it lists other results)."""
    key = f"{t['instance_id']}#{t['sample']}"
    shown: set[str] = set()
    bad = []
    for i, (name, args) in enumerate(_calls(t)):
        if name == "final_answer":
            continue
        if name == "web_extractor":
            url = args.get("url", "")
            if url not in shown:
                bad.append(url)
        try:
            text, _ = execute(key, i, name, args, hide)
        except Exception:  # noqa: BLE001 - a malformed call shows nothing
            continue
        shown.update(u.rstrip(".,;") for u in _URL.findall(text))
    return bad


def rejected_opens(t: dict, record: dict, type_of: Callable[[str], tuple[str, str] | None]) -> tuple[int, int]:
    """(opens of candidates left out of the answer, all page opens) of one trajectory: an opened
    article of an entity of the task's row type whose name no cell of the answer holds.
    `type_of(url)` gives an article's (entity type, name), or None for other pages."""
    answer = t.get("answer") or ""
    cells = {c.strip().casefold() for line in answer.splitlines() if line.startswith("|") for c in line.strip("|").split("|")}
    row_type = (record.get("question") or {}).get("type")
    total = rejected = 0
    for name, args in _calls(t):
        if name != "web_extractor":
            continue
        total += 1
        got = type_of(args.get("url", ""))
        if got is not None and got[0] == row_type and got[1].casefold() not in cells:
            rejected += 1
    return rejected, total


def negating(record: dict) -> bool:
    """A task with NOT or OR among its conditions."""
    combo = record.get("combo") or (record.get("question") or {}).get("combo") or ""
    return negates_or_chooses(parse_combo(combo))


def sample_tokens(messages: list[dict], tools: list[dict], count: Callable[[str], int]) -> int:
    """Tokens of a training sample (`context.samples`): its messages, their tool calls and the
    tool schemas, with the chat template's few tokens each."""
    from ..tokens import MESSAGE_OVERHEAD

    n = count(json.dumps(tools, ensure_ascii=False))
    for m in messages:
        n += count(m.get("content") or "") + MESSAGE_OVERHEAD
        for c in m.get("tool_calls") or ():
            n += count(c["function"]["name"]) + count(c["function"]["arguments"]) + MESSAGE_OVERHEAD
    return n


# --------------------------------------------------------------------------- what SFT trains on

_HOST = re.compile(r"(?<![A-Za-z0-9.-])(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|info|example|io|gov|edu)\b")
_NUM = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")


def is_state(message: dict) -> bool:
    """A research state: an assistant message without tool calls that opens with its heading."""
    return message["role"] == "assistant" and (message.get("content") or "").lstrip().startswith("## ")


class NameMask:
    """Masks a world's entity names and aliases in text (longest first), so that sentences that
    differ only in the entities they name read as one skeleton."""

    _BOUND = re.compile(r"\b")

    def __init__(self, names: Iterable[str]):
        self.names = {n.strip() for n in names if n and len(n.strip()) >= 2}
        self.max_len = max(map(len, self.names), default=0)

    @classmethod
    def of_world(cls, world_path) -> NameMask:
        from ..world import open_world

        info = open_world(world_path)
        names: list[str] = []
        with info.connect() as con:
            for t in info.world.types:
                names += [r[0] for r in con.execute(f'SELECT name FROM "{t}"').fetchall()]
            names += [r[0] for r in con.execute("SELECT alias FROM aliases").fetchall()]
        return cls(names)

    def _hits(self, text: str):
        """(start, end) of each name in `text`, longest first, left to right."""
        if not written_in(text[:200]).spaced:  # names run into the text: every start, every length
            starts = range(len(text))
            ends = None
        else:  # a name starts and ends on word boundaries
            bounds = sorted({m.start() for m in self._BOUND.finditer(text)})
            starts, ends = bounds, bounds
        i = 0
        for st in starts:
            if st < i:
                continue
            if ends is None:
                cands = range(min(len(text), st + self.max_len), st + 1, -1)
            else:
                cands = [e for e in reversed(ends) if st < e <= st + self.max_len]
            hit = next((e for e in cands if text[st:e] in self.names), None)
            if hit is not None:
                yield st, hit
                i = hit

    def __call__(self, text: str) -> str:
        out, i = [], 0
        for st, end in self._hits(text):
            out.append(text[i:st] + "<N>")
            i = end
        out.append(text[i:])
        return "".join(out)

    def found(self, text: str) -> list[str]:
        """The world's names `text` states, in order."""
        return [text[st:end] for st, end in self._hits(text)]


def narration_sentences(messages: Iterable[dict]) -> list[str]:
    """The sentences of the assistant's narration (its messages but the research states)."""
    out = []
    for m in messages:
        if m["role"] != "assistant" or is_state(m) or not m.get("content"):
            continue
        text = m["content"]
        parts = written_in(text[:200]).reading.sentences.split(text)
        out += [p.strip() for p in parts if p and p.strip()]
    return out


def narration_skeleton(sentence: str, mask: NameMask) -> str:
    """A sentence with URLs, hosts, the world's names and numbers masked."""
    s = _URL.sub("<URL>", sentence)
    s = _HOST.sub("<HOST>", s)
    s = mask(s)
    return _NUM.sub("<#>", s)


def skeleton_shares(counts: Counter, many: int = 20) -> dict:
    """Of all sentences: the share of the 10 commonest skeletons, of the commonest one, and of the
    sentences whose skeleton occurs `many` times or more."""
    total = sum(counts.values()) or 1
    top = counts.most_common(10)
    return {"sentences": sum(counts.values()), "skeletons": len(counts), "top10": sum(n for _, n in top) / total,
            "top1": (top[0][1] / total) if top else 0.0, "frequent": sum(n for n in counts.values() if n >= many) / total,
            "examples": [s for s, _ in top[:3]]}


def opens_with_connective(text: str) -> bool:
    """Whether a message starts as if it continued another ("Moving on: ...", "接下来，...")."""
    t = text.lstrip().lower()
    lang = written_in(t[:200])
    for c in lang.connectives:
        if t.startswith(c) and lang.word_at(t, 0, len(c)):
            return True
    return False


def state_tables_with_repeated_columns(text: str) -> int:
    """Tables in a state whose header names one column twice (any case)."""
    bad = 0
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[i + 1].startswith("|---"):
            cols = [c.strip().casefold() for c in line.strip().strip("|").split("|")]
            bad += len(cols) != len(set(cols))
    return bad


def count_cells_below_gold(answer: str | None, record: dict, header: list[str], rows: list[list[str]]) -> tuple[int, int]:
    """(count cells of an answer below their gold value, count cells compared): the columns
    that count a relation's links, on the rows the answer and the gold share by key."""
    from ..tasks import norm_column, parse_table

    cols = [c["name"] for c in (record.get("question") or {}).get("columns", []) if isinstance(c, dict) and c.get("agg") == "count"]
    parsed = parse_table(answer or "")
    if not cols or parsed is None:
        return 0, 0
    a_head, a_rows = parsed
    keys = [norm_column(k) for k in record["evaluation"]["unique_columns"]]
    g_idx = {norm_column(h): i for i, h in enumerate(header)}
    a_idx = {norm_column(h): i for i, h in enumerate(a_head)}
    if not all(k in g_idx and k in a_idx for k in keys):
        return 0, 0

    def key(row, idx):
        return tuple(str(row[idx[k]]).strip().casefold() if idx[k] < len(row) else "" for k in keys)

    gold = {key(r, g_idx): r for r in rows}
    below = compared = 0
    for r in a_rows:
        g = gold.get(key(r, a_idx))
        if g is None:
            continue
        for c in map(norm_column, cols):
            if c not in g_idx or c not in a_idx or a_idx[c] >= len(r):
                continue
            try:
                want, got = int(str(g[g_idx[c]]).replace(",", "")), int(str(r[a_idx[c]]).replace(",", ""))
            except ValueError:
                continue
            compared += 1
            below += got < want
    return below, compared



def held_out_lines(tasks: list, splits: dict[str, str], trajectories: Iterable[dict]) -> dict:
    """How much held-out gold training episodes were shown: the (key, value) pairs of the
    held-out tasks' gold tables (a row's key, one of its cells: a number also as pages group its
    digits, a date also in its language's prose styles, each item of a list) that one line of a
    training trajectory's tool results states, both as written. A snippet naming a test-split
    company beside its revenue is such a line; the export reports the share."""
    import datetime as dt

    import polars as pl

    from ..language import get as get_language
    from ..tasks import norm_column

    pairs: set[tuple[str, str, str]] = set()  # (key, value, the value as a line may write it)
    for t in tasks:
        if splits.get(t.id, "train") == "train" or not t.rows:
            continue
        idx = {norm_column(h): i for i, h in enumerate(t.header)}
        keys = [idx.get(norm_column(k)) for k in t.record["evaluation"]["unique_columns"]]
        if len(keys) != 1 or keys[0] is None:
            continue
        lang = get_language(t.record.get("language"))
        for row in t.rows:
            key = str(row[keys[0]]).strip()
            if len(key) < 3:
                continue
            for i, cell in enumerate(row):
                if i == keys[0]:
                    continue
                for v in (x.strip() for x in str(cell).split(";")):
                    if len(v) < 3:  # a bare '12' or 'no' is on every page
                        continue
                    forms = {v}
                    if re.fullmatch(r"-?\d+", v):
                        forms.add(f"{int(v):,}")
                    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
                        try:
                            day = dt.date.fromisoformat(v)
                        except ValueError:
                            day = None
                        if day is not None:
                            forms.update(lang.date(day, s) for s in lang.date_styles)
                    pairs.update((key, v, f) for f in forms)
    if not pairs:
        return {"pairs": 0, "on_a_line": 0, "share": 0.0}
    lines = {ln for t in trajectories if splits.get(t["instance_id"], "train") == "train"
             for m in t["messages"] if m.get("role") == "tool" for ln in str(m.get("content") or "").split("\n") if len(ln) > 5}
    total = len({(k, v) for k, v, _ in pairs})
    if not lines:
        return {"pairs": total, "on_a_line": 0, "share": 0.0}
    keys = sorted({k for k, _, _ in pairs})
    df = pl.DataFrame({"line": sorted(lines)}).filter(pl.col("line").str.contains_any(keys))
    found = (df.with_columns(key=pl.col("line").str.extract_many(keys, overlapping=True)).explode("key")
             .join(pl.DataFrame(sorted(pairs), schema=["key", "value", "form"], orient="row"), on="key")
             .filter(pl.col("line").str.contains(pl.col("form"), literal=True))
             .select("key", "value").unique())
    return {"pairs": total, "on_a_line": found.height, "share": round(found.height / total, 4)}

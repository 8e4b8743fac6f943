"""Vectorised samplers the planner composes: seeded child generators, content-derived ids,
unique names from templates, numeric and date draws, and weighted target picks inside
group/date windows. Every function works on whole columns (numpy/polars); none loops per row."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import PlanError
from ..language import BASE
from ..language import get as get_language
from ..plumbing import stable_hash
from .pack import MAX_EDITIONS, Duration, NamePart, NameSpec, NumericAttr, clip

# Dates are handled as int32 days since 1970-01-01 (polars' physical Date).
NEG_INF = np.int64(-(2**40))
POS_INF = np.int64(2**40)
# Faker values go into pools of up to 200,000 strings: each must be text of bounded length.
MAX_FAKER_CHARS = 300
# Integer attributes stay exact as float64 (and far inside int64).
MAX_EXACT_INT = 2**53
YEAR_DAYS = 365.2425
# How long after the date it is anchored on a dated fact happens when a pack does not say
# (a headquarters after the founding, a first tenure after its window opens) and how far
# before an age limit a tenure ends: days to months, never the same day, so that no fact
# falls on an anniversary of the date it was derived from.
DEFAULT_DELAY = Duration(distribution="exponential", params={"scale": 90.0}, min=1, max=730, unit="days")

DEFAULT_SYLLABLES = (
    "ka lo ri ven dor mar tel sa ni bra tor el an is ul ve mo ra li den gal thu quin zar bel cor dra fen hal "
    "jor kel lun mer nor pel ros sil tam val wyn yor zen ber cas del fa gor hes ir kos lar mi nes or pra sel "
    "tis ur vor xa"
).split()





def child_rng(root_seed: int, *names: object) -> np.random.Generator:
    """A named child generator: independent of every other name and of generation order."""
    return np.random.default_rng(np.random.SeedSequence([root_seed & (2**63 - 1), stable_hash(*names)]))


# --------------------------------------------------------------------------- ids

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def hash_strings(values: pl.Series, salt: int) -> np.ndarray:
    """FNV-1a over each string's UTF-8 bytes, salted and finalised with splitmix64.

    Vectorised over rows: the loop runs over character positions (bounded by the
    longest string), never over rows."""
    arr = pa.array(values.to_arrow()).cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(1, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(arr), _FNV_OFFSET, dtype=np.uint64)
    maxlen = int(lengths.max()) if len(lengths) else 0
    with np.errstate(over="ignore"):
        for pos in range(maxlen):
            live = np.nonzero(lengths > pos)[0]
            byte = data[starts[live] + pos].astype(np.uint64)
            h[live] = (h[live] ^ byte) * _FNV_PRIME
        return _splitmix64(h ^ np.uint64(salt & (2**64 - 1)))


def hex_ids(prefix: str, h: np.ndarray) -> pl.Series:
    """Format 64-bit hashes as '<prefix>_<16 hex digits>'."""
    shifts = np.arange(60, -1, -4, dtype=np.uint64)
    nibbles = ((h[:, None] >> shifts[None, :]) & np.uint64(0xF)).astype(np.intp)
    chars = _HEX[nibbles]
    hexes = np.frombuffer(chars.tobytes(), dtype="S16").astype("U16")
    return pl.Series("id", hexes, dtype=pl.String).str.replace(r"^", f"{prefix}_")


def entity_ids(type_name: str, names: pl.Series, root_seed: int) -> pl.Series:
    """Content-derived ids: a hash of (seed, type, unique name)."""
    return hex_ids(type_name, hash_strings(names, stable_hash("entity-id", root_seed, type_name)))


# --------------------------------------------------------------------------- names


@lru_cache(maxsize=256)
@lru_cache(maxsize=32)  # validate counts a pool's distinct values, then the plan draws from it
def faker_pool(provider: str, locale: str, size: int, root_seed: int) -> tuple[str, ...]:
    """Distinct outputs of one faker provider, drawn once per world (`size` calls) so that rows
    can then be sampled from the pool with numpy instead of calling faker per row. Types that
    use the same provider share its pool; each samples from it with its own generator."""
    from faker import Faker

    fk = Faker(locale)
    fk.seed_instance(stable_hash("faker-pool", root_seed, provider, size))
    fn = getattr(fk, provider)
    seen: dict[str, None] = {}
    for _ in range(size):
        v = fn()
        if not isinstance(v, str) or len(v) > MAX_FAKER_CHARS:
            raise PlanError(f"faker provider '{provider}' returned {clip(v)} ({type(v).__name__}); a faker provider must "
                            f"return text of at most {MAX_FAKER_CHARS} characters; choose another provider")
        seen[uninvert(v) if provider == "job" else v] = None
    return tuple(seen)


def uninvert(job: str) -> str:
    """An occupation as people write it, not as a register files it: 'Psychotherapist, child' ->
    'Child psychotherapist', 'Administrator, Civil Service' -> 'Civil Service administrator'
    (faker's English jobs put the head noun first in about a quarter of them)."""
    head, sep, qualifier = job.partition(", ")
    if not sep or ", " in qualifier:
        return job
    words = head.split()
    head = " ".join(w if w.isupper() or (w[:1].isupper() and i) else w.lower() for i, w in enumerate(words))
    qualifier, paren, aside = qualifier.partition(" (")  # 'Scientist, research (maths)' -> 'Research scientist (maths)'
    return qualifier[:1].upper() + qualifier[1:] + " " + head + (paren + aside if paren else "")


def faker_provider_problem(fk, provider: str) -> str | None:
    """Why `provider` cannot fill a pool (not a provider method, needs arguments, returns
    something other than short text), or None. Probes a few calls on a seeded copy."""
    gens = getattr(fk, "factories", None) or [fk]
    methods = {m for g in gens for p in g.get_providers() for m in dir(p) if not m.startswith("_")}
    fn = getattr(fk, provider, None) if provider in methods else None
    if not callable(fn):
        return "unknown faker provider"
    fk.seed_instance(0)
    for _ in range(5):
        try:
            v = fn()
        except Exception as exc:  # faker raises anything (TypeError for missing arguments, ImportError, ...)
            return f"faker.{provider}() cannot be called without arguments ({type(exc).__name__}: {clip(str(exc))})"
        if not isinstance(v, str):
            return f"faker.{provider}() returns {type(v).__name__}, not text; use a provider that returns a string"
        if len(v) > MAX_FAKER_CHARS:
            return f"faker.{provider}() returns text of {len(v):,} characters; the limit is {MAX_FAKER_CHARS}"
    return None


def _choice_series(choices) -> tuple[pl.Series, np.ndarray | None]:
    if isinstance(choices, dict):
        w = np.asarray(list(choices.values()), dtype=float)
        return pl.Series(list(choices), dtype=pl.String), w / w.sum()
    return pl.Series(list(choices), dtype=pl.String), None


def edition_words(values: np.ndarray, kind: str, language: str = BASE) -> pl.Series:
    """An edition's year or number as a name word: 2019, a season's 2019–20, 12, or the
    ordinal where the language writes one with a suffix: 12th (Chinese writes the number in its
    own frame: 第12届)."""
    s = pl.Series(np.asarray(values, np.int64)).cast(pl.String)
    if kind == "season":  # the two years a season spans: 2019–20
        nxt = pl.Series((np.asarray(values, np.int64) + 1) % 100).cast(pl.String).str.zfill(2)
        return s + "–" + nxt
    suffixes = get_language(language).ordinal_suffixes
    if kind != "ordinal" or suffixes is None:
        return s
    v = np.asarray(values, np.int64)
    last = np.where((v % 100 >= 11) & (v % 100 <= 13), 0, np.minimum(v % 10, len(suffixes["by_last_digit"]) - 1))
    suffix = np.where((v % 100 >= 11) & (v % 100 <= 13), suffixes["teens"], np.asarray(suffixes["by_last_digit"])[last])
    return s + pl.Series(suffix, dtype=pl.String)


def part_capacity(part: NamePart, locale: str, seed: int, related: float = 1.0) -> float:
    """How many distinct strings a name part can give: a faker part its pool's distinct values
    in the locale, a `via` part the `related` entities' distinct values."""
    if part.number is not None:
        return float(part.number.max - part.number.min + 1)
    if part.syllables is not None:
        k = len(part.syllables.inventory or DEFAULT_SYLLABLES)
        return float(sum(k ** j for j in range(part.syllables.min, part.syllables.max + 1)))
    if part.via is not None:
        return max(1.0, related)
    if part.edition is not None:  # one per edition: as many as the series holds
        return float(MAX_EDITIONS)
    if part.letter:
        return 26.0
    if part.fakers:  # rows split between the providers: the names any of them gives
        return float(len(set().union(*(faker_pool(f, locale, part.pool, seed) for f in [*part.fakers.values(), *([part.faker] if part.faker else [])]))))
    if part.faker:
        return float(len(faker_pool(part.faker, locale, part.pool, seed)))
    if part.cases is not None:
        return float(max([len(c) for c in part.cases.values()] + [len(part.choices or ())]))
    return float(len(part.choices or ()))


class _Part:
    """A compiled name part: draw the strings of some rows at once. `given` and `via` parts
    read a per-row context (the given attribute's values, the related entity's values)."""

    def __init__(self, part: NamePart, locale: str, seed: int, context: pl.Series | None = None):
        self.part, self.locale, self.seed = part, locale, seed
        self.syll = None
        self.number = part.number
        self.context = context
        self.cases: dict[str, tuple[pl.Series, np.ndarray | None]] = {}
        self.via = part.via is not None or part.edition is not None  # read whole from the context
        self.values = None
        self.p = None
        if part.fakers:  # a provider per value of the given attribute
            self.cases = {v: (pl.Series(faker_pool(f, locale, part.pool, seed), dtype=pl.String), None) for v, f in part.fakers.items()}
            if part.faker:
                self.values = pl.Series(faker_pool(part.faker, locale, part.pool, seed), dtype=pl.String)
        elif part.faker:
            self.values = pl.Series(faker_pool(part.faker, locale, part.pool, seed), dtype=pl.String)
        elif part.cases is not None:
            self.cases = {v: _choice_series(c) for v, c in part.cases.items()}
            if part.choices is not None:
                self.values, self.p = _choice_series(part.choices)
        elif part.choices is not None:
            self.values, self.p = _choice_series(part.choices)
        elif part.letter:
            self.values = pl.Series([chr(c) for c in range(65, 91)], dtype=pl.String)
        elif part.syllables is not None:
            self.syll = part.syllables
            self.values = pl.Series(part.syllables.inventory or DEFAULT_SYLLABLES, dtype=pl.String)

    def capacity(self) -> int:
        related = self.context.n_unique() if self.via and self.context is not None else 1
        return int(part_capacity(self.part, self.locale, self.seed, related))

    def _pick(self, values: pl.Series, p, n: int, rng) -> pl.Series:
        idx = rng.choice(len(values), size=n, p=p) if p is not None else rng.integers(0, len(values), n)
        return values.gather(idx)

    def draw(self, rows: np.ndarray, rng: np.random.Generator) -> pl.Series:
        n = len(rows)
        if self.via:
            return self.context.gather(rows).fill_null("")
        if self.cases:
            given = self.context.gather(rows)
            out = pl.Series([""] * n, dtype=pl.String)
            covered = np.zeros(n, bool)
            for v, (vals, p) in self.cases.items():
                sel = np.nonzero((given == v).fill_null(False).to_numpy())[0]
                if len(sel):
                    out = out.scatter(sel, self._pick(vals, p, len(sel), rng))
                    covered[sel] = True
            rest = np.nonzero(~covered)[0]
            if len(rest) and self.values is not None:
                out = out.scatter(rest, self._pick(self.values, self.p, len(rest), rng))
            return out
        if self.number is not None:
            return pl.Series(rng.integers(self.number.min, self.number.max + 1, n)).cast(pl.String)
        if self.syll is not None:
            k = rng.integers(self.syll.min, self.syll.max + 1, n)
            idx = rng.integers(0, len(self.values), (n, self.syll.max))
            cols = []
            for j in range(self.syll.max):
                col = self.values.gather(idx[:, j])
                cols.append(pl.when(pl.lit(pl.Series(k > j))).then(col).otherwise(pl.lit("")))
            word = pl.select(pl.concat_str(cols).alias("w")).to_series()
            return word.str.slice(0, 1).str.to_uppercase() + word.str.slice(1)
        return self._pick(self.values, self.p, n, rng)


def has_cjk(text: str) -> bool:
    """Whether text holds a CJK ideograph (Chinese words are not delimited by spaces)."""
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in text)


def register_sql_functions(con) -> None:
    """The functions a pack's derived SQL may call beyond DuckDB's own, on `con`:
    `latin(text)`, a text in lower-case Latin letters as an address writes it (Chinese in pinyin
    without tones: 利荣 -> 'lirong'; other letters ASCII-folded, anything else dropped)."""
    import pyarrow as pa

    def latin(arr):
        s = pl.Series(arr).cast(pl.String)
        py = pinyin_names(s)
        out = pl.select(pl.coalesce(py, s)).to_series().str.to_lowercase().str.normalize("NFKD") \
            .str.replace_all(r"[^a-z0-9]", "")
        return out.to_arrow().cast(pa.string())

    con.create_function("latin", latin, ["VARCHAR"], "VARCHAR", type="arrow", side_effects=False)


def pinyin_names(names: pl.Series, surname: bool = False, translate: dict[str, str] | None = None) -> pl.Series:
    """Chinese names transliterated into pinyin without tones, vectorised: each distinct
    character is looked up once, then every name is rebuilt from its characters. `surname`
    writes the first character as a word of its own (王秀英 -> Wang Xiuying); `translate`
    turns a trailing word into English (华星有限公司 -> Huaxing Co., Ltd.). A name that is
    not wholly Chinese characters has no transliteration (NULL)."""
    from pypinyin import Style, lazy_pinyin

    translate = translate or {}
    names = names.cast(pl.String)
    tail = pl.Series([None] * len(names), dtype=pl.String)
    stem = names
    for word in sorted(translate, key=lambda w: (-len(w), w)):  # the longest matching ending wins
        hit = stem.str.ends_with(word).fill_null(False) & tail.is_null()
        stem = pl.select(pl.when(pl.lit(hit)).then(pl.lit(stem).str.slice(0, pl.lit(stem).str.len_chars() - len(word)))
                         .otherwise(pl.lit(stem))).to_series()
        tail = pl.select(pl.when(pl.lit(hit)).then(pl.lit(translate[word])).otherwise(pl.lit(tail))).to_series()
    chars = stem.str.split("")
    distinct = chars.explode().drop_nulls().unique().sort().to_list()
    han = [c for c in distinct if has_cjk(c)]
    table = dict(zip(han, (lazy_pinyin(c, style=Style.NORMAL, errors="ignore") or [""] for c in han)))
    mapping = pl.DataFrame({"c": han, "p": [v[0] for v in table.values()]}, schema={"c": pl.String, "p": pl.String})
    frame = pl.DataFrame({"row": np.arange(len(names)), "c": chars}).explode("c")
    frame = frame.join(mapping, on="c", how="left", maintain_order="left")
    first = pl.col("p").first()
    rest = pl.col("p").slice(1).str.join("")
    joined = frame.group_by("row", maintain_order=True).agg(
        ok=pl.col("p").is_not_null().all() & (pl.col("c").is_not_null().any()),
        first=first, rest=rest, whole=pl.col("p").str.join(""))

    def cap(e: pl.Expr) -> pl.Expr:
        return e.str.slice(0, 1).str.to_uppercase() + e.str.slice(1)

    if surname:
        word = pl.when(pl.col("rest").str.len_chars() > 0).then(cap(pl.col("first")) + pl.lit(" ") + cap(pl.col("rest"))) \
            .otherwise(cap(pl.col("first")))
    else:
        word = cap(pl.col("whole"))
    rows = pl.DataFrame({"row": np.arange(len(names))}).join(joined, on="row", how="left", maintain_order="left")
    out = rows.select(pl.when(pl.col("ok").fill_null(False)).then(word).alias("a"))["a"]
    return pl.select(pl.when(pl.lit(tail).is_not_null() & pl.lit(out).is_not_null())
                     .then(pl.lit(out) + pl.lit(" ") + pl.lit(tail)).otherwise(pl.lit(out))).to_series().alias(names.name)


def word_pattern(words) -> str:
    """A regex (Rust and RE2 alike) matching any of `words` as a whole word (a Chinese word
    wherever it occurs: Chinese writes no spaces between words)."""
    import re

    ordered = sorted(words, key=lambda w: (-len(w), w))
    alts = "|".join(re.escape(w) for w in ordered if not has_cjk(w))
    han = "|".join(re.escape(w) for w in ordered if has_cjk(w))
    if not han:
        return f"(^|[^[:alnum:]])({alts})($|[^[:alnum:]])"
    return f"(^|[^[:alnum:]])({alts})($|[^[:alnum:]])|({han})" if alts else f"({han})"


class NameSampler:
    """Draws unique names for one entity type from its template(s) and parts. `context` gives
    the per-row values `given` and `via` parts read; `ambiguous` names parts whose words decide
    an attribute (`given: name.<part>`), so a name may carry only one of them."""

    def __init__(self, type_name: str, spec: NameSpec, locale: str, seed: int,
                 context: dict[str, pl.Series] | None = None, ambiguous: tuple[str, ...] = ()):
        import string

        context = context or {}
        self.type_name = type_name
        self.spec = spec
        self.parts = {k: _Part(p, locale, seed, context.get(k)) for k, p in spec.parts.items()}
        tw = spec.template_weights()
        self.templates = list(tw)
        w = np.asarray(list(tw.values()), dtype=float)
        self.template_p = w / w.sum()
        self.parsed = [
            [(lit, field) for lit, field, _, _ in string.Formatter().parse(t)] for t in self.templates
        ]
        self.context = context
        self.ambiguous = ambiguous

    def capacity(self) -> int:
        total = 0
        for parsed in self.parsed:
            c = 1
            for _, field in parsed:
                if field is not None:
                    c *= self.parts[field].capacity()
            total += c
        return total

    def draw(self, rows: np.ndarray | int, rng: np.random.Generator, keep: tuple[str, ...] = ()) -> pl.Series | tuple:
        """Names for `rows` (row indices into the context, or a count when there is none);
        with `keep`, also the drawn values of those parts (NULL where a template lacks one)."""
        rows = np.arange(rows) if isinstance(rows, (int, np.integer)) else np.asarray(rows)
        n = len(rows)
        if n == 0:  # a type without entities
            empty = pl.Series("name", [], dtype=pl.String)
            return (empty, {k: pl.Series(k, [], dtype=pl.String) for k in keep}) if keep else empty
        single = len(self.templates) == 1
        which = np.zeros(n, np.intp) if single else rng.choice(len(self.templates), size=n, p=self.template_p)
        out = None if single else pl.repeat("", n, dtype=pl.String, eager=True)
        kept = {k: pl.repeat(None, n, dtype=pl.String, eager=True) for k in keep}
        for ti, parsed in enumerate(self.parsed):
            sel = np.arange(n) if single else np.nonzero(which == ti)[0]
            if len(sel) == 0:
                continue
            pieces = []
            for lit, field in parsed:
                if lit:
                    pieces.append(pl.lit(lit))
                if field is not None:
                    vals = self.parts[field].draw(rows[sel], rng)
                    if field in kept:
                        kept[field] = vals if single else kept[field].scatter(sel, vals)
                    pieces.append(pl.lit(vals))
            col = pl.select(pl.concat_str(pieces).alias("name")).to_series()
            out = col if single else out.scatter(sel, col)
        return (out, kept) if keep else out

    def contradicts(self, names: pl.Series, rows: np.ndarray) -> np.ndarray:
        """Names that carry a word another value of a `given` attribute is named with, or two
        words of an `ambiguous` part."""
        bad = np.zeros(len(names), bool)
        for k, part in self.spec.parts.items():
            if part.cases is not None and k in self.context:
                every = part.words()
                given = self.context[k].gather(rows)
                for v, ch in [*part.cases.items(), (None, part.choices or [])]:
                    other = every - set(ch)
                    if not other:
                        continue
                    if v is None:
                        mask = ~given.is_in(list(part.cases)).fill_null(False)
                    else:
                        mask = (given == v).fill_null(False)
                    m = mask.to_numpy()
                    if m.any():
                        hit = names.filter(mask).str.contains(word_pattern(other)).fill_null(False).to_numpy()
                        bad[np.nonzero(m)[0][hit]] = True
        for k in self.ambiguous:
            words = sorted(self.spec.parts[k].words())
            n_hits = pl.select(pl.sum_horizontal([pl.lit(names).str.contains(word_pattern([w])).cast(pl.Int32)
                                                  for w in words])).to_series()
            bad |= (n_hits >= 2).to_numpy()
        return bad

    def unique(self, n: int, rng: np.random.Generator, rounds: int = 60, keep: tuple[str, ...] = ()):
        """`n` distinct names (duplicates and contradicting names are redrawn until none
        remain); with `keep`, also the kept parts' values."""
        cap = self.capacity()
        if 10 * n > 7 * cap:  # integers: the capacity of a long template overflows a float
            raise PlanError(
                f"counts cannot be satisfied: type '{self.type_name}' needs {n:,} unique names but its name "
                f"template(s) yield at most about {cap:,}; add parts or choices to its name, or lower the count"
            )
        keep = tuple(keep)
        res = self.draw(np.arange(n), rng, keep=keep)
        names, kept = res if keep else (res, {})
        check = bool(self.ambiguous) or any(p.cases is not None for p in self.spec.parts.values())
        fresh = np.arange(n)  # rows drawn in the last round: only these can contradict
        for _ in range(rounds):
            redo = (~names.is_first_distinct()).to_numpy()
            if check and len(fresh):
                new = names.gather(fresh)
                redo[fresh[self.contradicts(new, fresh) | (new.str.len_chars() == 0).to_numpy()]] = True
            dup = np.nonzero(redo)[0]
            if len(dup) == 0:
                return (names, kept) if keep else names
            res = self.draw(dup, rng, keep=keep)
            new_names, new_kept = res if keep else (res, {})
            names = names.scatter(dup, new_names)
            kept = {k: v.scatter(dup, new_kept[k]) for k, v in kept.items()}
            fresh = dup
        raise PlanError(
            f"could not make {n:,} unique names for type '{self.type_name}' (template space too small, or names "
            "built only from related entities' names); add parts or choices to its name, or lower the count"
        )


# --------------------------------------------------------------------------- values


def draw_distribution(distribution: str, p: dict[str, float], k: int, rng: np.random.Generator) -> np.ndarray:
    if distribution == "uniform":
        return rng.uniform(p["low"], p["high"], k)
    if distribution == "normal":
        return rng.normal(p["mean"], p["sd"], k)
    if distribution == "lognormal":
        return rng.lognormal(p["mean"], p["sigma"], k)
    if distribution == "exponential":
        return rng.exponential(p["scale"], k)
    if distribution == "gamma":
        return rng.gamma(p["shape"], p["scale"], k)
    if distribution == "weibull":
        return p["scale"] * rng.weibull(p["shape"], k)
    if distribution == "gompertz":  # inverse CDF of a Gompertz law with that mode and scale
        u = 1.0 - rng.random(k)  # (0, 1]
        with np.errstate(over="ignore", divide="ignore"):
            return p["scale"] * np.log1p(-np.exp(p["mode"] / p["scale"]) * np.log(u))
    return rng.poisson(p["lam"], k).astype(float)


def truncated(distribution: str, params: dict[str, float], n: int, rng: np.random.Generator,
              lo: np.ndarray | float = -np.inf, hi: np.ndarray | float = np.inf) -> np.ndarray:
    """Draws inside [lo, hi] (scalars or per row): out-of-bounds draws are redrawn a few
    times, then clipped."""
    x = draw_distribution(distribution, params, n, rng)
    lo_a, hi_a = np.broadcast_to(lo, (n,)), np.broadcast_to(hi, (n,))
    for _ in range(8):
        bad = np.nonzero(~((x >= lo_a) & (x <= hi_a)))[0]
        if len(bad) == 0:
            break
        x[bad] = draw_distribution(distribution, params, len(bad), rng)
    return np.clip(x, lo_a, hi_a)


def row_bounds(attr: NumericAttr, n: int, given: pl.Series | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the attribute's bounds: its case's (by the given attribute's value) or its own;
    -inf / inf where there is none."""
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    for v in [None, *attr.cases] if given is not None else [None]:
        c_lo, c_hi = attr.case_bounds(v)
        sel = slice(None) if v is None else (given == v).fill_null(False).to_numpy()
        lo[sel] = -np.inf if c_lo is None else c_lo
        hi[sel] = np.inf if c_hi is None else c_hi
    return lo, hi


def sample_numeric(attr: NumericAttr, n: int, rng: np.random.Generator, given: pl.Series | None = None) -> np.ndarray:
    """Draw from the distribution (per case of the given attribute); out-of-bounds values are
    redrawn, then clipped."""
    x = np.empty(n)
    lo, hi = row_bounds(attr, n, given)
    rest = np.ones(n, bool)
    for v, case in attr.cases.items() if given is not None else ():
        sel = (given == v).fill_null(False).to_numpy()
        if sel.any():
            x[sel] = truncated(attr.distribution, case.params or attr.params, int(sel.sum()), rng, lo[sel], hi[sel])
            rest &= ~sel
    if rest.any():
        x[rest] = truncated(attr.distribution, attr.params, int(rest.sum()), rng, lo[rest], hi[rest])
    bad = ~np.isfinite(x) | ((np.abs(x) > MAX_EXACT_INT) if attr.integer else False)
    if bad.any():
        v = x[np.nonzero(bad)[0][0]]
        raise PlanError(f"drew {v:g} from {attr.distribution} {clip(dict(attr.params))}, which "
                        f"{'an integer attribute cannot hold exactly' if np.isfinite(v) else 'is not a finite number'}; "
                        "give the attribute a min and max or smaller parameters")
    if attr.integer:
        return np.clip(np.rint(x), lo, hi).astype(np.int64)
    if attr.decimals is not None:
        x = np.round(x, attr.decimals)
    return x


def duration_days(d: Duration, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of a duration as whole days (years are 365.2425 days), negative for an offset
    that goes back from its reference."""
    lo = -np.inf if d.min is None else d.min
    hi = np.inf if d.max is None else d.max
    x = truncated(d.distribution, d.params, n, rng, lo, hi)
    x = np.nan_to_num(x, nan=0.0, posinf=1e7 if d.unit == "days" else 3e4, neginf=-1e7 if d.unit == "days" else -3e4)
    if d.unit == "years":
        x = x * YEAR_DAYS
    if getattr(d, "direction", "after") == "before":
        x = -x
    return np.rint(x).astype(np.int64)


def sample_days(lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform day in [lo, hi] per row (caller guarantees lo <= hi)."""
    span = (hi - lo + 1).astype(np.float64)
    return lo + np.floor(rng.random(len(lo)) * span).astype(np.int64)


def apply_offset(days: np.ndarray, years: int, day_offset: int) -> np.ndarray:
    """Calendar offset on int days, years first then days, exactly like SQL
    `date + INTERVAL years YEAR + INTERVAL days DAY` (Feb 29 + 1y = Feb 28); sentinels pass through.
    Validation keeps every offset date inside 0001..9999."""
    days = np.asarray(days, dtype=np.int64)
    if years == 0 and day_offset == 0:
        return days
    real = (days > NEG_INF) & (days < POS_INF)
    out = days.copy()
    if real.any():
        v = days[real]
        if years:
            v = pl.Series(v.astype(np.int32)).cast(pl.Date).dt.offset_by(f"{years}y").to_physical().to_numpy().astype(np.int64)
        out[real] = v + day_offset
    return out


# --------------------------------------------------------------------------- target picks


class TargetIndex:
    """Targets sorted by (group, key) with cumulative weights, so that a weighted pick
    restricted to one group and a key window is two binary searches per row."""

    def __init__(self, groups: np.ndarray, keys: np.ndarray, weights: np.ndarray):
        n = len(groups)
        self.n = n
        keys = keys.astype(np.int64)
        self.kmin = int(keys.min()) if n else 0
        kmax = int(keys.max()) if n else 0
        self.width = kmax - self.kmin + 1
        comp = groups.astype(np.int64) * self.width + (keys - self.kmin)
        self.order = np.argsort(comp, kind="stable")
        self.comp = comp[self.order]
        self.base_w = weights.astype(np.float64)[self.order]
        self.set_excluded(None)

    def set_excluded(self, used: np.ndarray | None) -> None:
        """Zero the weight of targets that may not be picked again (by target index)."""
        w = self.base_w
        if used is not None and used.any():
            w = w.copy()
            w[used[self.order]] = 0.0
        self.cum = np.concatenate([[0.0], np.cumsum(w)])

    def candidates(self, groups: np.ndarray, lo: np.ndarray, hi: np.ndarray, limit: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
        """Every (row, target) with the target inside the row's group and [lo, hi] and a
        weight above 0, at most `limit` pairs (the rows with the narrowest windows first)."""
        m = len(groups)
        if self.n == 0 or m == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        lo_k = np.clip(lo - self.kmin, 0, self.width)
        hi_k = np.clip(hi - self.kmin, -1, self.width - 1)
        base = groups.astype(np.int64) * self.width
        a = np.searchsorted(self.comp, base + lo_k, side="left")
        b = np.searchsorted(self.comp, base + hi_k, side="right")
        size = np.where((groups >= 0) & (lo_k <= hi_k), np.maximum(b - a, 0), 0)
        rows = np.argsort(size, kind="stable")
        rows = rows[np.cumsum(size[rows]) <= limit]
        rows.sort()
        rep = np.repeat(rows, size[rows])
        first = np.repeat(np.cumsum(size[rows]) - size[rows], size[rows])
        pos = a[rep] + (np.arange(len(rep)) - first)
        live = np.diff(self.cum)[pos] > 0
        return rep[live], self.order[pos[live]]

    def pick(self, groups: np.ndarray, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One weighted target per row inside its group and [lo, hi]; -1 where none is eligible."""
        m = len(groups)
        if self.n == 0 or m == 0:
            return np.full(m, -1, dtype=np.int64)
        lo_k = np.clip(lo - self.kmin, 0, self.width)
        hi_k = np.clip(hi - self.kmin, -1, self.width - 1)
        base = groups.astype(np.int64) * self.width
        a = np.searchsorted(self.comp, base + lo_k, side="left")
        b = np.searchsorted(self.comp, base + hi_k, side="right")
        ok = (b > a) & (groups >= 0) & (lo_k <= hi_k)
        total = np.where(ok, self.cum[np.minimum(b, self.n)] - self.cum[a], 0.0)
        ok &= total > 0
        u = self.cum[a] + rng.random(m) * total
        pos = np.searchsorted(self.cum, u, side="right") - 1
        pos = np.clip(pos, a, np.maximum(b - 1, a))
        pos = np.clip(pos, 0, self.n - 1)
        return np.where(ok, self.order[pos], -1).astype(np.int64)


def weighted_choice(rows: np.ndarray, targets: np.ndarray, weights: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Per row of `m`, one of its candidate `targets` (pairs `rows`, `targets`) drawn by
    `weights` (Gumbel-max, all rows at once); -1 for a row without candidates."""
    out = np.full(m, -1, np.int64)
    if len(rows) == 0:
        return out
    score = np.log(weights[targets]) - np.log(-np.log(rng.random(len(rows)).clip(1e-300)))
    order = np.lexsort((-score, rows))
    first = np.r_[True, rows[order][1:] != rows[order][:-1]]
    out[rows[order][first]] = targets[order][first]
    return out


def encode_groups(source_vals: pl.Series, target_vals: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Map two columns onto shared integer codes (missing values get -1)."""
    both = pl.concat([source_vals.cast(pl.String), target_vals.cast(pl.String)])
    codes = both.rank("dense").cast(pl.Int64).fill_null(0).to_numpy() - 1
    codes = np.where(both.is_null().to_numpy(), -1, codes)
    return codes[: len(source_vals)], codes[len(source_vals):]


def fitness_weights(n: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Preferential attachment, vectorised: Pareto-distributed fitness makes a few targets
    attract most links (a heavy-tailed degree distribution) without a sequential loop."""
    return rng.pareto(alpha, n) + 1.0



# --------------------------------------------------------------------------- codes

_CODE_WIDTH = 24  # characters of the source a code is read from


def _code_candidates(base: np.ndarray, lengths: np.ndarray, length: int, attempt: int, alphabet: np.ndarray,
                     rng: np.random.Generator) -> np.ndarray:
    """One candidate code per row as a (rows, length) byte matrix. Attempt 0: the first
    letters; then the first letter and others of the source in order; late attempts: random."""
    n = len(base)
    rand = alphabet[rng.integers(0, len(alphabet), (n, length))]
    if attempt >= 40:
        return rand
    if attempt == 0:
        out = base[:, :length].copy()
    else:
        keys = rng.random((n, _CODE_WIDTH))
        pos = np.arange(_CODE_WIDTH)
        keys[:, 0] = -1.0  # the first letter stays first
        keys[pos[None, :] >= lengths[:, None]] = np.inf
        chosen = np.sort(np.argsort(keys, axis=1)[:, :length], axis=1)
        out = np.take_along_axis(base, chosen, axis=1)
    short = np.arange(length)[None, :] >= lengths[:, None]
    return np.where(short, rand, out)


def unique_codes(source: pl.Series, length: int, alphabet: str, rng: np.random.Generator, type_name: str) -> pl.Series:
    """A distinct code per row built from the letters of `source` where it can be (IATA-like:
    'Kelmora' -> 'KEL', then 'KMO', ...), random where it cannot."""
    chars = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ" + (b"0123456789" if alphabet == "alphanumeric" else b""), np.uint8)
    n = len(source)
    cap = len(chars) ** length
    if n > 0.7 * cap:
        raise PlanError(f"type '{type_name}' needs {n:,} distinct codes of {length} characters but there are only {cap:,}; "
                        "make the code longer or lower the count")
    keep = "[^A-Z0-9]" if alphabet == "alphanumeric" else "[^A-Z]"
    clean = source.cast(pl.String).fill_null("").str.to_uppercase().str.replace_all(keep, "").str.slice(0, _CODE_WIDTH)
    lengths = clean.str.len_bytes().to_numpy().astype(np.int64)
    base = np.frombuffer(clean.str.pad_end(_CODE_WIDTH, " ").to_numpy().astype(f"S{_CODE_WIDTH}").tobytes(),
                         np.uint8).reshape(n, _CODE_WIDTH)
    codes = np.zeros((n, length), np.uint8)
    taken: set = set()
    pending = np.arange(n)
    for attempt in range(80):
        if len(pending) == 0:
            break
        cand = _code_candidates(base[pending], lengths[pending], length, attempt, chars, rng)
        words = cand.view(f"S{length}").ravel()
        _, first = np.unique(words, return_index=True)
        ok = np.zeros(len(pending), bool)
        ok[first] = True
        if taken:
            ok &= ~np.isin(words, np.fromiter(taken, dtype=f"S{length}", count=len(taken)))
        codes[pending[ok]] = cand[ok]
        taken.update(words[ok].tolist())
        pending = pending[~ok]
    if len(pending):
        raise PlanError(f"could not make {n:,} distinct codes for type '{type_name}'; make the code longer")
    return pl.Series(codes.view(f"S{length}").ravel().astype(f"U{length}"), dtype=pl.String)

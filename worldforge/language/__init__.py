"""The language layer: how a language writes lists, quotes, asides, dates, cases and words.

Every stage that writes or reads text in a world's language asks its `Language` (built from
`worldforge/language/<code>.yaml`) instead of branching on the code: "A, B and C" or "A、B和C",
"present" or "至今", a label lower-cased inside an English sentence and left as it is in a
Chinese one, words counted as words or as characters. A language is added as a data file with
every key of the others (tests/language/test_language.py); no Python changes.

Packs are written in the base language (English) and give other languages' words under `i18n`:
`BASE` names it, so "is this the pack's own text?" is one question, not a branch per language.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
BASE = "en"  # the language packs are written in (other languages' words come from `i18n`)

# What each script looks like: a text is in a language's script when it holds these characters.
SCRIPTS = {"latin": re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]"), "han": re.compile(r"[\u4e00-\u9fff]")}


# A number slot, the word after it and the word after that ("{bare} musicians have").
_NUMBER_NOUN = re.compile(r"(\{(?:value|bare|count)\}) ([a-z]+)(?: ([a-z]+))?")


@dataclass(frozen=True)
class Reading:
    """How a language is read (`reading:` of its data file): words or characters as shingles, how
    far a value may stand from its label, a snippet's length, what counts as the writer speaking,
    a negation, a name, a nested phrase."""

    shingle_by: str
    shingle_size: int
    value_window: int
    fragment_rest: int
    snippet_chars: int
    same_as: dict[str, tuple[str, ...]]  # a label word's others
    label_tails: tuple[str, ...]  # label endings prose leaves out
    function_words: tuple[str, ...]  # words after a number that are no unit
    sentences: re.Pattern
    first_person: re.Pattern  # the writer speaking of itself ('I', 'let's', '我')
    negation: re.Pattern  # words that turn a statement round
    own_script_min: float | None
    names_by: str  # how a name stands out: 'capitals', or 'latin' letters in another script
    free_characters: frozenset[str]  # CJK characters any text says alone
    nesting: tuple[re.Pattern, ...]  # a level of a nested noun phrase, per match

    @classmethod
    def of(cls, r: dict) -> Reading:
        return cls(r["shingle"]["by"], int(r["shingle"]["size"]), int(r["value_window"]), int(r["fragment_rest"]),
                   int(r["snippet_chars"]), {k: tuple(v) for k, v in (r["same_as"] or {}).items()},
                   tuple(r["label_tails"] or ()), tuple(r["function_words"] or ()), re.compile(r["sentences"]),
                   re.compile(r["first_person"]), re.compile(r["negation"]), r["own_script_min"], r["names_by"],
                   frozenset(r.get("free_characters") or ""), tuple(re.compile(x) for x in r["nesting"]))


@dataclass(frozen=True)
class Checks:
    """What a text in the language must not say (`checks:` and `tells:` of its data file)."""

    person_as_thing: re.Pattern | None  # "it graduated"
    thing_as_person: re.Pattern | None  # "she was founded"
    page_slips: dict[str, re.Pattern]
    question_slips: dict[str, re.Pattern]
    prose_slips: dict[str, re.Pattern]
    relative_years: re.Pattern
    empty_after: tuple[str, ...]  # a word a slot follows (' since {a}')
    tells: dict[str, str]  # machine-text phrasings the web report counts (name -> pattern)

    @classmethod
    def of(cls, c: dict, tells: dict[str, str]) -> Checks:
        def rx(k: str) -> re.Pattern | None:
            return re.compile(c[k]) if c[k] else None

        def named(k: str) -> dict[str, re.Pattern]:
            return {n: re.compile(v) for n, v in (c[k] or {}).items()}

        return cls(rx("person_as_thing"), rx("thing_as_person"), named("page_slips"), named("question_slips"),
                   named("prose_slips"), re.compile(c["relative_years"]), tuple(c["empty_after"] or ()), tells)


@dataclass(frozen=True)
class Grammar:
    """What a language's grammar says of words (`grammar:` of its data file): plurals and
    singulars of nouns, the shapes of labels (a preposition at the end, a participle), tense
    adverbs, verbs after a noun of one, whether a person is named again by surname, the
    determiners before an object, the words a clause mid-sentence lower-cases, the letters of a
    unit word that name what is counted."""

    plural: dict | None
    singular: dict | None
    prepositions: frozenset[str]
    verb_suffix: tuple[str, ...] | None
    unit_stems: int | None  # letters of a unit word that name what is counted
    surnames: bool  # a person named again by the name's last word
    determiners: tuple[str, ...]
    tense_adverbs: dict | None
    one_verbs: dict[str, str]  # a verb after a noun of one ('have' -> 'has')
    lower_first: frozenset[str]  # words a clause mid-sentence lower-cases

    @property
    def has_plurals(self) -> bool:
        """Whether a noun changes for more than one."""
        return self.plural is not None

    @classmethod
    def of(cls, gr: dict) -> Grammar:
        shapes = gr["label_shapes"]
        vs = shapes["verb_suffix"] if shapes else None
        return cls(gr["plural"], gr["singular"], frozenset(shapes["prepositions"]) if shapes else frozenset(),
                   (tuple(vs) if isinstance(vs, list) else (vs,)) if vs else None, gr["unit_stems"], bool(gr["surnames"]),
                   tuple(gr["determiners"] or ()), gr["tense_adverbs"], gr["one_verbs"] or {}, frozenset(gr["lower_first"] or ()))


class Articles:
    """Articles that agree with the noun after them (`grammar.articles` of a data file: Spanish):
    the feminine forms, the nouns and endings that take them, the contractions."""

    def __init__(self, art: dict):
        fem = art["feminine"]
        self._fem_article = dict(fem) | {k.capitalize(): v[:1].upper() + v[1:] for k, v in fem.items()}
        self._fem_endings = tuple(art["endings"])
        self._masculine = frozenset(art["masculine"])
        self._feminine = frozenset(art["feminine_words"])
        self._stressed_a = frozenset(art["stressed_a"])
        self._stressed_keep = frozenset(k for k in fem if not k.endswith("s"))  # 'el área', but 'las áreas'
        arts = sorted(self._fem_article, key=len, reverse=True)
        self._agree = re.compile(r"\b(" + "|".join(map(re.escape, arts)) + r") ([a-záéíóúüñ]+)(?=( [a-záéíóúüñ]+)?)")
        self._contract = tuple((re.compile(r"\b" + re.escape(a) + r"\b"), b) for a, b in art["contract"].items())

    def feminine(self, noun: str) -> bool:
        """Whether a noun (or its first two words: 'fecha de', 'empresa matriz') takes the
        feminine article, by the language's lists, else its ending."""
        first = noun.split(" ", 1)[0]
        if noun in self._feminine or first in self._feminine:
            return True
        if noun in self._masculine or first in self._masculine:
            return False
        return first.endswith(self._fem_endings)

    def agree(self, text: str) -> str:
        """Articles made to agree with the nouns after them, as the banks write the masculine
        form ('el {label}' with 'población': 'la población'; 'del fecha': 'de la fecha'; 'el área'
        stays), then 'de el' and 'a el' contracted."""

        def fix(m: re.Match) -> str:
            art, first = m.group(1), m.group(2)
            noun = first + (m.group(3) or "")  # with the word after it ('empresa matriz')
            if not self.feminine(noun) or (art.lower() in self._stressed_keep and first in self._stressed_a):
                return m.group(0)
            return f"{self._fem_article[art]} {first}"

        text = self._agree.sub(fix, text)
        for pat, rep in self._contract:
            text = pat.sub(rep, text)
        return text


class Language:
    """One language's way of writing, read from its data file."""

    def __init__(self, data: dict):
        self.data = data
        self.code: str = data["code"]
        self.name: str = data["name"]
        self.script: str = data["script"]
        self.spaced: bool = bool(data["spaced"])
        self.cased: bool = bool(data["cased"])
        m = data["marks"]
        self.list_sep: str = m["list"]
        self.and_: str = m["and"]
        self.semicolon: str = m["semicolon"]
        self.comma: str = m["comma"]
        self.colon: str = m["colon"]
        self.stop: str = m["stop"]
        self.quotes: tuple[str, str] = tuple(m["quote"])
        self.parens: tuple[str, str] = tuple(m["paren"])
        self.note_marks: dict[str, str] = m["note"]  # a link's own attributes after it: open, between, close
        self.polish: tuple[str, ...] = tuple(data["polish"])  # the page writer's last pass, by name
        self.space = " " if self.spaced else ""  # between words, and between a number and its unit
        self.locale: str = data["locale"]  # a Faker locale of the language, as messages suggest it
        # a unit with a scale in it, as prose writes such amounts: unit -> (factor, the unit without it)
        self.scaled_units: dict[str, tuple[int, str]] = {u: (int(v["factor"]), v["unit"]) for u, v in (data.get("scaled_units") or {}).items()}
        self.units: dict[str, str | None] = data.get("units") or {}  # common units in this language (None: goes without saying)
        self.ordinal_suffixes: dict | None = data.get("ordinals")  # '12th': a suffix by the number's last digit
        self.checks = Checks.of(data["checks"], data["tells"])
        self.search: dict = data["search"]  # the index's tokenizer, how queries are read, snippet bytes
        self.cell_fold: str | None = data["scoring"]["fold"]  # how the lenient scorer folds a cell ('cjk')
        self.card: dict | None = data.get("card")  # the dataset card's section in this language
        self.words: dict[str, str] = data["words"]
        self.date_styles: dict[str, str] = data["dates"]["styles"]  # prose date styles by name, the default first
        self.months: tuple[str, ...] = tuple(data["dates"]["months"])
        self.scales: tuple[tuple[int, str], ...] = tuple((int(n), w) for n, w in data["numbers"]["scales"])
        self.number_words: tuple[str, ...] = tuple(data["numbers"]["words"])
        self.scale_link: str = data["numbers"]["scale_link"] or ""  # between a scale and a unit ('millones de habitantes')
        self.present: str = self.words["present"]
        self.reading = Reading.of(data["reading"])
        self.connectives: tuple[str, ...] = tuple(data["connectives"])
        self._script = SCRIPTS[self.script]
        self._retype = tuple((re.compile(pat), rep) for pat, rep in data.get("retype") or ())
        self._joins = tuple((re.compile(pat), rep) for pat, rep in data.get("joins") or ())
        self.sites: dict = data["sites"]  # how the world's sites are named (web.pages.Sites)
        gr = data["grammar"]
        self.grammar = Grammar.of(gr)
        self.articles = Articles(gr["articles"]) if gr.get("articles") else None  # that agree with their noun

    def __repr__(self) -> str:
        return f"Language({self.code!r})"

    # ------------------------------------------------------------------ words in a sentence

    def mid(self, label: str) -> str:
        """A label as it reads inside a sentence ("the Population of X" is a slip in English); an
        acronym keeps its capitals ("the IATA code", not "the iata code")."""
        if not self.cased:
            return label
        if not any(c.isupper() for c in label[1:]):
            return label.lower()
        return " ".join(w if len(w) > 1 and w.isupper() else w.lower() for w in label.split(" "))

    def cap(self, text: str) -> str:
        """A sentence's first letter upper case, where the language has cases."""
        return text[:1].upper() + text[1:] if self.cased and text else text

    def quote(self, text: str) -> str:
        return f"{self.quotes[0]}{text}{self.quotes[1]}"

    def paren(self, text: str) -> str:
        """An aside after a word: 'X (figures)', 'X（数值）'."""
        return f"{self.parens[0]}{text}{self.parens[1]}"

    def notes(self, items: Iterable[str]) -> str:
        """A link's own attributes after it: ', sales, shirt number 9', '（销售部，号码9）'."""
        m = self.note_marks
        return m["open"] + m["sep"].join(items) + m["close"]

    def join(self, items: Iterable[str]) -> str:
        """Items as a list reads: 'A and B', 'A, B and C'; 'A和B', 'A、B和C'."""
        items = list(items)
        if len(items) < 3:
            return self.and_.join(items)
        return self.list_sep.join(items[:-1]) + self.and_ + items[-1]

    def with_unit(self, number: str, unit: str | None) -> str:
        """A number and its unit: '37 km', '37平方公里'."""
        return f"{number}{self.space}{unit}" if unit else number

    def joined(self, phrase: str) -> str:
        """A pack's phrase with a value put in, where the two meet as the language joins them (a
        verb's 于 before a range's 在: '出生于在1980年至2009年之间' -> '出生于1980年至2009年之间')."""
        for pat, rep in self._joins:
            phrase = pat.sub(rep, phrase)
        return phrase

    def retype(self, line: str) -> str:
        """A line written with ASCII marks (': ', ', ', ' (x)') as this language writes them."""
        for pat, rep in self._retype:
            line = pat.sub(rep, line)
        return line

    # ------------------------------------------------------------------ a label's words

    def plural(self, label: str) -> bool:
        """Whether a label reads as a plural noun ("Colours", "Founders"; not "Status", "Genus"):
        never in a language without plurals."""
        r = self.grammar.plural
        if r is None:
            return False
        w = label.lower().split()[-1] if label.strip() else ""
        return len(w) >= r["min_length"] and w.endswith(r["suffix"]) and not w.endswith(tuple(r["not"]))

    def plural_of(self, word: str) -> str:
        """A noun's plural as a label makes it ("award" -> "awards"; one already plural is kept):
        the word itself in a language whose nouns have no plural."""
        r = self.grammar.plural
        if r is None or self.plural(word):
            return word
        for end, more in r.get("rules") or ():  # by the word's ending ('ciudad' -> 'ciudades'), the first that fits
            if word.endswith(end):
                return word[: len(word) - len(end)] + more
        return word + r["suffix"]

    def singular(self, label: str) -> str | None:
        """A plural label's noun for one ("Clubs" -> "club"), None where it reads as no plural; the
        label itself in a language whose nouns have no plural."""
        r = self.grammar.singular
        if r is None:
            return label
        w = label.lower()
        if r.get("by_word") and " " in w:  # every word agrees in number ('directores generales' -> 'director general')
            words = [(self.singular(x) or x) if self.plural(x) else x for x in w.split(" ")]
            return " ".join(words) if words != w.split(" ") else None
        if w.endswith(tuple(r["not"])):
            return None
        for end, one in r["rules"]:
            if w.endswith(end):
                return w[: len(w) - len(end)] + one
        head, _, rest = w.partition(" ")
        if rest and self.plural(head):  # the noun first, what it is after ("Prizes won" -> "prize won")
            one = self.singular(head)
            return f"{one} {rest}" if one else None
        return None

    def for_one(self, tpl: str) -> str:
        """A phrasing whose number ({value} or {bare}) is one, with the noun after the number in
        the singular and the verb after that agreeing: "{value} musicians have played in X" ->
        "{value} musician has played in X", "cited {value} times" -> "cited {value} time"; the
        phrasing as it is in a language without plurals."""
        if self.grammar.singular is None or "{" not in tpl:
            return tpl

        def one(m: re.Match) -> str:
            noun, verb = m.group(2), m.group(3)
            single = self.singular(noun) if self.plural(noun) else None
            if not single:
                return m.group(0)
            return f"{m.group(1)} {single}" + (f" {self.grammar.one_verbs.get(verb, verb)}" if verb else "")

        return _NUMBER_NOUN.sub(one, tpl)

    def label_shape(self, label: str) -> str | None:
        """How a link label that is not a noun reads: 'verb' for a participle and its preposition
        ("Based in", "Acquired by"), 'role' for a noun and its preposition ("Sequel to", "Capital
        of"); None for a noun ("Headquarters"), and in a language whose labels are used as they
        are. Pages, questions and notes never use such a label as a noun ("the based in of X")."""
        words = label.lower().split()
        if len(words) < 2 or words[-1] not in self.grammar.prepositions:
            return None
        return "verb" if words[0].endswith(self.grammar.verb_suffix) else "role"

    def feminine(self, noun: str) -> bool:
        """Whether a noun takes the feminine article (`Articles.feminine`); never where articles
        agree with nothing."""
        return self.articles is not None and self.articles.feminine(noun)

    def agree(self, text: str) -> str:
        """Articles made to agree with the nouns after them (`Articles.agree`): the text as it is
        where articles agree with nothing."""
        return text if self.articles is None else self.articles.agree(text)

    def participle(self, word: str) -> bool:
        """Whether a one-word label is a participle that says what happened ("released",
        "founded"): never in a language whose labels are used as they are."""
        return bool(self.grammar.verb_suffix) and word.endswith(self.grammar.verb_suffix)

    def tense_adverb(self, tpl: str, ended: bool, h: int) -> str:
        """A tenure phrasing with an adverb of time where its first verb allows one: 'X currently
        plays for Y', 'X is now based in Y' (a link that holds), 'X previously worked at Y' (one
        that ended); the phrasing as it is in a language without the rule."""
        r = self.grammar.tense_adverbs
        if r is None or not tpl.startswith("{subject} "):
            return tpl
        head, _, rest = tpl[len("{subject} "):].partition(" ")
        if not rest:
            return tpl
        if ended:
            past = r["past"]
            if head.endswith(past["suffix"]) or head in past["words"]:
                adv = r["before"][h % len(r["before"])]
                if head == r["past_copula"]:
                    return "{subject} " + head + " " + adv + rest
                return "{subject} " + adv + head + " " + rest
            return tpl
        now = r["now"][h % len(r["now"])]
        if head in r["copulas"]:
            return "{subject} " + head + " " + now + rest
        pr = r["present"]
        if head.endswith(pr["suffix"]) and not head.endswith(pr["not_suffix"]) and head not in pr["not"]:
            return "{subject} " + now + head + " " + rest
        return tpl

    # ------------------------------------------------------------------ dates

    def date(self, d: dt.date, style: str | None = None) -> str:
        """A day written out in one of the language's styles (its default: 'June 3, 1998',
        '1998年6月3日')."""
        fmt = self.date_styles[style] if style else next(iter(self.date_styles.values()))
        m = self.months[d.month - 1]
        return fmt.format(year=d.year, month=m, mon=m[:3], month_number=d.month, day=d.day)

    def count_words(self, n: int) -> str:
        """A count below 100 in words ('twenty-six', '二十六'; a count of two is '两'), else ''."""
        return self.number_words[n] if 0 <= n < len(self.number_words) else ""

    def years(self, start: str | int | None, end: str | int | None) -> str:
        """A period by its years: ' from 1990 to 2004' (either end may be open), '（1990—2004）'."""
        d = self.data["dates"]
        return d["span"].format(**{"from": d["from"].format(year=start) if start else "",
                                   "to": d["to"].format(year=end) if end else ""})

    # ------------------------------------------------------------------ reading

    def in_script(self, text: str) -> bool:
        """Whether `text` holds characters of this language's script."""
        return self._script.search(text) is not None

    def script_share(self, text: str, of: str) -> float:
        """The share of `of`'s characters that `text` writes in this language's script."""
        return len(self._script.findall(text)) / max(1, len(of))

    def foreign_script(self, text: str) -> bool:
        """Whether `text` holds characters of another language's script than this one's."""
        return any(pat.search(text) is not None for name, pat in SCRIPTS.items() if name != self.script)

    def has_word(self, text: str, word: str) -> bool:
        """Whether `word` stands in `text` as a word of its own (any run of characters, where
        words do not stand apart)."""
        if not self.spaced:
            return word in text
        return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None

    def word_at(self, text: str, start: int, end: int) -> bool:
        """Whether text[start:end] is a whole word (not inside a longer one)."""
        if not self.spaced:
            return True
        return (start == 0 or not text[start - 1].isalnum()) and (end >= len(text) or not text[end].isalnum())

    def tokens(self, text: str) -> list[str]:
        """The units a text is measured in: lower-cased words, or characters (spaces dropped)."""
        if self.reading.shingle_by == "char":
            return list(re.sub(r"\s+", "", text))
        return re.findall(r"\w+", text.lower())


@cache
def _load(code: str) -> Language:
    path = HERE / f"{code}.yaml"
    if not path.is_file():
        raise ValueError(f"unknown language {code!r}; known: {', '.join(languages())} "
                         f"(a language is added as worldforge/language/<code>.yaml)")
    return Language(yaml.safe_load(path.read_text(encoding="utf-8")))


def get(code: str | None) -> Language:
    """The language of `code` (the base language for None)."""
    return _load(code or BASE)


@cache
def _codes() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in HERE.glob("*.yaml")))


def languages() -> list[str]:
    """The codes of every language with a data file."""
    return list(_codes())


@cache
def _other_scripts() -> tuple[Language, ...]:
    """The languages written in another script than the base language's."""
    base = _load(BASE).script
    return tuple(lang for lang in map(_load, _codes()) if lang.code != BASE and lang.script != base)


def written_in(text: str, default: str = BASE) -> Language:
    """The language whose script `text` uses, beyond the base language's (a label with Chinese
    characters is read the Chinese way); `default` where none is. (Called on the oracle's hot
    path: the languages are read once.)"""
    for lang in _other_scripts():
        if lang.in_script(text):
            return lang
    return _load(default)


@cache
def scale_factors() -> tuple[int, ...]:
    """Every language's factors of a unit with a scale in it (`Language.scaled_units`: 百万美元 is
    10^6 美元): a figure written '1.856亿美元' is 185.6 in such a unit."""
    return tuple(sorted({f for lang in map(_load, _codes()) for f, _ in lang.scaled_units.values()}))


def scaled_unit(unit: str | None) -> tuple[int, str] | None:
    """(factor, the unit without its scale) of a unit with a scale in it, in any language."""
    if not unit:
        return None
    for lang in map(_load, _codes()):
        if unit in lang.scaled_units:
            return lang.scaled_units[unit]
    return None


# --------------------------------------------------------------------------- reading any language


@cache
def month_numbers() -> dict[str, int]:
    """Every language's month names and their first three letters, lower-cased, to the month's
    number ('june' and 'jun' 6, 'junio' 6): where names collide they name the same month."""
    out: dict[str, int] = {}
    for lang in map(_load, _codes()):
        if not lang.cased:
            continue  # months written by number (6月)
        for i, m in enumerate(lang.months):
            out.setdefault(m.lower(), i + 1)
            out.setdefault(m[:3].lower(), i + 1)
    return out


def month_alternation() -> str:
    """A pattern of every month name (`month_numbers`), longest first."""
    return "|".join(sorted(map(re.escape, month_numbers()), key=len, reverse=True))


_SLOT = re.compile(r"\{(year|month|mon|month_number|day)\}")


@cache
def date_regex(iso: bool = True, portable: bool = False) -> re.Pattern:
    """A pattern that reads a full date as any language's sites write it (every date style of
    every language, `dates.styles`, and ISO): a style's words as they are, a comma after them
    optional, a month by name (full or short, with or without its period) or number. Read a match
    with `date_of`. `portable`: one that polars' regex engine runs as well."""
    months = month_alternation()
    styles = dict.fromkeys(s for lang in map(_load, _codes()) for s in lang.date_styles.values())
    alts = [r"(?P<iso>(?<!\d)(?P<iso_y>\d{4})-(?P<iso_m>\d{2})-(?P<iso_d>\d{2})(?!\d))"] if iso else []
    for i, style in enumerate(styles):
        parts, pos = [], 0
        for m in _SLOT.finditer(style):
            lit = style[pos:m.start()]
            parts.append(re.escape(lit).replace(",", ",?"))
            slot = m.group(1)
            parts.append({"year": rf"(?P<y{i}>\d{{4}})", "day": rf"(?P<d{i}>\d{{1,2}})",
                          "month_number": rf"(?P<n{i}>\d{{1,2}})"}.get(slot, rf"(?P<m{i}>{months})\.?,?"))
            pos = m.end()
        parts.append(re.escape(style[pos:]))
        body = "".join(parts)
        lead = r"\b" if re.match(r"\w", style.replace("{", "")[:1] or " ") or style.startswith(("{day}", "{month}", "{mon}")) else ""
        tail = r"\b" if style.endswith("{year}") else ""
        if style.startswith("{year}"):
            lead = r"(?<!\d)"
        alts.append(rf"(?P<s{i}>{lead}{body}{tail})")
    if portable:  # a pattern polars' engine runs too: no lookbehind, its flag inline
        return re.compile("(?i)" + "|".join(alts).replace(r"(?<!\d)", r"\b").replace(r"(?!\d)", r"\b"))
    return re.compile("|".join(alts), re.IGNORECASE)


def date_of(m: re.Match) -> tuple[int, int, int]:
    """(year, month, day) of a `date_regex` match (KeyError or ValueError for no such date)."""
    name = m.lastgroup
    if name == "iso":
        return int(m.group("iso_y")), int(m.group("iso_m")), int(m.group("iso_d"))
    i = name[1:]
    month = m.group(f"n{i}") if f"n{i}" in m.re.groupindex else None
    mo = int(month) if month else month_numbers()[m.group(f"m{i}").lower()]
    if not 1 <= mo <= 12:
        raise ValueError(mo)
    return int(m.group(f"y{i}")), mo, int(m.group(f"d{i}"))


@cache
def scale_words() -> dict[str, float]:
    """Every language's words for a big number's scale ('million', 'mil millones', '万') and their
    factors."""
    return {w.strip(): float(n) for lang in map(_load, _codes()) for n, w in lang.scales}


@cache
def scale_alternation(spaced: bool = False) -> str:
    """A pattern of every language's scale words, longest first: as written after a number
    (' million', '万': a word of letters ends at a word's end) when `spaced`, else the words alone
    ('million', '万')."""
    forms = {w if spaced else w.strip() for lang in map(_load, _codes()) for _, w in lang.scales}
    return "|".join(re.escape(w) + (r"\b" if spaced and w[-1:].isascii() and w[-1:].isalpha() else "")
                    for w in sorted(forms, key=lambda w: (-len(w), w)))


@cache
def empty_slot_alternation() -> str:
    """A pattern of a word left with nothing after it but a mark, in any language (' since .',
    ' desde ,', '于。'): each language's `checks.empty_after`, spaced or run on."""
    alts = []
    for lang in map(_load, _codes()):
        words = "|".join(map(re.escape, lang.checks.empty_after))
        if words:
            alts.append(rf" (?:{words}) [.,;:)]" if lang.spaced else rf"(?:{words})[。，；）]")
    return "|".join(alts)


@lru_cache(maxsize=4096)
def date_forms(d: dt.date) -> tuple[str, ...]:
    """A day as every language's sites may write it (each date style of each language)."""
    return tuple(dict.fromkeys(lang.date(d, style) for lang in map(_load, _codes()) for style in lang.date_styles))

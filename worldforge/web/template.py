"""The template page writer: deterministic Markdown from a page's fact sheet.

Pages are written through the surface grammar (`grammar.py`): each fact becomes one of many
clauses (the pack's `phrases` and generic ones), clauses are joined with connectives into
sentences, sentences into ordered paragraphs (lead, overview, history in date order), and
every site has its own voice and number/date conventions. Every choice is a stable hash of
the page URL and the fact, so the same world always gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import re
from zlib import crc32

from ..language import get as get_language
from ..world import humanise
from . import grammar as g
from .pages import Page, PredicateMeta, WorldView
from .planning import page_links
from .text import Fact, note_values, pick


def _unthe(tpl: str, subject: str) -> str:
    """A phrasing whose subject is a back-reference ("it", "the award"): its own article goes
    ("The {subject} is awarded" would read "The it" or "The the award"), and "it's" is "its"."""
    if subject == "it":
        tpl = tpl.replace("{subject}'s", "its")
    # a title is quoted ('"{subject}" was published'), a back-reference is not ('"the publication"')
    tpl = tpl.replace('"{subject}"', "{subject}").replace("“{subject}”", "{subject}")
    return tpl.replace("The {subject}", "{subject}").replace("the {subject}", "{subject}")


_S_POSSESSIVE = re.compile(r"(?<=\w)(s)'s\b")
# The last passes a language's `polish` names (worldforge/language/<code>.yaml), by name.
_POLISH = {"possessive_s": lambda text, lang: _S_POSSESSIVE.sub(r"\1'", text) if "s's " in text else text,  # "Wanderers' league"
           "articles": lambda text, lang: g.fix_articles(text),  # "an appliance"
           "agreement": lambda text, lang: lang.agree(text)}  # "la población", "del país"


def _once(facts: list[Fact], meta_of) -> list[Fact]:
    """Facts a page lists, each label and value once: a lookup that restates a link ('Prize' as
    the edition's attribute and as its link) is not listed twice ("a label twice on one profile");
    the link stays, with its dates and notes (a champion's date is the link's)."""
    def key(f: Fact) -> tuple[str, str]:
        return meta_of(f).label.casefold(), f.value

    links = {key(f) for f in facts if meta_of(f).relation}
    seen: set[tuple[str, str]] = set()
    out = []
    for f in facts:
        k = key(f)
        if k in seen or (k in links and not meta_of(f).relation):
            continue
        seen.add(k)
        out.append(f)
    return out


def _surname(person: bool, name: str) -> str | None:
    """A person's surname, the last word of their name ("Brennan"); None for other types."""
    parts = name.split()
    return parts[-1] if person and len(parts) >= 2 and parts[-1][:1].isupper() else None


def _age(born: dt.date, on: dt.date) -> int:
    """Whole years from `born` to `on`."""
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


class TemplateWriter:
    """Writes every page kind from a `WorldView`; no model, no randomness beyond the URL hash."""

    name = "template"

    def __init__(self, view: WorldView, lang: str | None = None):
        self.view = view
        self.people = view.lexicon.people()  # types referred to as people
        self.lang = lang or view.lang
        self.language = get_language(self.lang)
        self.b = g.bank(self.lang)
        self.sp = get_language(self.lang).space
        self._options: dict[tuple, tuple] = {}  # phrasings per (type, predicate, shape): see _clause
        self._refs: dict[str, tuple[str, ...]] = {}  # back-references per type ('the company')
        self._subject_refs: tuple[str, tuple[str, ...]] = ("", ())  # the page subject's name and its own references
        self._words = {k: v[0] for k, v in self.b.items() if v}  # the one form of each small word (`w`)
        self._styles: dict[tuple[str, str], dict] = {}
        self._labels: dict[tuple[str, str], str] = {}  # lower-case labels per (type, predicate)
        # Formatted dates per style, keyed by the date or its ISO text: a world's dates are at most
        # a few hundred years of days, and a page formats each of its dates several times.
        self._dates: dict[str, dict] = {}

    def write(self, page: Page) -> str:
        text = getattr(self, "_" + page.kind)(page)
        for fix in self.language.polish:  # the language's last pass ("Wanderers' league", "an appliance")
            text = _POLISH[fix](text, self.language)
        return text

    def w(self, key: str, **fields) -> str:
        """A small word or frame in the page's language (`grammar.word`)."""
        w = self._words[key]
        return w.format(**fields) if fields else w

    def _style(self, site: str, kind: str) -> dict:
        st = self._styles.get((site, kind))
        if st is None:
            st = self._styles[(site, kind)] = g.site_style(site, kind, self.lang)
        return st

    # ------------------------------------------------------------------ values

    def _date(self, d: dt.date | str, style: str) -> str:
        """`grammar.format_date` of a date (or its ISO text), remembered per style."""
        known = self._dates.get(style)
        if known is None:
            known = self._dates[style] = {}
        s = known.get(d)
        if s is None:
            s = known[d] = g.format_date(dt.date.fromisoformat(d) if isinstance(d, str) else d, style)
        return s

    def _label(self, t: str, pred: str) -> str:
        """A predicate's label in lower case, as clauses use it."""
        s = self._labels.get((t, pred))
        if s is None:
            s = self._labels[(t, pred)] = self.language.mid(self.view.meta[(t, pred)].label)  # ('IATA code' keeps IATA)
        return s

    def _value(self, t: str, f: Fact, st: dict, link: bool = True, table: bool = False) -> str:
        vt = f.value_type
        if vt == "date":
            return self._date(f.value, st["table_date"] if table else st["date"])
        if vt in ("int", "float"):
            return g.format_number(f.value, vt, self.view.meta[(t, f.predicate)].unit, rounded=st["round"] and not table,
                                   lang=self.lang, prose=not table)
        if vt == "entity":
            return self._link(f.value) if link else self.view.names[f.value]
        if vt == "bool":
            return self.w("yes") if f.value == "true" else self.w("no")
        return f.value

    def _link(self, eid: str) -> str:
        return f"[{self.view.names[eid]}]({self.view.article_url[eid]})"

    def _note(self, f: Fact, m: PredicateMeta) -> str:
        """A link's own attributes as a list or table writes them after the link: ', sales',
        a number with its label (', shirt number 9'; Chinese: '（销售部）'); '' for a link without any."""
        if not f.note or not m.notes:
            return ""
        vals = [n.listed(x, self.lang) for n, x in zip(m.notes, note_values(f)) if x]
        if not vals:
            return ""
        return self.language.notes(vals)

    def _note_words(self, m: PredicateMeta, f: Fact, h: int) -> str:
        """A link's own attributes as a sentence adds them: ' in sales' (the pack's phrase, or
        the list form when it has none)."""
        if not f.note or not m.notes:
            return ""
        out = ""
        for n, v in zip(m.notes, note_values(f)):
            if not v:
                continue
            if n.phrases:
                out += self.language.space + g.choose_h(n.phrases, crc32(n.label.encode(), h)).format(value=v)
            else:
                out += self.language.notes([n.listed(v, self.lang)])
        return out

    def _year_span(self, f: Fact, meta: PredicateMeta) -> str:
        """When a link held, in years: '2001', '2001–2005', 'since 2001'."""
        a = f.valid_from
        if a is None:
            return ""
        if meta.event:
            return str(a.year)
        if f.valid_to is None:
            return self.w("since_year", a=a.year)
        return f"{a.year}–{f.valid_to.year}" if f.valid_to.year != a.year else str(a.year)

    def _noun(self, t: str) -> str:
        return self.view.noun(t)

    def _ref(self, t: str, key: str) -> str:
        """A back-reference to the page's subject after its first mention."""
        return self._ref_h(t, crc32(key.encode()))

    def _ref_h(self, t: str, h: int) -> str:
        """`_ref` with the key given as its checksum (`grammar.choose_h`)."""
        refs = self._refs.get(t)
        if refs is None:
            opts = self.b["ref_thing"] if t not in self.people else self.b["ref_being"]
            refs = self._refs[t] = tuple(o.format(noun=self._noun(t)) for o in opts)
        return g.choose_h(refs, h)

    def _own_refs(self, eid: str, t: str, outs: list[Fact]) -> None:
        """References to the page's subject besides its type noun, set while its page is written:
        its surname (a person), or the type noun led by what it belongs to ("the Thuka Super
        League club", "the Irorland player"; not a birthplace): one short to-one link name each."""
        v = self.view
        name = v.names[eid]
        noun = self._noun(t)
        surname = _surname(t in self.people, name) if self.language.grammar.surnames else None
        refs: list[str] = [surname] if surname else []
        led = self.b["ref_led"]  # 'the {owner} {noun}' (none in Chinese)
        for f in outs if led else ():
            m = v.meta[(t, f.predicate)]
            if "birth" in m.label.lower():  # not "the Wynwynwynview researcher was born in Wynwynwynview"
                continue
            if m.to_one and not m.event and f.valid_to is None and f.value in v.names:
                o = v.names[f.value]
                if 1 <= len(o.split()) <= 3 and not o.lower().startswith("the "):
                    refs.append(led[0].format(owner=o, noun=noun))
        self._subject_refs = (name, tuple(refs[:3]))

    def _ref_to(self, t: str, name: str, h: int) -> str:
        """A back-reference to `name`: its own references (`_own_refs`) when it is the page's
        subject, else its type's."""
        own_name, own = self._subject_refs
        if own and name == own_name and crc32(b"|own", h) % 2:
            return g.choose_h(own, h)
        surname = _surname(t in self.people, name) if self.language.grammar.surnames else None
        if surname and (t == "person" or crc32(b"|sn", h) % 2):
            return surname  # a person by surname, as papers and encyclopedias write ("Brennan joined ...")
        return self._ref_h(t, h)

    # ------------------------------------------------------------------ clauses

    def _clause(self, t: str, f: Fact, st: dict, key: str, subject: str, at: dt.date | None = None, own_only: bool = False) -> str:
        """One phrasing of a fact as a clause (no final period). `at`: written on that date
        (news), so a tenure's end is never stated."""
        return self._clause_h(t, f, st, crc32(key.encode()), subject, at, own_only)

    def _clause_h(self, t: str, f: Fact, st: dict, h: int, subject: str, at: dt.date | None = None,
                  own_only: bool = False) -> str:
        """`_clause` with the key given as its checksum `h` (`grammar.choose_h`); the slots it
        hashes besides the phrasing are suffixes of the key ('|lk', '|sp', '|on')."""
        v = self.view
        m: PredicateMeta = v.meta[(t, f.predicate)]
        if m.relation:
            if at is not None and f.valid_to is not None and f.valid_to > at:
                f = f._replace(valid_to=None)  # its end lies in the page's future
            tpl = g.choose_h(self._relation_options(t, f.predicate, f.valid_to is not None, f.valid_from is not None, own_only), h)
            if subject == "it" or subject.startswith(("the ", "this ")):  # "The {subject}" with "it": no "The it"
                tpl = _unthe(tpl, subject)
            if not m.event and f.valid_from is not None:
                tpl = self.language.tense_adverb(tpl, ended=f.valid_to is not None, h=crc32(b"|adv", h))
            # Only the fields the chosen phrasing uses are formatted (each choice is its own hash).
            obj = (self._link(f.value) if crc32(b"|lk", h) % 3 == 0 else v.names[f.value]) if "{object}" in tpl else ""
            if obj and self.b["described"] and not any(d + "{object}" in tpl.lower() for d in self.language.grammar.determiners):
                obj = self._described(f.value, obj, crc32(b"|ob", h))
            start = self._date(f.valid_from, st["date"]) if f.valid_from and "{start}" in tpl else ""
            end = (self._date(f.valid_to, st["date"]) if f.valid_to else self.w("present")) if "{end}" in tpl else ""
            when = ""
            if f.valid_from and "{when" in tpl:
                b = self.b
                a, z = str(f.valid_from.year), str(f.valid_to.year) if f.valid_to else ""
                spans = (b["span_event"] if m.event else b["span_open_news"] if at is not None and not f.valid_to
                         else b["span_closed"] if f.valid_to and z != a else b["span_open"] if not f.valid_to else b["span_event"])
                when = g.choose_h(spans, crc32(b"|sp", h)).format(a=a, b=z)
            s = tpl.format(subject=subject, object=obj, label=self._label(t, f.predicate), start=start, end=end, when=when,
                           when_cap=g.cap(when.strip("()（）")) if "{when_cap}" in tpl else "")
            s += self._note_words(m, f, h)  # the link's own attributes: ' in sales'
            if f.valid_from:
                y0 = str(f.valid_from.year)
                tags = self.b["tag_end"]  # its end: '(2008–2016)', '(until 2016)', '(to 2016)' (none in Chinese)
                if (tags and y0 in s and f.valid_to and not m.event and str(f.valid_to.year) not in s
                        and f.valid_to.year != f.valid_from.year):
                    s += tags[crc32(b"|tg", h) % len(tags)].format(span=self._year_span(f, m), b=f.valid_to.year)
                elif y0 not in s or (f.valid_to and not m.event and str(f.valid_to.year) not in s):
                    s += (self.w("tag_span", span=self._year_span(f, m)) if at is None or m.event or f.valid_to
                          else self.w("tag_from", a=f.valid_from.year))
                elif at is None and not m.event and f.valid_to is None and not any(
                        w in s for w in self.b["open_said"]):  # an open tenure says so
                    k = crc32(b"|on", h) % 2
                    s += self.w("tag_to_present") if k == 0 else self.w("tag_ongoing")  # its year is said
            return s
        value = self._value(t, f, st, link=False)
        opts, bare = self._attribute_options(t, f.predicate, f.value_type)
        tpl = g.choose_h(opts, h)
        if subject == "it" or subject.startswith(("the ", "this ")):  # 'it's ownership' -> 'its ownership'; no 'the it'
            tpl = _unthe(tpl, subject)
        label = self._label(t, f.predicate)
        if f.value_type in ("int", "float") and g.is_one(f.value):  # '1 article', not 'has published 1 articles'
            tpl = self.language.for_one(tpl)
            if "{value} {label}" in tpl:  # 'X has 1 runway'
                label = self.language.singular(label) or label
        if bare and "{bare}" in tpl:
            return tpl.format(subject=subject, value=value, label=label,
                              bare=g.format_number(f.value, f.value_type, None, rounded=st["round"], lang=self.lang))
        return tpl.format(subject=subject, value=value, label=label)

    def _described(self, eid: str, text: str, h: int) -> str:
        """An entity named with what it is and where ("the Heshalland club Athletic Valdel",
        "Athletic Valdel (Heshalland)"), about half the time; else its name alone."""
        v = self.view
        opts = self.b["described"]  # drawn by h % 6: past the bank's options, the name alone
        home = v.home_of.get(eid)
        k = h % 6
        if home is None or k >= len(opts) or v.names[home] in text:
            return text
        noun = self._noun(v.type_of[eid])
        if "{noun}" in opts[k] and noun.split()[-1].lower() in text.lower():  # not "the club Athletic Club"
            return text
        return opts[k].format(where=v.names[home], noun=noun, name=text)

    def _relation_options(self, t: str, pred: str, ended: bool, dated: bool, own_only: bool) -> tuple[str, ...]:
        """The phrasings a link may take: the pack's own first (twice as likely), then generic ones."""
        ck = (t, pred, ended, dated, own_only)
        opts = self._options.get(ck)
        if opts is None:
            m = self.view.meta[(t, pred)]
            # a phrase that dates the link only where the link has its dates (a link placed `at:` its
            # source's founding has none of its own: no 'published there since .')
            own = [p for p in m.phrases if ("{end}" not in p or ended) and ("{start}" not in p or dated)]
            generic_key = "event_link" if m.event else "dated_link" if dated else "link"
            shape = self.language.label_shape(m.label)
            if shape is not None:  # "X has been recommended by Y since 2019", not "recommended by of X: Y"
                generic_key = (f"link_{shape}" if not dated and not m.event else
                               f"dated_link_{shape}" + ("" if ended or m.event else "_open"))
            elif generic_key == "link" and self.language.plural(m.label):  # "the authors of X include Y", not "... is Y"
                generic_key = "link_plural"
            mine = tuple(p.rstrip(".。") for p in own)
            b = self.b
            # the pack's words twice as likely as the generic notes ("X's clubs: Y (2001–2005)")
            opts = self._options[ck] = mine if mine and own_only else mine * 2 + b[generic_key] if mine else b[generic_key]
        return opts

    def _attribute_options(self, t: str, pred: str, value_type: str) -> tuple[tuple[str, ...], bool]:
        """The phrasings an attribute may take, and whether any uses the bare number ({bare})."""
        ck = (t, pred, value_type)
        hit = self._options.get(ck)
        if hit is None:
            m = self.view.meta[(t, pred)]
            b = self.b
            own = list(m.phrases)
            bare = False
            if m.unit and value_type in ("int", "float") and self.language.grammar.unit_stems:
                # 'employs {value}' with unit 'employees' would say 'employs 5 employees': the bare number there.
                stem = m.unit.lower()[:6]
                if len(stem) >= self.language.grammar.unit_stems:  # (only where the phrasing names what is counted after the
                    # number: 'has published {value} articles'; 'employs {value}.' keeps its unit, never 'employs 2,932.')
                    own = [p.replace("{value}", "{bare}") if stem[:-1] in p.lower().replace("{value}", "")
                           and re.search(r"\{value\} [^\W\d_]", p) else p for p in own]
                    bare = True
            if value_type == "date":
                opts = tuple(p.rstrip(".。") for p in own) + tuple(self._date_variants(own))
                if not opts:
                    opts = b["date_attr"]
            else:
                generic = b["bool_attr"] if value_type == "bool" else b["attr"] if value_type in ("int", "float") else b["attr_text"]
                if self._counted(m, value_type):  # never "the employees of X is 651 employees"
                    generic = b["attr_counted"]
                elif value_type in ("int", "float") and not m.unit and self.language.plural(m.label):
                    generic = b["attr_count_label"]  # 'X has 2 runways', never 'the runways of X are 2'
                elif value_type != "bool" and self.language.plural(m.label):  # never "the colours of X is"
                    generic = b["attr_plural"]
                mine = tuple(p.rstrip(".。") for p in own)
                opts = mine * 2 + generic
            hit = self._options[ck] = (opts, bare)
        return hit

    def _counted(self, m: PredicateMeta, value_type: str) -> bool:
        """A count whose label is its unit (label "Employees", unit "employees"): the value says
        what is counted, so no phrasing names the label beside it."""
        stems = self.language.grammar.unit_stems
        return bool(m.unit and value_type in ("int", "float") and stems and len(m.unit) >= stems
                    and m.unit.lower()[:5] in m.label.lower())

    @staticmethod
    def _date_variants(phrases: list[str]) -> list[str]:
        """More ways to say a pack's 'X was founded on {value}.': 'On {value}, X was founded', ..."""
        out = []
        for p in phrases:
            p = p.rstrip(".")
            if p.endswith(" on {value}") and p.count("{value}") == 1:
                core = p[: -len(" on {value}")]
                core = core[0].lower() + core[1:] if core[:1].isupper() else core
                out += ["on {value} " + core]
        return out

    def _sentences(self, t: str, facts: list[Fact], st: dict, key: str, name: str, at: dt.date | None = None) -> list[str]:
        """Facts as sentences of two or three clauses (never one left alone at the end): the first
        clause of each sentence names the subject, later ones mostly refer back to it."""
        return self._sentences_h(t, facts, st, crc32(key.encode()), name, at)

    def _sentences_h(self, t: str, facts: list[Fact], st: dict, h: int, name: str, at: dt.date | None = None) -> list[str]:
        """`_sentences` with the key given as its checksum: a fact's clause is keyed by
        `key|fact_id`, its reference by that and '|r', '|ref'; groups by '|g{i}', joins by '|j{i}'."""
        out, i, total, lang = [], 0, len(facts), self.lang
        while i < total:
            r = total - i
            n = r if r <= 3 else 2 if r == 4 else 2 + crc32(b"|g%d" % i, h) % 2
            group = []
            for j in range(i, i + n):
                f = facts[j]
                k = crc32(("|" + f.fact_id).encode(), h)
                subject = name if j == i or crc32(b"|r", k) % 4 == 0 else self._ref_to(t, name, crc32(b"|ref", k))
                group.append(self._clause_h(t, f, st, k, subject, at))
            out.append(g.join_clauses_h(group, crc32(b"|j%d" % i, h), lang))
            i += n
        return out

    # ------------------------------------------------------------------ kinds

    def _infobox(self, t: str, attrs: list[Fact], outs: list[Fact], st: dict) -> list[str]:
        """Attribute and to-one link rows, one per label; equal labels get told apart."""
        v = self.view
        rows: list[tuple[str, str]] = []
        for f in attrs:
            if f.predicate != "name":
                rows.append((v.meta[(t, f.predicate)].label, self._value(t, f, st, table=True)))
        for f in outs:
            m = v.meta[(t, f.predicate)]
            if m.to_one:
                cell = self._value(t, f, st, table=True) + self._note(f, m)
                if f.valid_from:
                    cell += self._when_tag(f, m, st["table_date"])
                rows.append((m.label, cell))
        # every label its own row: values that happen to be equal never merge ("| h-index and publications | 0 |")
        out, used = [], set()
        for label, cell in dict.fromkeys(rows):
            k = 2
            base = label
            while label.lower() in used:
                label, k = f"{base} ({k})", k + 1
            used.add(label.lower())
            out.append(f"| {label} | {cell} |")
        return [f"| {self._type_label(t)} | |", "|---|---|", *out]

    def _type_label(self, t: str) -> str:
        return humanise(self._noun(t))

    def _when_tag(self, f: Fact, m: PredicateMeta, style: str) -> str:
        """' (date)' for an event, ' (from – to)' for an ended link, ' (since date)' for an open one."""
        d = self._date(f.valid_from, style)
        if m.event:
            return self.w("tag_date", d=d)
        if f.valid_to:  # a link that ended: both dates, never 'since'
            return self.w("tag_range", d=d, e=self._date(f.valid_to, style))
        return self.w("tag_since_date", d=d)

    def _article(self, page: Page) -> str:
        v = self.view
        eid = page.subject
        t = v.type_of[eid]
        name = v.names[eid]
        st = self._style(page.site, "article")
        hp = crc32(page.url.encode())  # every slot of the page is keyed by its URL and a suffix
        b = self.b
        lang = self.lang
        meta = v.meta
        attrs, outs, to_one, to_many = [], [], [], []
        for f in page.facts:
            if f.subject == eid:
                m = meta[(t, f.predicate)]
                if not m.relation:
                    attrs.append(f)
                else:
                    outs.append(f)
                    (to_one if m.to_one else to_many).append(f)
        ins = [f for f in page.facts if f.subject != eid]
        lines = [f"# {page.title}", ""]
        lead = f"**{name}**"
        paren, desc, told = self._lead_desc(eid, t, attrs, outs, hp, st)
        if v.aliases.get(eid):
            aka = self.w("aka", aliases=self.w("list_sep").join(f"*{a}*" for a in v.aliases[eid]))
            paren = aka[:-1] + "; " + paren[2:] if paren else aka  # one parenthesis: "(also known as *K. B.*; born 1988)"
        lead = self.w("lead", name=lead + paren, desc=desc)
        linked = {f.predicate for f in to_one}  # the infobox shows a lookup of a link; the prose says the link
        plain = [f for f in attrs if f.predicate != "name" and f.value_type != "date" and v.echoes[t].get(f.predicate) not in linked]
        dated_attrs = [f for f in attrs if f.value_type == "date"]
        self._own_refs(eid, t, outs)
        featured = (plain[:2] + to_one[:1])
        lead_s = self._sentences_h(t, featured, st, crc32(b"|lead", hp), name)
        lines += [self.sp.join([lead, *lead_s]), ""]
        lines += self._infobox(t, attrs, outs, st)
        lines.append("")
        rest = [f for f in plain + to_one if f not in featured]  # the lead said the featured facts
        if rest:
            lines += [f"## {g.choose_h(b['overview'], crc32(b'|ov', hp))}", "",
                      self.sp.join(self._sentences_h(t, rest, st, crc32(b"|ovs", hp), name)), ""]
        # History: dated facts about the entity itself, in date order, as a narrative.
        dated = sorted((f for f in dated_attrs + outs if f.value_type == "date" or f.valid_from),
                       key=lambda f: (f.valid_from or dt.date.fromisoformat(f.value), f.fact_id))
        story = [f for f in dated if f is not told]  # a birth the lead told in full is not told again
        if len(story) >= 2:
            lines += [f"## {g.choose_h(b['history'], crc32(b'|hi', hp))}", "", self._history(t, story, st, hp, name, self._born(t, dated)), ""]
        # A section per to-many relation, then per incoming relation.
        for pred, fs in _by_predicate(to_many):
            m = meta[(t, pred)]
            lines += [f"## {m.label}", ""]
            narrated = len(story) >= 2 and all(f.valid_from for f in fs)  # the history tells them already
            if len(fs) > 1 and not narrated and crc32((pred + "|p").encode(), hp) % 2:
                clauses = [self._clause_h(t, f, st, crc32(("|out" + f.fact_id).encode(), hp),
                                          name if i % 2 == 0 else self._ref_h(t, crc32(f.fact_id.encode(), hp)))
                           for i, f in enumerate(fs)]
                lines += [self.sp.join(g.join_clauses_h(clauses[i:i + 2], crc32(b"|oj%d" % i, hp), lang)
                                       for i in range(0, len(clauses), 2)), ""]
            lines += [f"- {self._link(f.value)}{self._note(f, m)}" + (self.w("tag_span", span=self._year_span(f, m)) if f.valid_from else "")
                      for f in fs]
            lines.append("")
        lines += self._incoming_sections(page, ins, st, hp)
        if dated:
            lines += [f"## {g.choose_h(b['timeline'], crc32(b'|tl', hp))}", ""]
            for f in dated:
                lines.append(self._bullet(t, f, st))
            lines.append("")
        if page.layout.get("lists"):  # a part's lists of its entities, type by type
            lines += [f"## {self.w('lists')}", ""]
            lines += [self.w("list_entry_one" if n == 1 else "list_entry", title=title, url=url, count=f"{n:,}")
                      for title, url, n in page.layout["lists"]]
            lines.append("")
        related = list(dict.fromkeys([f.value for f in outs] + [f.subject for f in ins]))[:5]
        if related:
            lines += [f"## {g.choose_h(b['see_also'], crc32(b'|sa', hp))}", ""]
            lines += [f"- {self._link(r)}" + self.w("noun_tag", noun=self._noun(v.type_of[r])) for r in related]
            lines.append("")
        tail = article_sources(v, page, self.lang)
        return "\n".join(lines) + ("\n" + tail if tail else "")

    def _incoming_sections(self, page: Page, ins: list[Fact], st: dict, hp: int) -> list[str]:
        """An article's section per incoming relation: the links told from the other side, listed,
        and the full list's count and address when the article shows only some."""
        v, b, lang, meta = self.view, self.b, self.lang, self.view.meta
        lines: list[str] = []
        more = page.layout.get("more", {})
        groups = _by_predicate(ins)
        # a list none of whose entities has an article here is still a section: the link to the full list
        groups += [(pred, []) for pred in sorted(more) if pred not in {p for p, _ in groups}]
        for pred, fs in groups:
            src_t = v.relations[pred].source
            m = meta[(src_t, pred)]
            lines += [f"## {m.inverse_label}", ""]
            hpred = crc32(pred.encode(), hp)
            if pred in more:
                total, url = more[pred]
                phrases = b["more_list"] if fs else tuple(x for x in b["more_list"] if "{shown}" not in x and "其余" not in x)
                what = m.inverse_label.lower()
                by_type = self.language.grammar.has_plurals and self.language.singular(m.inverse_label) is None  # not '8 discography'
                if by_type:
                    what = v.plural(src_t).lower()  # 'the full list of 8 albums'
                if total == 1:  # one, on a list of its own: not "the full list of 1 publications"
                    phrases = b["more_one"]
                    what = self._noun(src_t).lower() if by_type else self.language.singular(m.inverse_label) or what
                lines += [g.choose_h(phrases, hpred).format(count=f"{total:,}", shown=len(fs), url=url, what=what), ""]
            if hpred % 3 != 0:  # each link told from the other side, in sentences, then listed
                clauses = [self._clause_h(src_t, f, st, crc32(("|in" + f.fact_id).encode(), hp), v.names[f.subject]) for f in fs]
                lines += [self.sp.join(g.join_clauses_h(clauses[i:i + 2], crc32(b"|inj%d" % i, hp), lang)
                                       for i in range(0, len(clauses), 2)), ""]
            lines += [f"- {self._link(f.subject)}{self._note(f, m)}" + (self.w("tag_span", span=self._year_span(f, m)) if f.valid_from else "")
                      for f in fs]
            lines.append("")
        return lines

    def _lead_desc(self, eid: str, t: str, attrs: list[Fact], outs: list[Fact], hp: int,
                   st: dict) -> tuple[str, str, Fact | None]:
        """(a parenthesis after the name, the description, the fact the parenthesis told in full)
        of an article's first sentence, as encyclopedias write it: the type's description with,
        where the page states them, when it began ('(born January 9, 1988 in Tamview)', 'founded
        in 1957') and where it is ('based in Heshalland'), each said or left out per page."""
        v = self.view
        desc = v.description(t)
        if "{" in desc:  # a description that names the entity's own values ('a {format} album': 'a live album')
            vals = {f.predicate: f.value for f in attrs if f.value_type not in ("date", "bool")}
            try:
                desc = desc.format(**vals)
            except (KeyError, IndexError, ValueError, AttributeError, TypeError):  # a value the page does not state, or a
                # slot that is no plain name ('{format.x}', '{format[x]}'): the type's noun
                desc = g.word(self.lang, "a_noun", noun=self._noun(t))
        b = self.b
        began = self._began(t, attrs) if b["lead_began"] else None  # (a Chinese lead is its description)
        paren, told = "", None
        k = crc32(b"|ld", hp)
        if began is not None and k % 3:
            word = self._began_word(t, began, k)
            if k % 3 == 1:  # the whole date, and a person's birthplace with it
                told = began
                place = next((f.value for f in outs if "birth" in v.meta[(t, f.predicate)].label.lower()), None)
                where = b["lead_where"][0].format(place=v.names[place]) if place and (k >> 5) % 2 else ""
                paren = b["lead_born"][0].format(word=word, date=self._date(began.value, st['date']), where=where)
            else:
                desc += b["lead_began"][0].format(word=word, year=began.value[:4])
        home = v.home_of.get(eid)
        homes = b["lead_home"]
        if homes and home is not None and any(f.value == home for f in outs) and crc32(b"|lh", hp) % 3:
            desc += homes[crc32(b"|lw", hp) % len(homes)].format(place=v.names[home])
        return paren, desc, told

    def _bullet(self, t: str, f: Fact, st: dict) -> str:
        """A timeline line: the date, then what happened, without restating the date."""
        m = self.view.meta[(t, f.predicate)]
        if f.value_type == "date":
            return f"- **{self._date(f.value, st['date'])}** – {m.label}"
        tail = self.w("until", d=self._date(f.valid_to, st['date'])) if f.valid_to and not m.event else ""
        colon = self.language.colon
        return f"- **{self._date(f.valid_from, st['date'])}** – {m.label}{colon}{self._link(f.value)}{self._note(f, m)}{tail}"

    def _history(self, t: str, dated: list[Fact], st: dict, hk: int, name: str, born: dt.date | None = None) -> str:
        """The dated facts as a narrative; `hk` is the checksum of the page's key (its URL)."""
        b = self.b
        out = []
        prev: int | None = None
        for i, f in enumerate(dated):
            when = f.valid_from or dt.date.fromisoformat(f.value)
            k = crc32(("|h|" + f.fact_id).encode(), hk)
            subject = name if i == 0 or crc32(b"|r", k) % 3 == 0 else self._ref_to(t, name, crc32(b"|ref", k))
            clause = self._clause_h(t, f, st, k, subject)
            lead = ""
            if clause.startswith(subject) and ":" not in clause and "：" not in clause:  # never "In 1969, Born on ...", nor before a note
                lead = self._opener(when, prev, born, str(when.year) in clause, k)
            out.append(lead + (g.lower_start(clause, self.lang) if self.language.cased and lead else clause))
            # the next opener counts from the last year a reader saw here: a stint's end where the
            # sentence says it ("from 2001 to 2005. Three years later" is 2008), else its start
            end = f.valid_to.year if f.valid_to is not None else None
            prev = end if end is not None and end > when.year and str(end) in out[-1] else when.year
        # Two events per sentence, joined with a connective chosen per pair.
        joins = b["history_joins"]
        stop = get_language(self.lang).stop
        sents = []
        for i in range(0, len(out), 2):
            pair = out[i:i + 2]
            if len(pair) == 2:
                j = g.choose_h(joins, crc32(b"|hj%d" % i, hk))
                second = g.cap(pair[1]) if j in (". ", "。") or not self.language.cased else g.lower_start(pair[1], self.lang)
                sents.append(g.cap(pair[0]) + j + second + stop)
            else:
                sents.append(g.cap(pair[0]) + stop)
        return self.sp.join(sents)

    def _began_word(self, t: str, began: Fact, k: int) -> str:
        """How a lead says when the entity began, from its start date's label: 'born', 'founded'
        or 'established' (a firm, a town), 'published', 'released', 'awarded'; else 'started'
        (a season: a musician was 'founded' and an article 'established' before)."""
        b = self.b
        if t in self.people:
            return b["began_person"][0]
        label = self.view.meta[(t, began.predicate)].label.lower()
        if label in b["began_founded"]:
            return b["began_founded"][(k >> 3) % len(b["began_founded"])]
        if label in b["began_person"] or (" " not in label and self.language.participle(label)):
            return label
        return b["began_other"][0]

    def _began(self, t: str, facts: list[Fact]) -> Fact | None:
        """The fact among `facts` that dates the start of an entity of type t (its type's
        lifecycle start: born, founded), if there is one."""
        et = self.view.types.get(t)
        start = et.lifecycle.start if et is not None and et.lifecycle is not None else None
        return next((f for f in facts if f.predicate == start and f.value_type == "date"), None) if start else None

    def _born(self, t: str, dated: list[Fact]) -> dt.date | None:
        """A person's birth date among a page's dated facts (their type's lifecycle start)."""
        f = self._began(t, dated) if t in self.people else None
        return dt.date.fromisoformat(f.value) if f is not None else None

    def _opener(self, when: dt.date, prev: int | None, born: dt.date | None, year_said: bool, k: int) -> str:
        """How a history sentence opens: the year (unless the clause says it), the season, the time
        since the previous event, or the person's age; with or without a comma."""
        b, y = self.b, when.year
        opts: list[str] = []
        if not year_said:
            opts += [o.format(y=y) for o in b["opener_year"]] + [b["opener_month"][when.month - 1].format(y=y)]
            if prev is not None and y > prev:
                opts += [o.format(y=y) for o in b["opener_later_year"]]
        if prev is not None:
            gap = y - prev
            if gap == 0:
                opts += b["opener_same_year"]
            elif 1 < gap <= 12:
                n = g.number_words(gap, self.lang)
                opts += [o.format(n=n) for o in b["opener_gap"]]
            elif gap == 1:
                opts += b["opener_gap_one"]
            if year_said:
                opts += b["opener_after"]
        if born is not None and when > born:
            age = _age(born, when)
            if 14 <= age <= 90:
                a = g.number_words(age, self.lang)  # in words: a page's figures are its facts'
                opts += [o.format(a=a) for o in b["opener_age"] + (b["opener_young"] if age < 25 else ())]
        return g.cap(g.choose_h(tuple(opts), crc32(b"|op", k))) if opts else ""

    def _profile(self, page: Page) -> str:
        v = self.view
        eid = page.subject
        t = v.type_of[eid]
        name = v.names[eid]
        official = page.site == name
        voice = "official" if official else ("fan", "catalog")[pick("voice|" + page.site, 2)]
        st = self._style(page.site, voice)
        b = self.b
        key = page.url
        kind = self.w("official_site") if official else self.w("profile_kind", type=self._type_label(t))
        updated = f" · {self.w('updated', date=self._date(page.date, st['date']))}" if page.date else ""
        lines = [f"# {name}", "", f"*{page.site}* · {kind}{updated}", ""]
        home = bool(page.layout.get("home"))  # the entity's one page (it has no article)
        body = _once([f for f in page.facts if f.predicate != "name" and f.subject == eid], lambda f: v.meta[(t, f.predicate)])
        self._own_refs(eid, t, [f for f in body if v.meta[(t, f.predicate)].relation])
        intro = g.choose(b["official_intro"], key + "|in").format(subject=name) if official else ""
        layout = 0 if home else pick(page.url + "/layout", 2)  # a database's record: key facts, then lists
        if layout == 0:
            lines += ([intro, ""] if intro else []) + ["## " + g.choose(b["overview"], key + "|ov"), ""]
            cells: dict[str, list[str]] = {}  # a label once, its links side by side ('Clubs: A (2001–2005); B (since 2006)')
            for f in body:
                m = v.meta[(t, f.predicate)]
                cell = self._value(t, f, st, table=True) + (self._note(f, m) if m.relation else "")
                if f.valid_from:
                    cell += self._when_tag(f, m, st["date"])
                cells.setdefault(m.label, []).append(cell)
            lines += [self.w("field", label=label, cell=self.language.semicolon.join(cs)) for label, cs in cells.items()]
            lines.append("")
        elif official:
            clauses = []
            for f in body:
                m = v.meta[(t, f.predicate)]
                if not m.relation and f.value_type not in ("date", "bool"):
                    opts = (b["official_counted"] if self._counted(m, f.value_type) else
                            b["official_attr"] if f.value_type in ("int", "float") else b["official_attr_text"])
                    clauses.append(g.choose(opts, key + f.fact_id).format(label=self.language.mid(m.label), value=self._value(t, f, st, link=False)))
                else:
                    clauses.append(self._clause(t, f, st, key + f.fact_id, name))
            stop = get_language(self.lang).stop
            lines += [intro, "", "## " + self.w("about_us"), "", self.sp.join(g.join_clauses(clauses[i:i + 2], key + f"|j{i}", self.lang)
                                                                          for i in range(0, len(clauses), 2)) or name + stop, ""]
        else:
            lines += ["## " + self.w("about"), "", self.sp.join(self._sentences(t, body, st, key, name)) or name + get_language(self.lang).stop, ""]
        if home:  # who links to it, a list per kind (all of them: see `WorldView.homeless`)
            for pred, fs in _by_predicate(f for f in page.facts if f.subject != eid):
                m = v.meta[(v.relations[pred].source, pred)]
                lines += [f"## {m.inverse_label}", ""]
                lines += [f"- {self._link(f.subject)}{self._note(f, m)}" + (self.w("tag_span", span=self._year_span(f, m)) if f.valid_from else "")
                          for f in fs]
                lines.append("")
        else:
            lines += ["---", self.w("more_about", name=name, site=v.sites.encyclopedia.name, url=v.article_url[eid]), ""]
        return "\n".join(lines)

    def _news(self, page: Page) -> str:
        v = self.view
        eid = page.subject
        t = v.type_of[eid]
        name = v.names[eid]
        st = self._style(page.site, "news")
        b = self.b
        key = page.url
        event = page.facts[0]
        self._own_refs(eid, t, [f for f in page.facts if f.subject == eid and v.meta[(t, f.predicate)].relation])
        born = self._born(t, [f for f in page.facts if f.subject == eid])
        if born is not None and b["ref_age"] and page.date is not None:  # a paper's "the 26-year-old"
            age = _age(born, page.date)
            if 15 <= age <= 90:
                self._subject_refs = (name, (*self._subject_refs[1], b["ref_age"][0].format(age=self.language.count_words(age))))
        m = v.meta[(t, event.predicate)]
        lines = [f"# {page.title}", "", f"*{page.site}* · {self._date(page.date, st['date'])}", ""]
        lead = self._clause(t, event, st, key + "|lead", name, at=page.date, own_only=True)  # a headline event in the pack's words
        if m.relation:  # a link's date, unless the clause says it (an event's and a year's figures' page says it)
            d = self._date(event.valid_from or dt.date.fromisoformat(event.value), st["date"])
            if d not in lead:
                lead += self.w("effective", d=d)
        ctx = page.facts[1:]
        own_ctx = [f for f in ctx if f.subject == eid]
        first = [self._clause(t, own_ctx[0], st, key + "|lead2", self._ref(t, key + "|lr"), at=page.date)] if own_ctx else []
        lines += [self.w("dateline", site=page.site.upper() if self.language.cased else page.site)  # "ZENHAVEN TIMES —"
                  + g.join_clauses([lead, *first], key + "|lj", self.lang), ""]
        ctx = [f for f in ctx if not own_ctx or f is not own_ctx[0]]
        speaker = page.layout.get("speaker")
        about = [f for f in ctx if f.subject == eid]
        other = [f for f in ctx if f.subject != eid]
        third = max(1, len(about) // 3)
        body = []
        body += self._sentences(t, about[:third], st, key + "|body", name, at=page.date)
        if body:
            lines += [self.sp.join(body), ""]
        # Quotes: often none, sometimes two; said by a person of the story, or by a spokesperson of an
        # organisation (a product, a city or a paper says nothing)
        quotes = (0, 0, 0, 1, 1, 1, 1, 1, 2, 2)[crc32((key + "|nq").encode()) % 10]
        if not speaker and not v.has_spokesperson[t]:
            quotes = 0
        said = []
        for i in range(quotes):
            spk = (name if speaker == eid else self._link(speaker)) if speaker else \
                g.choose(b["spokesperson"], key + f"|spk{i}").format(subject=name)
            what = g.choose(b["quote_what"], key + f"|w{i}")
            q = g.quote(b, key + f"|q{i}", name, spk, self.lang, what)
            if q not in said:
                said.append(q)
        if said:
            lines += [self.sp.join(said), ""]
        rest = about[third:]
        if rest or other:
            head = g.choose(b["background"], key + "|bg").format(subject=name) if not other else g.choose(b["background"][:2], key + "|bg")
            para = self._sentences(t, rest, st, key + "|bgs", name, at=page.date)
            for f in other:
                ot = v.type_of[f.subject]
                para += self._sentences(ot, [f], st, key + "|o" + f.fact_id, v.names[f.subject], at=page.date)
            lines += [self.w("bg_head", head=head) + self.sp.join(para), ""]
        lines += [self.w("read_more", name=name, url=v.article_url[eid]), ""]
        return "\n".join(lines)

    def _directory(self, page: Page) -> str:
        v = self.view
        lay = page.layout
        t = lay["type"]
        st = self._style(page.site, "directory")
        cols = lay["columns"]
        rel = v.meta[(t, lay["by"])] if lay["by"] else None  # None: a part's list (by country)
        dated = rel is not None and rel.relation and rel.temporal
        lines = [f"# {page.title}", ""]
        plural = humanise(v.plural(t))
        label = rel.label.lower() if rel is not None else self._noun(lay["part"])
        by_line = self.w("index_line", plural=plural) if lay.get("index") else self.w("by_line", plural=plural, label=label)
        lines.append(f"*{page.site}* · " + by_line +
                     (" · " + self.w("page_of", p=lay["page"], n=lay["pages"]) if lay["pages"] > 1 else ""))
        lines.append("")
        notes = rel.notes if rel is not None and rel.relation else ()  # the links' own attributes, a column each
        event = dated and rel.event  # a dated event (a doctorate): its day, no span
        span_head = [self.w("on_date")] if event else [self.w("from"), self.w("to")] if dated else []
        head = [self._type_label(t)] + span_head + [n.label for n in notes] + [v.meta[(t, c)].label for c in cols]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for eid, f, cfacts in lay["rows"]:
            by_pred = {c.predicate: c for c in cfacts}
            cells = [self._link(eid)]
            if event:
                cells.append(self._date(f.valid_from, st["table_date"]) if f.valid_from else "")
            elif dated:
                cells += [self._date(f.valid_from, st["table_date"]) if f.valid_from else "",
                          self._date(f.valid_to, st["table_date"]) if f.valid_to else self.w("now")]
            if notes:
                vals = note_values(f)
                cells += [(vals[i] if i < len(vals) else "") or "–" for i in range(len(notes))]
            cells += [self._value(t, by_pred[c], st, table=True) if c in by_pred else "–" for c in cols]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        nav = []
        if lay["prev"]:
            nav.append(self.w("prev", url=lay["prev"]))
        if lay["next"]:
            nav.append(self.w("next", url=lay["next"]))
        if nav:
            lines += [self.w("nav_sep").join(nav), ""]
        if lay["pages"] > 2 and lay.get("urls"):  # numbered page links, as list sites show them
            links = [str(k) if k == lay["page"] else f"[{k}]({lay['urls'][k - 1]})" for k in page_links(lay["page"], lay["pages"])]
            lines += [self.w("pages_nav", links=" ".join(links)), ""]
        return "\n".join(lines)


def article_sources(view: WorldView, page: Page, lang: str) -> str:
    """An article's closing sections, the same whoever wrote the rest: its references (the news
    items about its subject, oldest first) and its external links (the subject's profile or
    official site). Facts the article leaves out are there."""
    out = []
    refs = page.layout.get("refs") or []
    if refs:
        out += ["", f"## {g.word(lang, 'references')}", ""]
        out += [g.word(lang, "ref_entry", n=i, title=title, url=url, site=site, date=get_language(lang).date(day))
                for i, (url, title, site, day) in enumerate(sorted(refs, key=lambda r: (r[3], r[0])), 1)]
    ext = page.layout.get("external")
    if ext:
        url, official, site = ext
        out += ["", f"## {g.word(lang, 'external_links')}", ""]
        out.append(g.word(lang, "official_link", url=url) if official
                   else g.word(lang, "profile_link", name=view.names[page.subject], site=site, url=url))
    return "\n".join(out)[1:] + "\n" if out else ""


def _by_predicate(facts) -> list[tuple[str, list[Fact]]]:
    out: dict[str, list[Fact]] = {}
    for f in facts:
        out.setdefault(f.predicate, []).append(f)
    return list(out.items())

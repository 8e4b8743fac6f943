"""Claims a written page makes beyond its fact sheet: names the world does not know, world
entities its sheet does not hold, a link said with another relation's words, a category value
the sheet does not give.

`text.FactSheetCheck` holds a page to its values (every fact stated, no date or number
invented). A model that writes fluently adds more than values: "headquartered in New York City",
"the birthplace of Albert Einstein", "its chief executive Anna Bailey" (a person of the world,
but not this company's). Each such sentence is a fact of the web the world does not hold and a
contradiction no task knows. `ClaimCheck` is built once per world view and language from what
the world itself can say:

- **names**: every entity's name and alias, the world's site names, the pack's words (labels,
  phrases, descriptions, category values, in every language it gives) and the language's page
  grammar (`web/banks`, `language/<code>.yaml`), plus common words of the language (Faker's
  word list), allowed only where a sentence starts;
- **candidate names** in Latin script are capitalised words that are none of these (a capital
  mid-sentence must be one the world's words write with a capital); in Chinese, where a name has
  no capital, every run of characters whose two-character pieces the world's words never use;
- **roles**: a world entity a page names must be on its sheet (the page's entities), and a
  sentence that uses words only one relation uses ("born", "headquartered") about a sheet entity
  must name one that the sheet links by that relation;
- **values**: a category value (an occupation, a genre) the sheet does not give is not stated.

The same check serves LLM pages, paraphrased questions and rewritten narration (`problems` with
no page: only the names), and `benchmarks/claims.py` measures it on injected claims per language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..language import get as get_language
from ..language import month_numbers, scale_words
from .grammar import bank, number_words
from .pages import Page, WorldView
from .text import note_values

_L = r"A-Za-z0-9\u00C0-\u024F\u1E00-\u1EFF"
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[{_L}](?:[{_L}'’\-]*[{_L}])?")
_IS_CJK = re.compile(rf"[{_CJK}]")
# what ends a sentence, a cell, a heading or a list item: the next word may take a capital anyway
_BREAK = re.compile(r"[.!?。！？:;：；|\n#*()\[\]\"“”«»¿¡–—]|(?:^|\s)-\s")
_SENTENCE = re.compile(r"[!?。！？\n]+|\.+(?=\s+[^\s\d]|\s*$)")  # not 'Vol. 2' nor '3.5'
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_URL = re.compile(r"https?://\S+|www\.\S+|\b[\w-]+\.(?:com|org|net|example)\b\S*")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_]*\}")
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」")
_MIN_CUE = 4  # a Latin cue word is at least this long ('born', 'based'); shorter ones are grammar


def tokens(text: str) -> list[str]:
    """Words (Latin script, with inner apostrophes and hyphens) and single CJK characters."""
    return _TOKEN.findall(text)


_CLITIC = re.compile(r"n[’']t$|[’'](?:s|m|re|ve|ll|d)$")


def _key(tok: str) -> str:
    """A word as names are looked up: lower case, without a possessive or a clitic ('Award's' ->
    'award', "I'm" -> 'i')."""
    return _CLITIC.sub("", tok.lower())


def _strings(x) -> Iterable[str]:
    """Every string inside a nested structure of dicts, lists and models' dumps."""
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for k, v in x.items():
            if isinstance(k, str):
                yield k
            yield from _strings(v)
    elif isinstance(x, (list, tuple, set, frozenset)):
        for v in x:
            yield from _strings(v)


def _bigrams(text: str) -> set[str]:
    out: set[str] = set()
    for run in re.findall(rf"[{_CJK}]+", text):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


class Vocabulary:
    """The words a body of text uses (lower case), those it writes with a capital, its CJK
    character pairs, and the single characters that stand next to a slot in it ('{x}的所属{label}为'):
    what a new text may say without naming anything new. `novel` lists what it says beyond them."""

    def __init__(self, texts: Iterable[str], lang: str):
        texts = list(texts)
        words: set[str] = set()
        caps: set[str] = set()
        for s in texts:
            for tok in tokens(_PLACEHOLDER.sub(" ", s)):
                if not _IS_CJK.match(tok):
                    words.add(tok.lower())
                    if tok[0].isupper():
                        caps.add(tok.lower())
        # what may start a sentence with a capital (not a general word list: Faker's carries names,
        # 'parís' among Spanish words; a model's text that starts a sentence with a word the world
        # never writes is refused, which costs a retry)
        self.words = words
        self.caps = caps | set(month_numbers())  # what may take a capital mid-sentence
        self.bigrams = set().union(*(_bigrams(s) for s in texts))
        self.joints = {c for s in texts for m in _PLACEHOLDER.finditer(s)
                       for c in (s[m.start() - 1:m.start()], s[m.end():m.end() + 1]) if c and _IS_CJK.match(c)}
        # what fills {n} and a scaled amount ('七年后', '1.2亿美元')
        self.joints |= {c for n in range(0, 101) for c in number_words(n, lang) if _IS_CJK.match(c)}
        self.joints |= {c for w in scale_words() for c in w if _IS_CJK.match(c)}
        self.joints |= get_language(lang).reading.free_characters  # particles and prepositions ('起', '在')
        self.latin_names = get_language(lang).reading.names_by == "latin"  # Chinese: a Latin word stands out as a name

    @classmethod
    def of(cls, lang: str, *data) -> Vocabulary:
        """The words of every string inside `data` (a grammar's nested dicts and lists) and of the
        language's file (`language/<code>.yaml`, its check patterns left out)."""
        own = {k: v for k, v in get_language(lang).data.items() if k != "checks"}
        return cls([*_strings(data), *_strings(own)], lang)

    def segments(self, run: str, local_bi: set[str] | frozenset = frozenset()) -> bool:
        """Whether a run of CJK characters is written in the world's words: it splits into pieces
        of two or more characters each of whose pairs the world's words (or the sheet's values)
        use, and single characters that stand next to a slot in the page grammar ('为', '的')."""
        n = len(run)
        ok = [True] + [False] * n  # ok[k]: run[:k] splits
        for k in range(1, n + 1):
            if ok[k - 1] and run[k - 1] in self.joints:
                ok[k] = True
                continue
            j = k - 1
            while j >= 1 and (run[j - 1:j + 1] in self.bigrams or run[j - 1:j + 1] in local_bi):
                j -= 1
                if ok[j]:
                    ok[k] = True
                    break
        return ok[n]

    def novel(self, text: str, known: Iterable[str] = ()) -> list[str]:
        """What `text` names beyond these words and the `known` texts' (a rewrite's original, the
        names its context showed): capitalised words (not starting a sentence with a word of
        these), runs of CJK characters these words do not split into (`segments`) and, in a
        language whose names stand out as Latin letters (Chinese), any Latin word none of them uses."""
        known = list(known)
        local = {_key(t) for k in known for t in tokens(k)}
        local_bi = set().union(*(_bigrams(k) for k in known)) if known else set()
        out: list[str] = []
        for sentence in _SENTENCE.split(_URL.sub(" ", text)):
            spans = [(m.group(0), m.start()) for m in _TOKEN.finditer(sentence)]
            out += self.unknown(sentence, spans, local, local_bi, latin=self.latin_names)
        return list(dict.fromkeys(out))

    def unknown(self, sentence: str, spans: list[tuple[str, int]], local: set[str], local_bi: set[str] | frozenset,
                covered: list[bool] | None = None, latin: bool = False) -> list[str]:
        """The names one sentence says beyond these words, in order: 'unknown name ...' for a run
        of capitalised words none of these writes with a capital (or starts a sentence with), nor
        `local` holds; 'unknown words ...' for a run of CJK characters that does not split into
        these words (`segments`, with `local_bi`). `covered` words (a world name already read)
        break runs and are not judged; with `latin`, a lower-case Latin word these words and
        `local` never use is a name too (a Latin word in Chinese prose)."""
        out: list[str] = []
        run: list[str] = []
        cjk = ""
        prev_end = 0
        for j, (tok, start) in enumerate(spans):
            gap = sentence[prev_end:start]
            prev_end = start + len(tok)
            hidden = covered is not None and covered[j]
            if _IS_CJK.match(tok):
                if run:
                    out.append(f"unknown name {' '.join(run)!r}")
                    run = []
                if hidden or (j and start != spans[j - 1][1] + len(spans[j - 1][0])):
                    if len(cjk) >= 2 and not self.segments(cjk, local_bi):
                        out.append(f"unknown words {cjk!r}")
                    cjk = ""
                if not hidden:
                    cjk += tok
                continue
            if len(cjk) >= 2 and not self.segments(cjk, local_bi):
                out.append(f"unknown words {cjk!r}")
            cjk = ""
            lt = _key(tok)
            if hidden or not (tok[:1].isupper() or (latin and tok[:1].isalpha())):
                known = True
            elif not tok[:1].isupper():  # a lower-case Latin word in Chinese prose
                known = lt in local or lt in self.words
            else:
                initial = j == 0 or bool(_BREAK.search(gap))
                known = (lt in local or lt in self.caps or (initial and lt in self.words) or tok.isdigit()
                         or len(lt) == 1)  # an initial, "I'm" ('C. Fritz')
            if not known:
                run.append(tok)
            elif run:
                out.append(f"unknown name {' '.join(run)!r}")
                run = []
        if run:
            out.append(f"unknown name {' '.join(run)!r}")
        if len(cjk) >= 2 and not self.segments(cjk, local_bi):
            out.append(f"unknown words {cjk!r}")
        return out


class ClaimCheck:
    """What one world can say in one language (see the module); `problems` lists a text's claims."""

    def __init__(self, view: WorldView):
        self.view = view
        self.lang = view.lang
        world = view.world
        # every name and alias of the world's entities, as lower-case token tuples, by first token
        self.first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for eid, name in view.names.items():
            self._add_name(name, eid)
        for eid, aliases in view.aliases.items():
            for a in aliases:
                self._add_name(a, eid)
        sites = self._site_names()
        for site in sites:  # a site's name is no entity's ('Halthu Honours', though a place is Halthu)
            self._add_name(site, "")
        for lst in self.first.values():
            lst.sort(key=lambda x: -len(x[0]))
        # the world's own words: page grammar, language file, pack text, site names
        texts: list[str] = list(_strings(bank(self.lang)))
        lang = get_language(self.lang)
        texts += list(_strings({k: v for k, v in lang.data.items() if k != "checks"}))
        texts += list(_strings(world.spec.model_dump(mode="json")))
        for pack_text in _pack_texts(world):
            texts.append(pack_text)
        texts += sites
        texts += list(month_numbers())
        texts += [number_words(n, self.lang) for n in range(0, 101)]  # 'seven years later', '七年后'
        texts += [view.noun(t) for t in view.types] + [view.lexicon.plural(t) for t in view.types]
        texts += [m.label for m in view.meta.values()] + [x for m in view.meta.values() for x in _strings(_meta_texts(m))]
        self.vocab = Vocabulary(texts, self.lang)
        grammar = {t.lower() for s in _strings(bank(self.lang)) for t in tokens(_PLACEHOLDER.sub(" ", s))}
        self.grammar = grammar
        self.cues = self._relation_cues(grammar)
        self.categories = self._category_values()

    # ------------------------------------------------------------------ the world's words

    def _add_name(self, name: str, eid: str) -> None:
        toks = tuple(_key(t) for t in tokens(name))
        if toks:
            self.first.setdefault(toks[0], []).append((toks, eid))

    def _site_names(self) -> list[str]:
        s = self.view.sites
        out = [s.encyclopedia.name, s.directory.name] + [o.name for o in s.outlets]
        names = s.names
        out += [str(v) for v in _strings(names)]
        words = set(names.get("profiles", {}) or {}) | set(self.view.types)
        words |= {et.pages.profile.site for et in self.view.types.values() if et.pages.profile is not None}
        for w in sorted(words):
            out.append(s.profile(w).name)
        return out

    def _relation_cues(self, grammar: set[str]) -> dict[str, str]:
        """Words (Latin, lower case) that only one relation's page text uses (its labels and
        phrases in the language), and neither the page grammar nor any attribute's text does: a
        sentence with one of them says that relation. (Chinese has no such words to split out: its
        relations are read by their phrases, `phrase_cues`.)"""
        by_cue: dict[str, set[str]] = {}
        generic_words = set(grammar)
        for (_t, pred), m in self.view.meta.items():
            if pred in self.view.relations:
                continue
            for s in (m.label, *m.phrases):
                s = _PLACEHOLDER.sub(" ", s)
                generic_words.update(t.lower() for t in tokens(s))
        for t in self.view.types:  # (what a type is: 'a manufacturer of aircraft' says no link)
            for s in (self.view.noun(t), self.view.lexicon.plural(t), self.view.description(t)):
                generic_words.update(x.lower() for x in tokens(s))
        for r, rs in self.view.relations.items():
            m = self.view.meta[(rs.source, r)]
            for s in (m.label, m.inverse_label, *m.phrases):
                s = _PLACEHOLDER.sub(" ", s)
                for tok in tokens(s):
                    if not _IS_CJK.match(tok) and len(tok) >= _MIN_CUE and tok.lower() not in generic_words:
                        by_cue.setdefault(tok.lower(), set()).add(r)
        # a relation's own phrases as patterns ('{subject} was founded by {object}', '{subject}由{object}创办'):
        # a sentence one matches says that relation, though each of its words is also another's
        # (a pattern that the grammar's or an attribute's own text matches, 'fundó' in 'se fundó el
        # {value}', says nothing of a relation)
        generic = [_norm(_PLACEHOLDER.sub(" x ", x)) for x in [*_strings(bank(self.lang)), *map(self.view.description, self.view.types), *(
            y for (_t, pred), m in self.view.meta.items() if pred not in self.view.relations for y in (m.label, *m.phrases))]]
        by_phrase: dict[str, set[str]] = {}
        said_as: dict[str, list[str]] = {r: [_norm(_PLACEHOLDER.sub(" x ", ph)) for ph in self.view.meta[(rs.source, r)].phrases]
                                         for r, rs in self.view.relations.items()}
        for r, rs in self.view.relations.items():
            for ph in self.view.meta[(rs.source, r)].phrases:
                # the words between its slots, and those that touch a slot unspaced ('由{object}创办'): not
                # 'The' before a spaced {subject}, which any sentence may start with
                raw = _PLACEHOLDER.split(ph)
                parts = [_norm(x).strip() if 0 < i < len(raw) - 1 or (i == 0 and x[-1:].strip()) or (i and x[:1].strip()) else ""
                         for i, x in enumerate(raw)]
                if len(tokens(" ".join(parts))) >= 2 and len(_PLACEHOLDER.findall(ph)) >= 2:
                    pattern = r"(?:^| )" + r" .{1,80}? ".join(re.escape(x) for x in parts if x)
                    by_phrase.setdefault(pattern, set()).add(r)
        # (nor one another relation's phrase matches: 'the {subject} comes from {object}' of a product
        # matches 'the ... and Morton comes from Telbury', a birthplace's)
        self.phrase_cues = [(re.compile(c), r) for c, rs in by_phrase.items() if len(rs) == 1 for r in rs
                            if not any(re.search(c, g) for g in generic)
                            and not any(re.search(c, g) for o, gs in said_as.items() if o != r for g in gs)]
        return {c: next(iter(rs)) for c, rs in by_cue.items() if len(rs) == 1}

    def _category_values(self) -> dict[str, set[tuple[str, str]]]:
        """Every category value the world's pages can write (in the language), lower case, with
        the (type, attribute) it is a value of."""
        from ..world import value_translation

        out: dict[str, set[tuple[str, str]]] = {}
        for t, et in self.view.types.items():
            for a, spec in et.attributes.items():
                values = getattr(spec, "values", None)
                if not values or getattr(spec, "hidden", False):
                    continue
                tr = value_translation(self.view.world, t, a)
                for v in (values if isinstance(values, (list, tuple)) else list(values)):
                    v = str(v)
                    shown = str(tr.get(v, v))
                    if len(shown) >= 4:
                        out.setdefault(shown.lower(), set()).add((t, a))
        return out

    # ------------------------------------------------------------------ checking

    def problems(self, markdown: str, page: Page | None = None, allowed: Iterable[str] = ()) -> list[str]:
        """Every claim of `markdown` beyond what the world says: 'unknown name ...' for a name the
        world does not know; with a page, also 'names ... not on its sheet', 'says <relation> of
        ...' and 'says ... (<attribute>)' (see the module). `allowed` are further names (a question's
        own words)."""
        view = self.view
        text = _URL.sub(" ", _LINK_TARGET.sub("]", markdown))
        sheet: set[str] = set()
        local: set[str] = set()  # words of the sheet's own names and values, allowed anywhere
        if page is not None:
            sheet = set(page.entity_ids) | ({page.subject} if page.subject else set())
            for f in page.facts:
                sheet.add(f.subject)
                if f.value_type == "entity":
                    sheet.add(f.value)
                else:
                    local.update(_key(t) for t in tokens(f.value))
            local.update(_key(t) for t in tokens(page.title + " " + page.site))
            # an entity may be placed by its home ('born in Delberg, Nesburgh'): homes of the sheet's entities
            homes = view.home_of
            for eid in list(sheet):
                for _ in range(4):
                    eid = homes.get(eid)
                    if eid is None:
                        break
                    sheet.add(eid)
            sheet.add("")  # site names
            for eid in sheet:
                if eid in view.names:
                    local.update(_key(t) for t in tokens(view.names[eid]))
        for a in allowed:
            local.update(_key(t) for t in tokens(a))
        local_bi: set[str] = set()
        if page is not None:
            for f in page.facts:
                local_bi |= _bigrams(f.value if f.value_type != "entity" else view.names.get(f.value, ""))
            local_bi |= _bigrams(page.title + page.site)
            for eid in sheet:
                name = view.names.get(eid, "")
                local_bi |= _bigrams(name)
                if _IS_CJK.search(name):  # a Chinese name romanised ('Wang Zhijia')
                    local.update(_romanised(name))
        for a in allowed:
            local_bi |= _bigrams(a)
        extra: dict[str, list[tuple[str, ...]]] = {}
        for x in [*(f.value for f in (page.facts if page else ()) if f.value_type == "string"), *allowed]:
            toks = tuple(_key(t) for t in tokens(x))
            if toks:
                extra.setdefault(toks[0], []).append(toks)
        out: list[str] = []
        seen: set[str] = set()
        for sentence in _SENTENCE.split(text):
            out += self._sentence(sentence, page, sheet, local, seen, local_bi, extra)
        if page is not None:
            out += self._categories(text, page, local)
        return out

    def _names_at(self, sentence: str, spans: list[tuple[str, int]], low: list[str], local_bi: set[str],
                  extra: dict) -> tuple[list[tuple[int, int, set[str]]], set[str]]:
        """Every name of the world (or string of the sheet) that starts at each word, the longest
        there: (word index, words, entity ids); and the character pairs of Chinese names that may
        be chance, which the sentence may use as words."""
        n = len(spans)
        found: list[tuple[int, int, set[str]]] = []
        for i in range(n):
            best: tuple[int, set[str]] | None = None
            for toks, eid in self.first.get(low[i], ()):
                k = len(toks)
                if best is not None and k < best[0]:
                    break
                if tuple(low[i:i + k]) == toks:
                    best = (k, best[1] | {eid}) if best else (k, {eid})
            for toks in extra.get(low[i], ()):  # the sheet's own strings (a mayor's name, '李桂香', not 李桂)
                k = len(toks)
                if (best is None or k > best[0]) and tuple(low[i:i + k]) == toks:
                    best = (k, {""})
            if best is None:
                continue
            k, ids = best
            if _IS_CJK.match(spans[i][0]):
                if self._cjk_ambiguous(sentence, spans, i, k):
                    # '于海' inside '…于海洋…' may be chance: neither named nor unknown words
                    local_bi = local_bi | _bigrams("".join(t for t, _ in spans[i:i + k]))
                    continue
            elif not any(t[:1].isupper() or t[:1].isdigit() for t, _ in spans[i:i + k]):
                continue  # a name that is also a common word, written as the word ('delta', 'vision'; not 'the Quiet Orchards')
            found.append((i, k, ids))
        return found, local_bi

    def _sentence(self, sentence: str, page: Page | None, sheet: set[str], local: set[str], seen: set[str],
                  local_bi: set[str] = frozenset(), extra: dict | None = None) -> list[str]:
        extra = extra or {}
        out: list[str] = []
        spans = [(m.group(0), m.start()) for m in _TOKEN.finditer(sentence)]
        low = [_key(t) for t, _ in spans]
        n = len(spans)
        named: set[str] = set()  # world entities this sentence names
        covered = [False] * n
        # names, longest first; then the longest win where two overlap ('生于海林县': 海林县, not 于海)
        found, local_bi = self._names_at(sentence, spans, low, local_bi, extra)
        chosen = []
        for i, k, ids in sorted(found, key=lambda x: (-x[1], x[0])):
            if not any(covered[i:i + k]):
                covered[i:i + k] = [True] * k
                chosen.append((i, k, ids))
        for i, k, ids in sorted(chosen, key=lambda x: x[0]):
            # one name can belong to several entities: it is on the sheet if any of them is; a word
            # of the sheet's own names ('Mora', a surname, is also a town) is the sheet's
            name = " ".join(t for t, _ in spans[i:i + k])
            own = all(low[j] in local for j in range(i, i + k))
            cased = spans[i][0][:1].isupper() or spans[i][0][:1].isdigit() or _IS_CJK.match(spans[i][0])
            # (a name read from a lower-case word, 'the Quiet Orchards', counts for the roles, but
            # 'a Best boy' is no entity 'A Best')
            if page is not None and cased and not (ids & sheet) and not own and name.lower() not in seen:
                seen.add(name.lower())
                out.append(f"names {name!r}, not on its sheet")
            named |= (ids & sheet) - {""}
        # capitalised words and character runs the world does not know (once each a page)
        for problem in self.vocab.unknown(sentence, spans, local, local_bi, covered):
            key = problem.split(" ", 2)[2][1:-1]
            key = key if problem.startswith("unknown words") else key.lower()
            if key not in seen:
                seen.add(key)
                out.append(problem)
        if page is not None and named:
            out += self._roles(sentence, spans, low, covered, page, named, seen, local)
        return out

    def _cjk_ambiguous(self, sentence: str, spans: list, i: int, k: int) -> bool:
        """A Chinese name whose first or last character makes a word of the world's with the
        character beside it: the match may be chance."""
        a, b = spans[i][1], spans[i + k - 1][1] + 1
        before, after = sentence[a - 1:a + 1] if a else "", sentence[b - 1:b + 1] if b < len(sentence) else ""
        return (len(before) == 2 and before in self.vocab.bigrams and before[0] not in self.vocab.joints) or \
            (len(after) == 2 and after in self.vocab.bigrams and after[1] not in self.vocab.joints)

    def _roles(self, sentence: str, spans: list[tuple[str, int]], low: list[str], covered: list[bool], page: Page, named: set[str], seen: set[str],
               local: set[str]) -> list[str]:
        """A sentence that says a relation (by a word only it uses) about sheet entities must name
        one the sheet links by that relation."""
        # (a cue inside the sheet's own values is none: an occupation 'Sales executive' says no 'ceo')
        said = {self.cues[w] for w, c in zip(low, covered) if not c and w in self.cues and w not in local}
        # (words inside a quotation are the speaker's, not a statement of the page: "when we started, at least")
        flat = _norm(_QUOTED.sub(" ", sentence))
        said |= {r for c, r in self.phrase_cues if c.search(flat)}
        if not said:
            return []
        others = named - ({page.subject} if page.subject else set())
        if not others:
            return []
        ends: dict[str, set[str]] = {}
        for f in page.facts:
            if f.value_type == "entity":
                # a link a page states under another name (a news item's roles): no verdict on its ends
                t = self.view.type_of.get(f.subject)
                known = f.predicate in self.view.relations or (t is not None and f.predicate in self.view.types[t].attributes)
                r = f.predicate if known else "*"
                ends.setdefault(r, set()).update((f.subject, f.value))
        if any(e in ends.get(r, ()) for r in [*said, "*"] for e in others):
            return []
        key = f"roles:{sorted(said)}:{sorted(others)}"
        if key in seen:
            return []
        seen.add(key)
        who = ", ".join(sorted(self.view.names.get(e, e) for e in others))
        return [f"says {'/'.join(sorted(said))} of {who}, which its sheet does not hold"]

    def _categories(self, text: str, page: Page, local: set[str]) -> list[str]:
        """Another value of a category attribute the sheet gives (an occupation, a genre): the
        page contradicts its sheet. A value that is a word of a name or title on the sheet is not
        one ('Media' in a paper's title)."""
        from ..world import value_translation

        given: set[str] = set()
        attrs: set[tuple[str, str]] = set()
        for f in page.facts:
            given.update(x.lower() for x in note_values(f) if x)  # a link's own values ('in finance')
            if f.value_type == "string":
                t = self.view.type_of.get(f.subject)
                if t is None:
                    continue
                shown = value_translation(self.view.world, t, f.predicate).get(f.value, f.value)
                given.update((str(shown).lower(), f.value.lower()))
                attrs.add((t, f.predicate))
        if not attrs:
            return []
        names = [self.view.names[e].lower() for e in page.entity_ids if e in self.view.names] + [page.title.lower()]
        names += [a.lower() for e in page.entity_ids for a in self.view.aliases.get(e, ())]  # 'Republic of X'

        low = text.lower()
        out: list[str] = []
        for v, owners in self.categories.items():
            if not (owners & attrs) or v in given or v not in low or v in local or v in self.grammar:
                continue
            if any(v in g for g in given) or any(v in x for x in names):  # 'rock' in 'folk rock', 'media' in a title
                continue
            if _IS_CJK.match(v[0]) or re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", low):
                said = "/".join(sorted({a for _, a in owners}))
                out.append(f"says {v!r} ({said}), which its sheet does not give")
        return out


def _norm(text: str) -> str:
    """Words only, lower case, one space between (CJK characters spaced too): for phrase lookups."""
    return " " + " ".join(t.lower() for t in tokens(text)) + " "


def _romanised(name: str) -> set[str]:
    """A Chinese name's pinyin words as pages romanise it: 'Wang', 'Zhijia', 'zhi', 'jia'."""
    from pypinyin import lazy_pinyin

    syl = [x.lower() for x in lazy_pinyin(name)]
    # (each prefix read on its own too: pinyin reads a character by its neighbours, 嘉长生物 'jiazhang...')
    # and character by character, as the world's own romanised names are made (`world.sampling.pinyin_names`)
    chars = ["".join(lazy_pinyin(c)).lower() for c in name]
    prefixes = {"".join(lazy_pinyin(name[:k])).lower() for k in range(2, len(name) + 1)}
    prefixes |= {"".join(chars[:k]) for k in range(2, len(chars) + 1)} | set(chars)
    return set(syl) | {"".join(syl[1:])} | {"".join(syl[:k]) for k in range(2, len(syl) + 1)} | prefixes


def _meta_texts(meta) -> list:
    return [getattr(meta, f, None) for f in getattr(meta, "__slots__", ()) if isinstance(getattr(meta, f, None), (str, list, tuple))]


def _pack_texts(world) -> list[str]:
    """Every string in the world's packs (labels, phrases, descriptions, value lists, i18n)."""
    out: list[str] = []
    for et in world.types.values():
        out += list(_strings(et.model_dump(mode="json")))
    for rs in world.relations.values():
        out += list(_strings(rs.model_dump(mode="json")))
    return out

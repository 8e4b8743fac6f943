"""The surface grammar: how facts become sentences, sentences become paragraphs, and how
each site's voice and number/date conventions differ.

Everything here is data plus small pure functions. A fact is first turned into a *clause*
(one of many phrasings: the pack's own `phrases` and generic ones for its kind), clauses
are then joined with connectives into sentences, and sentences into ordered paragraphs.
Every choice is a stable hash of (page URL, fact, slot), so the same world always gives
the same bytes while two pages about similar facts rarely read alike.

The phrase banks are keyed by language (English "en" and Chinese "zh"); a new language adds a
bank with the same keys, its date and number styles, and its sentence punctuation. The writer
never spells words itself.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from zlib import crc32

from .text import MONTHS, pick

# --------------------------------------------------------------------------- phrase banks

BANKS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        # A non-date attribute: {label} is lower-case, {value} formatted, {subject} a reference.
        "attr": (
            "the {label} of {subject} is {value}",
            "{subject} has a {label} of {value}",
            "{subject} is listed with a {label} of {value}",
            "records give the {label} of {subject} as {value}",
            "{value} is the {label} given for {subject}",
            "{subject} is recorded with a {label} of {value}",
            "for {subject}, the {label} stands at {value}",
            "{subject}'s {label} is {value}",
        ),
        # A count whose label is its unit (Employees: 651 employees): the value says what is counted.
        "attr_counted": ("{subject} has {value}", "{subject} counts {value}", "{subject} is listed with {value}",
                         "records show {value} for {subject}", "{value} are recorded for {subject}"),
        # A to-one link without dates.
        "link": (
            "{subject}'s {label} is {object}",
            "{object} is listed as the {label} of {subject}",
            "the {label} of {subject} is {object}",
        ),
        # A dated link (tenure or event); {when} is a span phrase ("from 2001 to 2005").
        "dated_link": (
            "{when_cap}, {subject} was linked to {object} ({label})",
            "{object} is on record under {subject}'s {label}, {when}",
            "{subject} and {object} appear together under {label} {when}",
        ),
        "event_link": (
            "{subject}: {label}, {object}, {when}",
            "{when_cap}, {subject} gained {object} ({label})",
        ),
        # Spans: {a} start, {b} end.
        "span_closed": ("from {a} to {b}", "between {a} and {b}", "({a}–{b})", "from {a} until {b}"),
        "span_open": ("since {a}", "from {a} to the present", "from {a} until the present day"),
        "span_open_news": ("as of {a}", "from {a}", "starting {a}"),
        "span_event": ("in {a}", "({a})"),
        # Joining two clauses into one sentence (the second clause refers back to the subject).
        "join2": (
            "{A}, and {B}.",
            "{A}; {B}.",
            "{A}, while {B}.",
            "{A}, and in addition {B}.",
            "{A}; moreover, {B}.",
            "{A}; {B} as well.",
            "{A}, and {B} too.",
            "{A}, and also {B}.",
            "{A} — {B}.",
            "{A}, and beyond that {B}.",
        ),
        "join3": (
            "{A}, {B}, and {C}.",
            "{A}; {B}; and {C}.",
            "{A}; in addition, {B}, and {C}.",
            "{A}, while {B}; furthermore, {C}.",
            "{A}, {B}; and {C}.",
        ),
        # Narrative connectives for a history paragraph, by the gap to the previous event.
        "then_same_year": ("Later that year, ", "The same year, ", "In the same year, "),
        "then_gap": ("{n} years later, ", "After {n} years, ", "{n} years on, "),
        "then_far": ("In {year}, ", "By {year}, ", "Then, in {year}, ", "Later, in {year}, "),
        "first": ("In {year}, ", "The record begins in {year}: ", "Early on, in {year}, "),
        # References to the subject after its first mention.
        "ref_thing": ("it", "the {noun}", "the {noun}"),
        "ref_being": ("the {noun}",),
        # Quotes in news items: information-free voice attributed to a person of the world.
        # Quotes in news items: attributed voice, composed from an opening, a body and an attribution.
        "quote_open": ("", "", "", "Honestly, ", "For us, ", "Today ", "In the end, ", "Above all, ", "Frankly, ",
                       "Right now, ", "Look, ", "To be clear, ", "Personally, ", "If I am honest, ", "At this point, ",
                       "Between us, ", "As things stand, ", "Put simply, "),
        # a quote's core: what was said about the event ({what}: its label, {subject}: who it is about)
        "quote_body": (
            "this is an important moment for {subject}", "we have worked towards this for a long time",
            "it is good news for everyone involved", "we are looking forward to what comes next",
            "nobody expected it to happen this quickly", "it changes a great deal for {subject}",
            "I am proud of what has been achieved", "the people around {subject} deserve this",
            "this was the right decision at the right time", "there is still a lot of work ahead",
            "we listened to a lot of people before deciding", "it has been a remarkable journey so far",
            "the next months will show what this means", "we owe a great deal to those who came before",
            "it is a step we took with confidence", "the {what} was never a sure thing",
            "we talked about the {what} for months", "the {what} is what people will remember",
            "I did not think the {what} would come so soon", "the {what} settles a question we had for a while",
            "people have been asking about the {what} for a long time", "the {what} speaks for itself",
            "we knew the {what} would draw attention", "there was a lot of doubt before the {what}",
            "the {what} took more patience than anyone admits", "it is too early to say what the {what} changes",
            "the {what} was a team effort from start to finish", "I have waited a long time to talk about the {what}",
            "the {what} came after a difficult year", "none of us saw the {what} coming",
            "the {what} is a beginning rather than an end", "we made the call and we stand by it",
            "you do not get many days like this", "it was not easy, and it should not have been",
            "everybody here had a part in it", "we will take a moment and then get back to work",
            "the hard part starts now", "it is what we hoped for when we started",
            "I understand why some people are surprised", "we did not rush into anything",
            "this is about the long run", "it means more than the headlines suggest",
            "there were moments when it looked unlikely", "the support we had made the difference",
            "it is a fair result", "we could not have planned it better",
            "we will be judged on what happens next", "it is a relief more than anything",
            "I would not change a thing", "we have been careful at every step",
        ),
        "quote_what": ("news", "decision", "announcement", "move", "result", "change", "outcome", "step"),
        "quote_close": ("", "", "", "", "; that is all there is to it", ", and we mean it", ", whatever anyone says",
                        ", and that matters", "; we will see where it goes", ", at least for now", ", in my view",
                        ", and I think people know that", "; the rest is detail"),
        "quote_attr": ("said {speaker}", "{speaker} said", "{speaker} told reporters", "{speaker} said in a statement",
                       "according to {speaker}", "{speaker} added", "{speaker} commented", "{speaker} noted",
                       "{speaker} said on the day", "{speaker} told the paper", "{speaker} said afterwards",
                       "{speaker} said in an interview"),
        "spokesperson": ("a spokesperson for {subject}", "a representative of {subject}", "a source close to {subject}"),
        "background": ("Background", "Context", "About {subject}", "What we know about {subject}"),
        "history": ("History", "Background and history", "Chronology", "Development"),
        "overview": ("Overview", "Profile", "Key facts", "At a glance"),
        "related": ("Related places and organisations", "Connections", "In context", "Related entities"),
        "see_also": ("See also", "Related articles", "Related entries"),
        "timeline": ("Timeline", "Key dates", "Dates"),
        # First-person official-site voice: {subject} is "we"/"our company".
        "official_intro": ("Welcome to {subject}.", "This is the official site of {subject}.",
                           "Thank you for visiting {subject}.", "Find out who we are and what we do."),
        "official_counted": ("we have {value}", "we count {value}", "today we have {value}"),
        "official_attr": ("our {label} is {value}", "we report a {label} of {value}", "we are proud of our {label}: {value}"),
        "more_list": ("The full list of {count} is on [a separate page]({url}).",
                      "{shown} of {count} are listed here; see [the complete list]({url}).",
                      "All {count} are on [the full list]({url})."),
        # Small words the writer needs (one form each).
        "yes": ("yes",), "no": ("no",),
        "since_year": ("since {a}",), "present": ("the present",), "until": (", until {d}",),
        "tag_span": (" ({span})",), "tag_to_present": (" (to the present)",), "tag_since": (" (since {a})",),
        "tag_from": (" (from {a})",), "tag_date": (" ({d})",), "tag_since_date": (" (since {d})",), "tag_range": (" ({d} – {e})",),
        "date_attr": ("the {label} date of {subject} is {value}",),
        "bool_attr": ("{subject} — {label}: {value}",),
        "and": (" and ",), "list_sep": (", ",),
        "aka": (" (also known as {aliases})",),
        "lead": ("{name} is {desc}.",),
        "noun_tag": (" ({noun})",),
        "history_joins": (", and ", "; ", ", while ", ". ", ", before ", "; then, "),
        "official_site": ("Official website",), "profile_kind": ("{type} profile",), "updated": ("updated {date}",),
        "about_us": ("About us",), "about": ("About",),
        "more_about": ("More about {name}: [{site}]({url})",),
        "field": ("- **{label}:** {cell}",),
        "effective": (", effective {d}",),
        "dateline": ("**{site}** — ",),
        "read_more": ("Read more: [{name}]({url})",),
        "bg_head": ("**{head}.** ",),
        "by_line": ("{plural} by {label}",), "page_of": ("page {p} of {n}",), "page_tag": (" (page {p} of {n})",),
        "from": ("From",), "to": ("To",), "now": ("present",),
        "prev": ("[← Previous page]({url})",), "next": ("[Next page →]({url})",), "nav_sep": (" · ",),
        "headline_link": ("{subject} and {object}: {label}",), "headline_attr": ("{subject}: {label}",),
        "list_title": ("{subject}: {label}",),
        "part_title": ("{plural} in {group}",), "all_title": ("List of {plural}",),
        "former_title": ("Former {plural} of {group}",), "index_line": ("{plural}, A–Z",),
        "lists": ("Lists",), "list_entry": ("- [{title}]({url}) ({count} entries)",),
        "references": ("References",), "ref_entry": ("{n}. [{title}]({url}). *{site}*, {date}.",),
        "external_links": ("External links",), "profile_link": ("- [{name} at {site}]({url})",),
        "official_link": ("- [Official website]({url})",),
        "pages_nav": ("Pages: {links}",),
    },
    "zh": {
        "attr": (
            "{subject}的{label}为{value}",
            "{subject}的{label}是{value}",
            "资料显示，{subject}的{label}为{value}",
            "{value}是{subject}的{label}",
            "据记载，{subject}的{label}是{value}",
            "{subject}的{label}登记为{value}",
            "就{subject}而言，{label}为{value}",
            "{subject}的{label}记为{value}",
        ),
        "link": (
            "{subject}的{label}是{object}",
            "{object}是{subject}的{label}",
            "{subject}的{label}为{object}",
        ),
        "dated_link": (
            "{when_cap}，{subject}与{object}相关联（{label}）",
            "{subject}的{label}记录中有{object}，{when}",
            "{when_cap}，{object}列于{subject}的{label}之下",
        ),
        "event_link": (
            "{subject}：{label}，{object}，{when}",
            "{when_cap}，{subject}获得{object}（{label}）",
        ),
        "span_closed": ("{a}年至{b}年", "从{a}年到{b}年", "（{a}–{b}年）", "{a}年起至{b}年"),
        "span_open": ("自{a}年起", "{a}年至今", "从{a}年起至今"),
        "span_open_news": ("截至{a}年", "自{a}年起", "从{a}年开始"),
        "span_event": ("{a}年", "（{a}年）"),
        "join2": (
            "{A}，{B}。", "{A}；{B}。", "{A}，同时{B}。", "{A}，此外{B}。", "{A}；另外，{B}。",
            "{A}，而且{B}。", "{A}——{B}。", "{A}；与此同时，{B}。", "{A}，并且{B}。", "{A}；此外，{B}。",
        ),
        "join3": (
            "{A}，{B}，{C}。", "{A}；{B}；{C}。", "{A}；此外，{B}，{C}。", "{A}，同时{B}；另外，{C}。", "{A}，{B}；{C}。",
        ),
        "then_same_year": ("同年，", "当年晚些时候，", "同一年，"),
        "then_gap": ("{n}年后，", "过了{n}年，", "{n}年之后，"),
        "then_far": ("{year}年，", "到{year}年，", "其后在{year}年，", "后来，{year}年，"),
        "first": ("{year}年，", "记录始于{year}年：", "早在{year}年，"),
        "ref_thing": ("该{noun}", "该{noun}", "这一{noun}"),
        "ref_being": ("此人", "该{noun}"),
        "quote_open": ("", "说实话，", "对我们来说，", "今天", "最终，", "最重要的是，", "坦率地说，", "眼下，"),
        "quote_body": (
            "这对{subject}来说是一个重要时刻", "我们为此努力了很长时间", "这对所有相关的人都是好消息",
            "我们期待接下来的发展", "没有人想到会这么快", "这对{subject}意义重大", "我为取得的成绩感到自豪",
            "{subject}身边的人们值得这一切", "这是在正确时间做出的正确决定", "未来还有很多工作要做",
            "在做决定之前我们听取了很多人的意见", "到目前为止这是一段非凡的历程", "接下来的几个月将说明这意味着什么",
            "我们非常感谢前人的付出", "这是我们满怀信心迈出的一步",
        ),
        "quote_what": ("",),
        "quote_close": ("", "", "", "，事情就是这样", "，至少目前如此", "，这一点很重要", "，我们拭目以待"),
        "quote_attr": ("{speaker}说", "{speaker}表示", "{speaker}对记者说", "{speaker}在一份声明中说",
                       "{speaker}称", "{speaker}补充道", "{speaker}评论道", "{speaker}指出"),
        "spokesperson": ("{subject}的一位发言人", "{subject}的一名代表", "{subject}的一位知情人士"),
        "background": ("背景", "相关背景", "关于{subject}", "{subject}概况"),
        "history": ("历史", "背景与沿革", "大事记", "发展历程"),
        "overview": ("概况", "简介", "基本信息", "一览"),
        "related": ("相关地点与机构", "关联", "相关背景", "相关条目"),
        "see_also": ("参见", "相关文章", "相关条目"),
        "timeline": ("时间线", "重要日期", "日期"),
        "official_intro": ("欢迎访问{subject}。", "这里是{subject}的官方网站。", "感谢您访问{subject}。", "了解我们是谁、我们做什么。"),
        "official_attr": ("我们的{label}是{value}", "我们的{label}为{value}", "我们引以为豪的{label}：{value}"),
        "more_list": ("共{count}项的完整列表见[单独页面]({url})。",
                      "此处列出{shown}项，共{count}项；见[完整列表]({url})。",
                      "全部{count}项见[完整列表]({url})。"),
        "yes": ("是",), "no": ("否",),
        "since_year": ("{a}年起",), "present": ("今",), "until": ("，至{d}",),
        "tag_span": ("（{span}）",), "tag_to_present": ("（至今）",), "tag_since": ("（{a}年起）",),
        "tag_from": ("（{a}年起）",), "tag_date": ("（{d}）",), "tag_since_date": ("（{d}起）",), "tag_range": ("（{d}至{e}）",),
        "date_attr": ("{subject}的{label}为{value}",),
        "bool_attr": ("{subject}——{label}：{value}",),
        "and": ("和",), "list_sep": ("、",),
        "aka": ("（又名{aliases}）",),
        "lead": ("{name}是{desc}。",),
        "noun_tag": ("（{noun}）",),
        "history_joins": ("，", "；", "，随后", "。", "，之后", "；此后，"),
        "official_site": ("官方网站",), "profile_kind": ("{type}资料",), "updated": ("更新于{date}",),
        "about_us": ("关于我们",), "about": ("简介",),
        "more_about": ("更多关于{name}的信息：[{site}]({url})",),
        "field": ("- **{label}：**{cell}",),
        "effective": ("，自{d}起生效",),
        "dateline": ("**{site}讯** ",),
        "read_more": ("阅读更多：[{name}]({url})",),
        "bg_head": ("**{head}：**",),
        "by_line": ("按{label}列出的{plural}",), "page_of": ("第{p}页，共{n}页",), "page_tag": ("（第{p}页，共{n}页）",),
        "from": ("起",), "to": ("止",), "now": ("至今",),
        "prev": ("[← 上一页]({url})",), "next": ("[下一页 →]({url})",), "nav_sep": (" · ",),
        "headline_link": ("{subject}与{object}：{label}",), "headline_attr": ("{subject}：{label}",),
        "list_title": ("{subject}：{label}",),
        "part_title": ("{group}的{plural}",), "all_title": ("{plural}列表",),
        "former_title": ("曾属{group}的{plural}",), "index_line": ("{plural}（按名称排列）",),
        "lists": ("列表",), "list_entry": ("- [{title}]({url})（{count}项）",),
        "references": ("参考资料",), "ref_entry": ("{n}. [{title}]({url})。*{site}*，{date}。",),
        "external_links": ("外部链接",), "profile_link": ("- [{name}在{site}的资料]({url})",),
        "official_link": ("- [官方网站]({url})",),
        "pages_nav": ("页码：{links}",),
    },
}

# How sentences end and are set next to each other, per language.
STOP = {"en": ".", "zh": "。"}
SENTENCE_SEP = {"en": " ", "zh": ""}


def bank(lang: str = "en") -> dict[str, tuple[str, ...]]:
    return BANKS.get(lang, BANKS["en"])


def word(lang: str, key: str, **fields) -> str:
    """The one form of a small word or frame of the bank ('since {a}', '至今')."""
    w = bank(lang)[key][0]
    return w.format(**fields) if fields else w


# --------------------------------------------------------------------------- site styles

# A site's conventions: its date formats for prose and tables, whether it rounds big numbers in
# prose, and its voice. Picked per site by a stable hash of the site name within its kind.
DATE_STYLES = ("mdy", "dmy", "mdy_abbr", "dmy_abbr")
DATE_STYLES_BY_LANG = {"en": DATE_STYLES, "zh": ("ymd_zh", "ymd_zh_pad")}


def format_date(d: dt.date, style: str) -> str:
    """A full date in one of the prose styles ('June 30, 2025', '2025年6月30日'); 'iso' for tables only."""
    if style == "iso":
        return d.isoformat()
    if style == "ymd_zh":
        return f"{d.year}年{d.month}月{d.day}日"
    if style == "ymd_zh_pad":
        return f"{d.year}年{d.month:02d}月{d.day:02d}日"
    m = MONTHS[d.month - 1]
    if style.endswith("_abbr"):
        m = m[:3]
    return f"{m} {d.day}, {d.year}" if style.startswith("mdy") else f"{d.day} {m} {d.year}"


def format_number(value: str, value_type: str, unit: str | None = None, rounded: bool = False, lang: str = "en") -> str:
    """'12,345'; with `rounded`, values of a million or more as '1.23 million' (3 significant digits,
    within the checker's 0.6 % tolerance); in Chinese, ten thousand or more as '2.81万', '1.2亿'."""
    d = Decimal(value)
    if value_type == "float":
        d = d.normalize()
    if rounded and lang == "zh" and abs(d) >= 10_000:
        scale, w = (Decimal(100_000_000), "亿") if abs(d) >= 100_000_000 else (Decimal(10_000), "万")
        x = d / scale
        digits = 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0
        s = _trim(f"{x:.{digits}f}") + w
        return f"{s} {unit}" if unit else s
    if rounded and abs(d) >= 1_000_000:
        scale, word = (Decimal(1_000_000_000), "billion") if abs(d) >= 1_000_000_000 else (Decimal(1_000_000), "million")
        x = d / scale
        digits = 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0
        s = _trim(f"{x:.{digits}f}") + " " + word
    else:
        s = format(d, ",f")
    return f"{s} {unit}" if unit else s


def _trim(s: str) -> str:
    """'1.20' -> '1.2', '3.00' -> '3'; an integer keeps its zeros ('350')."""
    return s.rstrip("0").rstrip(".") if "." in s else s


def site_style(site: str, kind: str, lang: str = "en") -> dict:
    """Conventions of one site: date style for prose and tables, rounding, voice."""
    styles = DATE_STYLES_BY_LANG.get(lang, DATE_STYLES)
    date = styles[pick("date|" + site, len(styles))]
    table_date = "iso" if pick("tdate|" + site, 3) == 0 else date
    return {"date": date, "table_date": table_date, "round": kind in ("news", "fan") and pick("round|" + site, 3) > 0}


# --------------------------------------------------------------------------- sentence helpers

# Candidates only: 'a ' or 'A ' before a vowel or an h ('a appliance', 'a hour'). Two
# patterns that start with a literal scan a page twice as fast as one with a character class;
# `fix_articles` then drops those inside a word ('Maria eats') and checks the whole next word.
_AN_LOWER = re.compile(r"a (?=[AEIOUaeiouHh])")
_AN_UPPER = re.compile(r"A (?=[AEIOUaeiouHh])")
_AN_EXCEPT = ("uni", "eu", "one", "use", "usu", "uk", "ure")
_AN_SILENT_H = ("hour", "honest", "honour", "heir")


def fix_articles(text: str) -> str:
    """'a appliance' -> 'an appliance' (not 'an university'); links and names are left alone."""
    hits = [m.start() for m in _AN_LOWER.finditer(text)]
    if "A " in text:
        hits += [m.start() for m in _AN_UPPER.finditer(text)]
        hits.sort()
    out, last, n = [], 0, len(text)
    for i in hits:
        if i and (text[i - 1].isalnum() or text[i - 1] == "_"):  # inside a word (what regex \w is)
            continue
        k = i + 2
        while k < n and ("a" <= text[k] <= "z" or "A" <= text[k] <= "Z"):
            k += 1
        word = text[i + 2:k].lower()
        if (word[0] in "aeiou" and not word.startswith(_AN_EXCEPT)) or word.startswith(_AN_SILENT_H):
            out += (text[last:i + 1], "n")
            last = i + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def choose(options: tuple[str, ...], key: str) -> str:
    n = len(options)
    return options[crc32(key.encode()) % n] if n > 1 else options[0]  # text.pick, inlined (hot)


# Keys as running checksums: the crc32 of `key + suffix` is `crc32(suffix, crc32(key))`, so a
# writer hashes a page's URL once and each slot's suffix after it, instead of every full key.
def choose_h(options: tuple[str, ...], h: int) -> str:
    """`choose` with the key given as its checksum `h` (the same option as `choose(options, key)`)."""
    return options[h % len(options)]


# Function words that open a clause; placed mid-sentence they go to lower case.
_LOWER_FIRST = frozenset("It Its The On In For Records As From Between Since Starting After Later Then Early By A An "
                         "Two Three Four Five Six Seven Eight Nine Ten Eleven Twelve".split())
_FIRST_WORD = re.compile(r"[^ ,:]*(?=[ ,:])")  # a clause's first word, followed by a space, comma or colon


def lower_start(clause: str) -> str:
    """A clause placed mid-sentence: a leading function word in lower case (names stay as they are)."""
    m = _FIRST_WORD.match(clause)
    if m is not None and m.group() in _LOWER_FIRST:
        return m.group().lower() + clause[m.end():]
    return clause


def join_clauses(clauses: list[str], key: str, lang: str = "en") -> str:
    """One to three clauses as one or two sentences with connectives."""
    return join_clauses_h(clauses, crc32(key.encode()), lang)


def join_clauses_h(clauses: list[str], h: int, lang: str = "en") -> str:
    """`join_clauses` with the key given as its checksum (`choose_h`)."""
    if lang == "en":
        clauses = clauses[:1] + [lower_start(c) for c in clauses[1:]]
    n = len(clauses)
    if n == 0:
        return ""
    if n == 1:
        return cap(clauses[0]) + STOP.get(lang, ".")
    if n == 2:
        tpl = choose_h(BANKS.get(lang, BANKS["en"])["join2"], h)
        return cap(tpl.format(A=clauses[0], B=clauses[1], B_cap=cap(clauses[1]) if "{B_cap}" in tpl else ""))
    if n > 3:  # longer runs: a sentence of three, then the rest
        return (join_clauses_h(clauses[:3], h, lang) + SENTENCE_SEP.get(lang, " ")
                + join_clauses_h(clauses[3:], crc32(b"+", h), lang))
    tpl = choose_h(BANKS.get(lang, BANKS["en"])["join3"], h)
    return cap(tpl.format(A=clauses[0], B=clauses[1], C=clauses[2], B_cap=cap(clauses[1]) if "{B_cap}" in tpl else ""))


def group_clauses(clauses: list[str], key: str, lang: str = "en") -> list[str]:
    """Clauses in groups of one to three (sizes chosen per position), each group one sentence."""
    out, i = [], 0
    while i < len(clauses):
        n = 1 + pick(f"{key}|g{i}", 3)
        out.append(join_clauses(clauses[i:i + n], f"{key}|j{i}", lang))
        i += n
    return out


def number_words(n: int, lang: str = "en") -> str:
    words = (("零", "一", "两", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二") if lang == "zh" else
             ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"))
    return words[n] if 0 <= n < len(words) else ""


_SKEL_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SKEL_DATE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|(?:" + "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS)
                        + r")\.? \d{1,2},? \d{4}|\d{1,2} (?:" + "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS)
                        + r")\.? \d{4})\b")
_SKEL_NUM = re.compile(r"\d[\d,.]*")
_SENT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]”))\s+(?=[A-Z“\[*])|(?<=[。！？])(?!”)|(?<=[。！？]”)")


_NUMBERED = re.compile(r"\d+\. ")


def prose_sentences(markdown: str) -> list[str]:
    """The prose sentences of a page: paragraphs only (no headings, table rows, list items, numbered
    lists, bylines)."""
    out = []
    for para in markdown.split("\n\n"):
        para = para.strip()
        if (not para or para[0] in "#|-*[" or para.startswith(("---", "Read more", "More about", "阅读更多", "更多关于"))
                or _NUMBERED.match(para)):  # a numbered list (references)
            continue
        out.extend(s for s in _SENT.split(para.replace("\n", " ")) if s)
    return out


_SKEL_CAPS = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|van|von|the|and|&)?\s*[A-Z][\w'’.-]*)*")


def skeleton(sentence: str, names: re.Pattern | None) -> str:
    """A sentence with links, names, dates and numbers replaced by placeholders. Strict: any run
    of capitalised words counts as a name (so sentence-initial words fold too), which can only
    undercount distinct skeletons."""
    s = _SKEL_LINK.sub("<e>", sentence)
    if names is not None:
        s = names.sub("<e>", s)
    s = _SKEL_DATE.sub("<d>", s)
    s = _SKEL_CAPS.sub("<e>", s)
    s = _SKEL_DATE.sub("<d>", s)
    return _SKEL_NUM.sub("<n>", s)


def quote(b: dict, key: str, subject: str, speaker: str, lang: str = "en", what: str = "") -> str:
    """A news quote: an opening, a core about the event (`what`: its label, "acquisition"), a
    closing, attributed to `speaker`."""
    bodies = b["quote_body"] if what else tuple(x for x in b["quote_body"] if "{what}" not in x)
    body = (choose(b["quote_open"], key + "|o") + choose(bodies, key + "|b").format(subject=subject, what=what)
            + choose(b["quote_close"], key + "|c"))
    attr = choose(b["quote_attr"], key + "|a").format(speaker=speaker)
    if lang == "zh":
        return f"{attr}：“{body}。”"
    return f"“{cap(body)},” {attr}."

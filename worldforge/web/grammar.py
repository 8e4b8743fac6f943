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

_PREPOSITIONS = frozenset(("in", "to", "of", "by", "for", "at", "from", "on", "with", "into", "under", "over"))


def phrase_label(label: str) -> str | None:
    """How an English link label that is not a noun reads: 'verb' for a participle and its
    preposition ("Based in", "Acquired by", "Recommended by"), 'role' for a noun and its
    preposition ("Sequel to", "Capital of", "Hub for"); None for a noun ("Headquarters"). Pages,
    questions and notes never use such a label as a noun ("the based in of X")."""
    words = label.lower().split()
    if len(words) < 2 or words[-1] not in _PREPOSITIONS:
        return None
    return "verb" if words[0].endswith("ed") else "role"


BANKS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        # A non-date attribute: {label} is lower-case, {value} formatted, {subject} a reference.
        "attr": (
            "the {label} of {subject} is {value}",
            "{subject} has a {label} of {value}",
            "{subject}'s {label} is {value}",
            "{value} is the {label} of {subject}",
        ),
        # A plural label ("colours", "founders"): agreement, and no "a colours of".
        "attr_plural": ("the {label} of {subject} are {value}", "{subject}'s {label} are {value}"),
        # A count whose label is its unit (Employees: 651 employees): the value says what is counted.
        "attr_counted": ("{subject} has {value}", "{subject} counts {value}", "{subject} has some {value}",
                         "{subject} has a total of {value}"),
        # A to-one link without dates.
        "link": (
            "{subject}'s {label} is {object}",
            "the {label} of {subject} is {object}",
            "{object} is {subject}'s {label}",
        ),
        # A dated link (tenure or event); {when} is a span phrase ("from 2001 to 2005").
        "dated_link": (
            "{subject}'s {label}: {object} {when}",
            "{label} of {subject}: {object} {when}",
        ),
        "event_link": (
            "{subject}'s {label}: {object} {when}",
            "{label} of {subject}: {object} {when}",
        ),
        # A link whose label is a verb phrase ("Based in", "Acquired by") or a noun with its
        # preposition ("Sequel to", "Capital of", "Chief executive of"): never "X's based in is Y".
        "link_verb": ("{subject} is {label} {object}",),
        "link_role": ("{subject} is the {label} {object}",),
        "dated_link_verb": ("{subject} was {label} {object} {when}",),
        "dated_link_verb_open": ("{subject} has been {label} {object} {when}",),
        "dated_link_role": ("{subject} was {label} {object} {when}",),
        "dated_link_role_open": ("{subject} has been {label} {object} {when}",),
        # Spans: {a} start, {b} end.
        "span_closed": ("from {a} to {b}", "({a}–{b})", "from {a} until {b}", "in the years {a}–{b}"),
        "span_open": ("since {a}", "from {a} to the present", "from {a} until the present day"),
        "span_open_news": ("as of {a}", "from {a}", "starting {a}"),
        "span_event": ("in {a}", "({a})"),
        # Joining two clauses into one sentence (the second clause refers back to the subject).
        "join2": (
            "{A}, and {B}.",
            "{A}; {B}.",
            "{A}, while {B}.",
            "{A} — {B}.",
            "{A}. {B_cap}.",
            "{A}, and {B}.",
        ),
        "join3": (
            "{A}, {B}, and {C}.",
            "{A}; {B}; and {C}.",
            "{A}. {B_cap}, and {C}.",
            "{A}, while {B}. {C_cap}.",
            "{A}, {B}; and {C}.",
        ),
        # References to the subject after its first mention.
        "ref_thing": ("it", "the {noun}", "the {noun}"),
        "ref_being": ("the {noun}",),
        # Quotes in news items: information-free voice attributed to a person of the world.
        # Quotes in news items: attributed voice, composed from an opening, a body and an attribution.
        "quote_open": ("", "", "", "", "", "", "", "", "", "", "Honestly, ", "For us, ", "Today ", "In the end, ", "Above all, ", "Frankly, ",
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
            "the {what} has been in the works since last year", "a lot of people put their trust in us, and the {what} repays it",
            "we wanted the {what} done properly rather than quickly", "the {what} is good for {subject} in the long run",
            "I spoke to everyone involved before the {what}", "some will say the {what} came late, and they may be right",
            "the {what} was the easy part", "we have had the {what} in mind for a while", "the {what} surprised even some of us",
            "this is not the end of the story", "we are not getting carried away", "the next step is the hard one",
            "there is no secret to it", "the timing felt right", "we owe this to the people who stuck with us",
            "it will take time to settle in", "I am grateful to everyone who made it possible", "it is a good day for {subject}",
            "{subject} is in a better place than a year ago", "we knew what we wanted and we went for it",
            "there were other options, but this was the best one", "I hope people give it a chance",
            "it is the kind of thing you plan for years", "we did our homework", "nobody here takes it for granted",
            "it is what {subject} needed", "the reaction so far has been positive", "we will not rush the next part",
            "I am looking forward to getting started", "there is a lot to build on",
            "we have been talking about this since the spring", "it was a question of when, not if",
            "we listened, and this is the answer", "I think the {what} makes sense for everyone",
            "the {what} was discussed at length", "we expected questions about the {what}",
            "people close to {subject} saw this coming", "the details will follow in the coming weeks",
            "we are proud of the people who got us here", "this gives {subject} room to grow",
            "it is a chance we could not pass up", "I would rather let the results speak",
            "it has been a busy few months", "the {what} had the support of the whole board",
            "we took advice from people we trust", "the {what} is a vote of confidence",
            "the conversations were long but friendly", "no one should read too much into it",
            "the {what} fits the plan we set out", "we want to do right by {subject}",
            "there will be more news soon", "I think we got the balance right",
            "it is a fresh start in many ways", "the {what} has been well received",
            "this is about people as much as anything", "I would like to thank everyone at {subject}",
            "we are ready for what comes next", "the {what} was the obvious choice in the end",
            "it shows what {subject} is capable of", "we will keep our heads down and work",
        ),
        "quote_what": ("news", "decision", "announcement", "move", "result", "change", "outcome", "step"),
        "quote_close": ("", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "; that is all there is to it", ", and we mean it", ", whatever anyone says",
                        ", and that matters", "; we will see where it goes", ", at least for now", ", in my view",
                        ", and I think people know that", "; the rest is detail"),
        "quote_attr": ("said {speaker}", "{speaker} said", "{speaker} told reporters", "{speaker} said in a statement",
                       "according to {speaker}", "{speaker} added", "{speaker} commented", "{speaker} noted",
                       "{speaker} said on the day", "{speaker} told the paper", "{speaker} said afterwards",
                       "{speaker} said in an interview"),
        # An attribution before the quote ("X told reporters: “…”").
        "quote_lead": ("{speaker} said", "{speaker} told reporters", "{speaker} said in a statement", "{speaker} put it simply",
                       "{speaker} was blunt", "{speaker} told the paper", "{speaker} said on the day", "{speaker} added",
                       "{speaker} said later", "{speaker} was quick to add", "in an interview {speaker} said",
                       "{speaker} summed it up", "{speaker} said in a short statement",
                       "{speaker} wrote in a statement", "{speaker} said at a press briefing", "as {speaker} put it"),
        "spokesperson": ("a spokesperson for {subject}", "a representative of {subject}", "a source close to {subject}"),
        "background": ("Background", "Context", "About {subject}", "What we know about {subject}"),
        "history": ("History", "Background and history", "Chronology", "Development"),
        "overview": ("Overview", "Profile", "Key facts", "At a glance"),
        "see_also": ("See also", "Related articles", "Related entries"),
        "timeline": ("Timeline", "Key dates", "Dates"),
        # First-person official-site voice: {subject} is "we"/"our company".
        "official_intro": ("Welcome to {subject}.", "This is the official site of {subject}.",
                           "Thank you for visiting {subject}.", "Find out who we are and what we do.",
                           "Welcome to the home of {subject} on the web.", "You have reached the official website of {subject}.",
                           "Good to have you here.", "Here is everything you need to know about {subject}.",
                           "This site is run by {subject}.", "Learn more about {subject} below."),
        "official_counted": ("we have {value}", "we count {value}", "today we have {value}"),
        "official_attr": ("our {label} is {value}", "we report a {label} of {value}", "we are proud of our {label}: {value}"),
        # An article's list cut short ({what}: the list's heading in lower case, "players").
        "more_list": ("For all {count} {what}, see [the complete list]({url}).", "All {count} {what} are on [the complete list]({url}).",
                      "Only {shown} of the {count} {what} appear here (see [all {count}]({url})).",
                      "This page shows {shown} of {count} {what}; [a separate list]({url}) has the rest.",
                      "A longer list of {count} {what} is kept on [another page]({url}).",
                      "The full list of {count} {what} is on [a separate page]({url}).",
                      "{shown} of {count} {what} are listed here (the rest are on [the complete list]({url})).",
                      "There are {count} {what} in all; [the complete list]({url}) has every one."),
        # Small words the writer needs (one form each).
        "yes": ("yes",), "no": ("no",),
        "since_year": ("since {a}",), "present": ("the present",), "until": (", until {d}",),
        "tag_span": (" ({span})",), "tag_to_present": (" (to the present)",),
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
        "headline_figures": ("{subject} in figures, {year}", "{subject}: the {year} figures", "{year} figures for {subject}",
                             "{subject} by the numbers ({year})"),
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
            "{value}是{subject}的{label}",
            "{subject}的{label}登记为{value}",
            "{subject}{label}为{value}",
            "{subject}的{label}一栏写的是{value}",
        ),
        "link": (
            "{subject}的{label}是{object}",
            "{object}是{subject}的{label}",
            "{subject}的{label}为{object}",
        ),
        "dated_link": (
            "{subject}的{label}为{object}",
            "{subject}的{label}包括{object}",
            "{object}曾列入{subject}的{label}",
        ),
        "event_link": (
            "{subject}的{label}为{object}",
            "{subject}的{label}包括{object}",
        ),
        "span_closed": ("{a}年至{b}年", "从{a}年到{b}年", "（{a}–{b}年）", "{a}年起至{b}年"),
        "span_open": ("自{a}年起", "{a}年至今", "从{a}年起至今"),
        "span_open_news": ("截至{a}年", "自{a}年起", "从{a}年开始"),
        "span_event": ("{a}年", "（{a}年）"),
        "join2": (
            "{A}，{B}。", "{A}；{B}。", "{A}，同时{B}。", "{A}。{B}。", "{A}，{B}。",
            "{A}，而且{B}。", "{A}——{B}。", "{A}；{B}。", "{A}，并且{B}。", "{A}。{B}。",
        ),
        "join3": (
            "{A}，{B}，{C}。", "{A}；{B}；{C}。", "{A}。{B}，{C}。", "{A}，同时{B}。{C}。", "{A}，{B}；{C}。",
        ),
        "ref_thing": ("该{noun}", "该{noun}", "这一{noun}"),
        "ref_being": ("此人", "该{noun}"),
        "quote_open": ("", "", "", "", "", "", "说实话，", "对我们来说，", "今天", "最终，", "最重要的是，", "坦率地说，", "眼下，"),
        "quote_body": (
            "这对{subject}来说是一个重要时刻", "我们为此努力了很长时间", "这对所有相关的人都是好消息",
            "我们期待接下来的发展", "没有人想到会这么快", "这对{subject}意义重大", "我为取得的成绩感到自豪",
            "{subject}身边的人们值得这一切", "这是在正确时间做出的正确决定", "未来还有很多工作要做",
            "在做决定之前我们听取了很多人的意见", "到目前为止这是一段非凡的历程", "接下来的几个月将说明这意味着什么",
            "我们非常感谢前人的付出", "这是我们满怀信心迈出的一步",
        ),
        "quote_what": ("",),
        "quote_close": ("", "", "", "", "", "", "，事情就是这样", "，至少目前如此", "，这一点很重要", "，我们拭目以待"),
        "quote_attr": ("{speaker}说", "{speaker}表示", "{speaker}对记者说", "{speaker}在一份声明中说",
                       "{speaker}称", "{speaker}补充道", "{speaker}评论道", "{speaker}指出"),
        "spokesperson": ("{subject}的一位发言人", "{subject}的一名代表", "{subject}的一位知情人士"),
        "background": ("背景", "相关背景", "关于{subject}", "{subject}概况"),
        "history": ("历史", "背景与沿革", "大事记", "发展历程"),
        "overview": ("概况", "简介", "基本信息", "一览"),
        "see_also": ("参见", "相关文章", "相关条目"),
        "timeline": ("时间线", "重要日期", "日期"),
        "official_intro": ("欢迎访问{subject}。", "这里是{subject}的官方网站。", "感谢您访问{subject}。", "了解我们是谁、我们做什么。",
                           "欢迎来到{subject}官网。", "您正在浏览{subject}的官方网站。", "这里有关于{subject}的一切。", "本站由{subject}运营。"),
        "official_attr": ("我们的{label}是{value}", "我们的{label}为{value}", "我们引以为豪的{label}：{value}"),
        "more_list": ("共{count}项的完整列表见[单独页面]({url})。", "此处列出其中{shown}项（全部{count}项见[完整列表]({url})）。",
                      "全部{count}项见[完整列表]({url})。", "{what}共{count}项，其余见[完整列表]({url})。",
                      "本页只列出{count}项{what}中的{shown}项（其余见[完整列表]({url})）。", "全部{count}项{what}收录于[单独页面]({url})。",
                      "{what}较多（共{count}项），完整名单见[完整列表]({url})。"),
        "yes": ("是",), "no": ("否",),
        "since_year": ("{a}年起",), "present": ("今",), "until": ("，至{d}",),
        "tag_span": ("（{span}）",), "tag_to_present": ("（至今）",),
        "tag_from": ("（{a}年起）",), "tag_date": ("（{d}）",), "tag_since_date": ("（{d}起）",), "tag_range": ("（{d}至{e}）",),
        "date_attr": ("{subject}的{label}为{value}",),
        "bool_attr": ("{subject}——{label}：{value}",),
        "and": ("和",), "list_sep": ("、",),
        "aka": ("（又名{aliases}）",),
        "lead": ("{name}是{desc}。",),
        "noun_tag": ("（{noun}）",),
        "history_joins": ("，", "；", "。", "。", "；", "。"),
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
        "headline_figures": ("{subject}{year}年数据", "{year}年{subject}概况", "{subject}：{year}年数字"),
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
    # Papers round big numbers ('1.94 million'); a profile states its figures exactly, as it may be
    # the only page that gives one (an article leaves some to it).
    return {"date": date, "table_date": table_date, "round": kind == "news" and pick("round|" + site, 3) > 0}


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
                         "Subsequently Afterwards Aged At That Late Soon "
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
    return cap(tpl.format(A=clauses[0], B=clauses[1], C=clauses[2], B_cap=cap(clauses[1]) if "{B_cap}" in tpl else "",
                          C_cap=cap(clauses[2]) if "{C_cap}" in tpl else ""))


def group_clauses(clauses: list[str], key: str, lang: str = "en") -> list[str]:
    """Clauses in groups of one to three (sizes chosen per position), each group one sentence."""
    out, i = [], 0
    while i < len(clauses):
        n = 1 + pick(f"{key}|g{i}", 3)
        out.append(join_clauses(clauses[i:i + n], f"{key}|j{i}", lang))
        i += n
    return out


_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ZH_DIGITS = "零一二三四五六七八九"


def number_words(n: int, lang: str = "en") -> str:
    """A number below 100 in words ('twenty-six', '二十六'; a count of two is '两'), else ''."""
    if not 0 <= n < 100:
        return ""
    if lang == "zh":
        if n == 2:
            return "两"
        if n < 10:
            return _ZH_DIGITS[n]
        tens, ones = divmod(n, 10)
        return ("" if tens == 1 else _ZH_DIGITS[tens]) + "十" + (_ZH_DIGITS[ones] if ones else "")
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + ("-" + _ONES[ones] if ones else "")


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
        if (not para or para[0] in "#|-*[" or para.startswith(("---", "Read more", "More about", "阅读更多", "更多关于", "Pages: ", "页码："))
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
            + (choose(b["quote_close"], key + "|c") if pick(key + "|cl", 2) == 0 else ""))
    if lang == "zh":
        return f"{choose(b['quote_attr'], key + '|a').format(speaker=speaker)}：“{body}。”"
    if pick(key + "|form", 3) == 0:  # “…,” said X.
        return f"“{cap(body)},” {choose(b['quote_attr'], key + '|a').format(speaker=speaker)}."
    return f"{cap(choose(b['quote_lead'], key + '|a').format(speaker=speaker))}: “{cap(body)}.”"  # X told reporters: “…”

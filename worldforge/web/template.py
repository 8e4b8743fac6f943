"""The template page writer: deterministic Markdown from a page's fact sheet.

Several phrasings per fact kind (from the packs' `phrases`, or generic ones), three date
styles and several layouts, each chosen by a stable hash of the page URL, so pages do
not all read alike while the same world always gives the same bytes.
"""

from __future__ import annotations

import datetime as dt

from .pages import Page, PredicateMeta, WorldView, humanise
from .text import Fact, format_date, format_number, format_span, pick

_ATTR_PHRASES = (
    "The {label} of {subject} is {value}.",
    "{subject} has a {label} of {value}.",
    "{subject}'s {label}: {value}.",
)
_REL_PHRASES = (
    "{subject} – {label}: {object}.",
    "{label} of {subject}: {object}.",
)


class TemplateWriter:
    """Writes every page kind from a `WorldView`; no model, no randomness beyond the URL hash."""

    name = "template"

    def __init__(self, view: WorldView):
        self.view = view

    def write(self, page: Page) -> str:
        return getattr(self, "_" + page.kind)(page)

    # ------------------------------------------------------------------ values

    def _value(self, t: str, f: Fact, style: int, link: bool = True) -> str:
        vt = f.value_type
        if vt == "date":
            return format_date(dt.date.fromisoformat(f.value), style)
        if vt in ("int", "float"):
            return format_number(f.value, vt, self.view.meta[(t, f.predicate)].unit)
        if vt == "entity":
            return self._link(f.value) if link else self.view.names[f.value]
        if vt == "bool":
            return "yes" if f.value == "true" else "no"
        return f.value

    def _about(self, page: Page) -> tuple[str, str, int, str]:
        """The page's entity, its type, the page's date style and the entity's name."""
        eid = page.subject
        return eid, self.view.type_of[eid], pick(page.url, 3), self.view.names[eid]

    def _span(self, t: str, f: Fact) -> str:
        """When a link held: a year for one-off events, a range or 'since' for tenures."""
        m = self.view.meta[(self.view.relations[f.predicate].source, f.predicate)]
        return str(f.valid_from.year) if m.event else format_span(f.valid_from, f.valid_to)

    def _link(self, eid: str) -> str:
        return f"[{self.view.names[eid]}]({self.view.article_url[eid]})"

    def _linked(self, t: str, eid: str, f: Fact) -> str:
        """A link to `eid`, with when the link `f` held if it is dated."""
        return self._link(eid) + (f" ({self._span(t, f)})" if f.valid_from else "")

    def _sentence(self, t: str, f: Fact, style: int, key: str, subject: str | None = None, at_start: bool = False) -> str:
        """One phrasing of a fact. `at_start`: written when a tenure begins (news), so no end."""
        m: PredicateMeta = self.view.meta[(t, f.predicate)]
        subject = subject or self.view.names[f.subject]
        if m.relation:
            opts = m.phrases or _REL_PHRASES
            if at_start:
                opts = tuple(p for p in opts if "{end}" not in p) or _REL_PHRASES
                f = f._replace(valid_to=None)
            start = format_date(f.valid_from, style) if f.valid_from else ""
            end = format_date(f.valid_to, style) if f.valid_to else "the present"
            s = opts[pick(key, len(opts))].format(subject=subject, object=self.view.names[f.value], label=m.label,
                                                 start=start, end=end)
            if f.valid_from and "{start}" not in opts[pick(key, len(opts))]:
                s = s.rstrip(".") + f" ({self._span(t, f)})."
            return s
        opts = m.phrases or _ATTR_PHRASES
        return opts[pick(key, len(opts))].format(subject=subject, value=self._value(t, f, style, link=False),
                                                label=m.label.lower())

    # ------------------------------------------------------------------ kinds

    def _article(self, page: Page) -> str:
        v = self.view
        eid, t, style, name = self._about(page)
        et = v.world.types[t]
        attrs = [f for f in page.facts if f.subject == eid and not v.meta[(t, f.predicate)].relation]
        outs = [f for f in page.facts if f.subject == eid and v.meta[(t, f.predicate)].relation]
        ins = [f for f in page.facts if f.subject != eid]
        lines = [f"# {page.title}", ""]
        desc = (et.description or f"A {t.replace('_', ' ')}.").rstrip(".")
        lead = f"**{name}**"
        if v.aliases.get(eid):
            lead += " (also known as " + ", ".join(f"*{a}*" for a in v.aliases[eid]) + ")"
        lead += " is " + desc[0].lower() + desc[1:] + "."
        featured = [f for f in attrs if f.predicate != "name"][:2] + [f for f in outs if v.meta[(t, f.predicate)].to_one][:1]
        lead += "".join(" " + self._sentence(t, f, style, page.url + f.fact_id, name) for f in featured)
        lines += [lead, ""]
        # Infobox: attributes and to-one links.
        lines += [f"| {humanise(t)} | |", "|---|---|"]
        for f in attrs:
            if f.predicate != "name":  # the title states it
                lines.append(f"| {v.meta[(t, f.predicate)].label} | {self._value(t, f, style)} |")
        for f in outs:
            m = v.meta[(t, f.predicate)]
            if m.to_one:
                cell = self._value(t, f, style)
                if f.valid_from:
                    cell += f" (since {format_date(f.valid_from, style)})"
                lines.append(f"| {m.label} | {cell} |")
        lines.append("")
        # A section per to-many relation, then per incoming relation.
        for pred, fs in _by_predicate(f for f in outs if not v.meta[(t, f.predicate)].to_one):
            m = v.meta[(t, pred)]
            lines += [f"## {m.label}", ""]
            lines += [f"- {self._linked(t, f.value, f)}" for f in fs]
            lines.append("")
        more = page.layout.get("more", {})
        for pred, fs in _by_predicate(ins):
            src_t = v.relations[pred].source
            m = v.meta[(src_t, pred)]
            lines += [f"## {m.inverse_label}", ""]
            if pred in more:
                total, url = more[pred]
                lines += [f"{len(fs)} of {total:,} shown" + (f"; see [the full list]({url})." if url else "."), ""]
            if len(fs) > 3 and pick(page.url + pred, 2):
                lines.append(", ".join(self._linked(t, f.subject, f) for f in fs) + ".")
            else:
                lines += [f"- {self._linked(t, f.subject, f)}" for f in fs]
            lines.append("")
        # Timeline of dated facts about the entity itself.
        dated = sorted((f for f in attrs + outs if f.value_type == "date" or f.valid_from),
                       key=lambda f: (f.valid_from or dt.date.fromisoformat(f.value), f.fact_id))
        if dated:
            lines += ["## Timeline", ""]
            for f in dated:
                when = f.valid_from or dt.date.fromisoformat(f.value)
                lines.append(f"- **{format_date(when, style)}**: {self._sentence(t, f, style, page.url + '/tl/' + f.fact_id, name)}")
            lines.append("")
        return "\n".join(lines)

    def _profile(self, page: Page) -> str:
        v = self.view
        eid, t, style, name = self._about(page)
        layout = pick(page.url + "/layout", 2)
        kind = "Official website" if page.site == name else f"{humanise(t)} profile"
        lines = [f"# {name}", "", f"*{page.site}* · {kind}", ""]
        body = [f for f in page.facts if f.predicate != "name"]
        if layout == 0:
            lines += ["## Key facts", ""]
            for f in body:
                m = v.meta[(t, f.predicate)]
                cell = self._value(t, f, style)
                if f.valid_from:
                    cell += f" (since {format_date(f.valid_from, style)})"
                lines.append(f"- **{m.label}:** {cell}")
            lines.append("")
        else:
            lines += ["## About", ""]
            lines.append(" ".join(self._sentence(t, f, style, page.url + f.fact_id, name) for f in body) or f"{name}.")
            lines.append("")
        lines += ["---", f"More about {name}: [{v.sites.encyclopedia.name}]({v.article_url[eid]})", ""]
        return "\n".join(lines)

    def _news(self, page: Page) -> str:
        v = self.view
        eid, t, style, name = self._about(page)
        event = page.facts[0]
        m = v.meta[(t, event.predicate)]
        lines = [f"# {page.title}", "", f"*{page.site}* · {format_date(page.date, style)}", ""]
        when = event.valid_from or dt.date.fromisoformat(event.value)
        if m.relation:
            body = self._sentence(t, event, style, page.url + "/body", name, at_start=True)
            if format_date(when, style) not in body:
                body = body.rstrip(".") + f", effective {format_date(when, style)}."
        else:
            body = self._sentence(t, event, style, page.url + "/body", name)
        lines += [body, ""]
        ctx = [self._sentence(t, f, style, page.url + "/ctx" + f.fact_id, name) for f in page.facts[1:]]
        if ctx:
            lines += ["Background: " + " ".join(ctx), ""]
        lines += [f"Read more: [{name}]({v.article_url[eid]})", ""]
        return "\n".join(lines)

    def _directory(self, page: Page) -> str:
        v = self.view
        lay = page.layout
        t = lay["type"]
        style = pick(page.url, 3)
        cols = lay["columns"]
        rel = v.meta[(t, lay["by"])]
        dated = rel.relation and rel.temporal
        lines = [f"# {page.title}", ""]
        lines.append(f"*{page.site}* · {humanise(v.plural(t))} by {rel.label.lower()}" +
                     (f" · page {lay['page']} of {lay['pages']}" if lay["pages"] > 1 else ""))
        lines.append("")
        head = [humanise(t)] + (["From", "To"] if dated else []) + [v.meta[(t, c)].label for c in cols]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for eid, f, cfacts in lay["rows"]:
            by_pred = {c.predicate: c for c in cfacts}
            cells = [self._link(eid)]
            if dated:
                cells += [format_date(f.valid_from, style) if f.valid_from else "", format_date(f.valid_to, style) if f.valid_to else "present"]
            cells += [self._value(t, by_pred[c], style) if c in by_pred else "–" for c in cols]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        nav = []
        if lay["prev"]:
            nav.append(f"[← Previous page]({lay['prev']})")
        if lay["next"]:
            nav.append(f"[Next page →]({lay['next']})")
        if nav:
            lines += [" · ".join(nav), ""]
        return "\n".join(lines)


def _by_predicate(facts) -> list[tuple[str, list[Fact]]]:
    out: dict[str, list[Fact]] = {}
    for f in facts:
        out.setdefault(f.predicate, []).append(f)
    return list(out.items())

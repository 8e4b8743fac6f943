"""A page's Markdown as HTML for the view.

Raw HTML in a page is shown as text (a page written by a model can hold anything), links to
pages of the simulated web stay inside the view, and the text is cut into *blocks*: each
sentence of a paragraph or list item, each table cell, each heading. With provenance on, a
block that states facts of the page is marked with their numbers (`data-f`) and a tooltip.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[*A-Z0-9])|(?<=[。！？；])")


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(["table", "strikethrough"])


class Block:
    """A block's text as it reads (no Markdown), for provenance."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _plain(children) -> str:
    return "".join(c.content for c in children if c.type in ("text", "code_inline")).strip()


def _split_sentences(children) -> list[list]:
    """The inline tokens of a paragraph in sentence groups (never inside a link or emphasis)."""
    from markdown_it.token import Token

    groups: list[list] = [[]]
    depth = 0
    for c in children:
        if c.type == "text" and depth == 0:
            parts = _SENTENCE_END.split(c.content)
            for i, part in enumerate(parts):
                if i:
                    groups.append([])
                if part:
                    t = Token("text", "", 0)
                    t.content = part if i == len(parts) - 1 else part + " "
                    groups[-1].append(t)
            continue
        depth += c.nesting
        groups[-1].append(c)
    return [g for g in groups if g]


def render(markdown: str, link: Callable[[str], str], mark: Callable[[str], str] | None = None) -> tuple[str, int]:
    """(HTML, blocks) of a page's Markdown. `link(url)` gives a link's address in the view;
    `mark(text)` the attributes of a block with that text (provenance), or "" for none."""
    md = _md()
    tokens = md.parse(markdown or "")
    options, env = md.options, {}
    for t in tokens:
        for c in t.children or ():
            if c.type == "link_open":
                href = c.attrs.get("href", "")
                if isinstance(href, str) and href.startswith(("http://", "https://")):
                    c.attrs["href"] = link(href)
                    c.attrs["data-url"] = href
    out: list[str] = []
    blocks = 0

    def block(children) -> str:
        nonlocal blocks
        blocks += 1
        inner = md.renderer.renderInline(children, options, env)
        attrs = mark(_plain(children)) if mark is not None else ""
        return f'<span class="{"b f" if attrs else "b"}"{attrs}>{inner}</span>'

    for i, t in enumerate(tokens):
        if t.type != "inline":
            out.append(md.renderer.renderToken(tokens, i, options, env))
            continue
        parent = tokens[i - 1].type if i else ""
        if parent == "paragraph_open":
            out.append("".join(block(g) for g in _split_sentences(t.children or [])))
        elif parent in ("th_open", "td_open", "heading_open"):
            out.append(block(t.children or []) if t.children else "")
        else:
            out.append(md.renderer.renderInline(t.children or [], options, env))
    return "".join(out), blocks


def escape(s) -> str:
    return html.escape("" if s is None else str(s), quote=True)

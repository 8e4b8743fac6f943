"""The question check: what no question (or header) the tasks stage writes may hold.

Every question is composed from the packs' labels and phrases, so a new pack can produce what
no shipped one does: a slot left unfilled, a verb-phrase label used as a noun ("the based in
of the label"), a gloss that names the row's type instead of the value ("(the tenure's name)"),
a word said twice in a row, a Latin-script unit or a garbled particle (于在) in Chinese. The
stage drops such a task and counts it under `garbled-question` (its report's `dropped`), so
a pack that triggers it shows up in the report and in the tests rather than in the data.
"""

from __future__ import annotations

import re

from ..language import get as get_language
from ..plumbing import URL_PATTERN
from ..web import UNFILLED_SLOT

_URL = re.compile(URL_PATTERN)
_GLOSS = re.compile(r"([\w-]+) \(the ([\w -]+)'s name\)")  # 'album (the album's name)': the gloss names the column's own noun


class _OtherTypeGloss:
    """'person (the tenure's name)': a name column glossed after another type than its own."""

    @staticmethod
    def finditer(text: str):
        return (m for m in _GLOSS.finditer(text) if m.group(2).split()[-1].lower() != m.group(1).lower())


def question_problems(query: str, header: list[str], language: str) -> list[str]:
    """Every way `query` (and its table's `header`) reads wrong; [] when it reads right."""
    text = _URL.sub(" ", query + "\n" + "\n".join(header))
    checks = {"unfilled slot": UNFILLED_SLOT, **get_language(language).checks.question_slips, "type gloss": _OtherTypeGloss}
    return [f"{kind}: {m.group(0)!r}" for kind, rx in checks.items() for m in rx.finditer(text)]

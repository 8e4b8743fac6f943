"""The question phrase banks: one data file per language (`questions/<lang>.yaml`), read once.

Questions (`wording`), their columns' fixed words (`schema.TaskSchema.word`) and the multi-hop
phrasings all draw on them; every language has the same keys (tests/language/test_language.py)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import yaml

from ..language import get as get_language

QUESTIONS = Path(__file__).parent / "questions"  # the phrase bank of each language: questions/<lang>.yaml


@lru_cache(maxsize=4)
def question_bank(language: str) -> dict:
    """The phrasings of one language's questions (`questions/<lang>.yaml`); every language has
    the same keys (a test holds it)."""
    return yaml.safe_load((QUESTIONS / f"{language}.yaml").read_text(encoding="utf-8"))


def question_languages() -> list[str]:
    return sorted(p.stem for p in QUESTIONS.glob("*.yaml"))


def question_date(d: dt.date, language: str) -> str:
    """A date as a question in `language` writes it (the bank's `date`: 'June 30, 2025', 2025年6月30日)."""
    return question_bank(language)["date"].format(year=d.year, month=d.month, day=d.day, month_name=get_language(language).months[d.month - 1])


def balanced(options: list[str], used: Counter, draw: Callable[[int], int]) -> str:
    """One of `options` among those said least so far in the world (`used` counts them, and counts
    this one): a bank's openings spread evenly over a world's questions instead of a few recurring
    as a form letter does; `draw(n)` picks among the n tied ones (the task's own generator)."""
    low = min(used[o] for o in options)
    tied = [o for o in options if used[o] == low]
    choice = tied[draw(len(tied))]
    used[choice] += 1
    return choice

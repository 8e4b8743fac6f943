"""How a question's conditions combine, as a small typed expression tree (the task sampler
and the researcher read it alike).

A task states the combination of its conditions as text (`combo`: "A", "A&B", "A|B", "A&!B",
"(A|B)&C", ...; a letter names a condition of the question). The researcher reads it once
(`parse_combo`) and asks the tree what it needs: whether a row satisfies it when some conditions are
not known yet (`evaluate_combo`, three-valued), which conditions every row that satisfies it must meet
(`combo_musts`: a list narrowed by one of them holds every answer), and the conditions of a choice
(`combo_alternatives`: the union of their lists holds every answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Var:
    """One condition of the question, by its letter."""

    letter: str


@dataclass(frozen=True)
class Not:
    part: Expr


@dataclass(frozen=True)
class AllOf:
    """Every part holds (no part: always true, as a question with no conditions)."""

    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one part holds."""

    parts: tuple[Expr, ...]


Expr = Var | Not | AllOf | AnyOf


class ConditionError(ValueError):
    """A combination that is not letters joined by &, | and ! with parentheses."""


def parse_combo(text: str) -> Expr:
    """The tree of a combination ('(A|B)&C' -> AllOf((AnyOf((A, B)), C))); '' is always true.
    `|` binds looser than `&`, `!` tightest."""
    s = text.replace(" ", "")
    pos = 0

    def peek() -> str:
        return s[pos] if pos < len(s) else ""

    def expr() -> Expr:
        nonlocal pos
        parts = [term()]
        while peek() == "|":
            pos += 1
            parts.append(term())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def term() -> Expr:
        nonlocal pos
        parts = [factor()]
        while peek() == "&":
            pos += 1
            parts.append(factor())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def factor() -> Expr:
        nonlocal pos
        ch = peek()
        if ch == "!":
            pos += 1
            return Not(factor())
        if ch == "(":
            pos += 1
            inner = expr()
            if peek() != ")":
                raise ConditionError(f"unbalanced parenthesis in condition combination {text!r}")
            pos += 1
            return inner
        if ch.isalpha() and ch.isupper():
            pos += 1
            return Var(ch)
        raise ConditionError(f"unexpected {ch or 'end'!r} at {pos} in condition combination {text!r}")

    if not s:
        return AllOf(())
    tree = expr()
    if pos != len(s):
        raise ConditionError(f"unexpected {s[pos]!r} at {pos} in condition combination {text!r}")
    return tree


def evaluate_combo(e: Expr, values: Mapping[str, object], unknown: object):
    """True, False or `unknown` (a condition not settled yet): Kleene's three-valued logic. A
    letter with no value holds (a condition the row's list already implies)."""
    if isinstance(e, Var):
        return values.get(e.letter, True)
    if isinstance(e, Not):
        x = evaluate_combo(e.part, values, unknown)
        return unknown if x is unknown else (not x)
    xs = [evaluate_combo(p, values, unknown) for p in e.parts]
    if isinstance(e, AllOf):
        if any(x is False for x in xs):
            return False
        return unknown if any(x is unknown for x in xs) else True
    if any(x is True for x in xs):
        return True
    return unknown if any(x is unknown for x in xs) else False


def combo_musts(e: Expr) -> set[str]:
    """The conditions every row that satisfies the combination meets (positively)."""
    if isinstance(e, Var):
        return {e.letter}
    if isinstance(e, Not):
        return set()
    sets = [combo_musts(p) for p in e.parts]
    if isinstance(e, AllOf):
        return set().union(*sets)
    return set.intersection(*sets) if sets else set()


def combo_alternatives(e: Expr) -> list[str]:
    """The conditions of the combination's choice between plain conditions ('A|B', or '(A|B)&C'),
    in order; none when it has no such choice."""
    if isinstance(e, AnyOf) and all(isinstance(p, Var) for p in e.parts):
        return [p.letter for p in e.parts]
    if isinstance(e, AllOf):
        choices = [p for p in e.parts if isinstance(p, AnyOf)]
        if len(choices) == 1:
            return combo_alternatives(choices[0])
    return []


def negates_or_chooses(e: Expr) -> bool:
    """Whether the combination holds a NOT or an OR (the harder tasks)."""
    if isinstance(e, Var):
        return False
    if isinstance(e, (Not, AnyOf)):
        return True
    return any(negates_or_chooses(p) for p in e.parts)

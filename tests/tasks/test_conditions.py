"""How a question's conditions combine, as a typed tree (issue 57: conditions were strings the
sampler and the researcher each matched by hand). The tree gives what the hand-written tables gave
for every combination the sampler poses, in three-valued logic, and says what it cannot read."""

from __future__ import annotations

import itertools

import pytest

from worldforge.tasks import AllOf, AnyOf, ConditionError, Not, Var, combo_alternatives, combo_musts, evaluate_combo, negates_or_chooses, parse_combo
from worldforge.tasks.table import COMBOS

UNKNOWN = object()

# What the hand-written tables said before the tree (the sampler's combinations).
MUSTS = {"A": {"A"}, "A&B": {"A", "B"}, "A|B": set(), "A&!B": {"A"}, "A&B&C": {"A", "B", "C"}, "(A|B)&C": {"C"},
         "A&B&!C": {"A", "B"}, "": set()}
ALTERNATIVES = {"A|B": ["A", "B"], "(A|B)&C": ["A", "B"]}


def _kleene_and(*xs):
    return False if any(x is False for x in xs) else UNKNOWN if any(x is UNKNOWN for x in xs) else True


def _kleene_or(*xs):
    return True if any(x is True for x in xs) else UNKNOWN if any(x is UNKNOWN for x in xs) else False


def _not(x):
    return UNKNOWN if x is UNKNOWN else (not x)


TRUTH = {"": lambda a, b, c: True, "A": lambda a, b, c: a, "A&B": lambda a, b, c: _kleene_and(a, b),
         "A|B": lambda a, b, c: _kleene_or(a, b), "A&!B": lambda a, b, c: _kleene_and(a, _not(b)),
         "A&B&C": lambda a, b, c: _kleene_and(a, b, c), "(A|B)&C": lambda a, b, c: _kleene_and(_kleene_or(a, b), c),
         "A&B&!C": lambda a, b, c: _kleene_and(a, b, _not(c))}


def test_every_posed_combination_reads_as_before():
    posed = {c for cs in COMBOS.values() for c in cs} | {""}
    assert posed <= set(TRUTH)
    for combo in posed:
        tree = parse_combo(combo)
        assert combo_musts(tree) == MUSTS[combo], combo
        assert combo_alternatives(tree) == ALTERNATIVES.get(combo, []), combo
        assert negates_or_chooses(tree) == ("!" in combo or "|" in combo), combo
        for a, b, c in itertools.product((True, False, UNKNOWN), repeat=3):
            got = evaluate_combo(tree, {"A": a, "B": b, "C": c}, UNKNOWN)
            assert got is TRUTH[combo](a, b, c), (combo, a, b, c)


def test_the_tree_is_typed_and_binds_as_written():
    assert parse_combo("(A|B)&C") == AllOf((AnyOf((Var("A"), Var("B"))), Var("C")))
    assert parse_combo("A|B&C") == AnyOf((Var("A"), AllOf((Var("B"), Var("C")))))  # & binds tighter than |
    assert parse_combo("A&!B") == AllOf((Var("A"), Not(Var("B"))))
    assert parse_combo(" A & B ") == parse_combo("A&B")
    assert evaluate_combo(parse_combo("A"), {}, UNKNOWN) is True  # a condition the row's list implies holds


@pytest.mark.parametrize("bad", ["A&", "(A|B", "A)B", "a&b", "A&&B", "A+B"])
def test_a_combination_it_cannot_read_is_named(bad):
    with pytest.raises(ConditionError, match="condition combination"):
        parse_combo(bad)

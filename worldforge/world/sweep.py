"""A seed sweep: one spec planned under consecutive seeds, each world checked (every
invariant, every audit threshold of its packs) in memory and thrown away.

A world must plan under any seed a user or a farm draws, not only under the one a spec
ships with: a sweep is how the tests and `benchmarks/seeds.py` hold the planner to that."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import PlanError
from .feasible import REDRAWN
from .spec import ResolvedWorld


@dataclass(frozen=True)
class SeedResult:
    """One seed's world: planned or not (`error`), invariants broken, audit thresholds broken."""

    seed: int
    error: str | None = None
    violations: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()
    warned: tuple[str, ...] = ()  # thresholds broken on relations `validate` warned the counts cannot serve
    redrawn: int = 0  # source dates drawn again so that a required link had a target
    seconds: float = 0.0
    repairs: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.violations and not self.broken and not self.warned


def with_seed(world: ResolvedWorld, seed: int) -> ResolvedWorld:
    """The same validated world under another root seed."""
    return world.model_copy(update={"spec": world.spec.model_copy(update={"seed": seed})})


def plan_seed(world: ResolvedWorld, seed: int, audit: bool = True) -> SeedResult:
    """Plan `world` under `seed` in memory; check its invariants and (with `audit`) its packs'
    audit thresholds."""
    from .audit import audit_connection
    from .capacity import count_warnings
    from .invariants import check_connection
    from .planner import generate_world
    from .store import open_in_memory

    w = with_seed(world, seed)
    t0 = time.perf_counter()
    try:
        tables = generate_world(w)
    except PlanError as exc:
        return SeedResult(seed, error=str(exc), seconds=time.perf_counter() - t0)
    con = open_in_memory(w, tables)
    try:
        violations = tuple(str(v) for v in check_connection(con, w))
        report = audit_connection(con, w).broken if audit else []
    finally:
        con.close()
    warned_rels = {r for r, _ in count_warnings(w)}

    def text(b: dict) -> str:
        return f"{b['pack']}: {b['section']} {b['subject']} {b['metric']} = {b['value']}"

    def is_warned(b: dict) -> bool:
        return str(b["subject"]).split(" ")[0] in warned_rels

    broken = tuple(text(b) for b in report if not is_warned(b))
    warned = tuple(text(b) for b in report if is_warned(b))
    return SeedResult(seed, violations=violations, broken=broken, warned=warned, seconds=time.perf_counter() - t0,
                      redrawn=sum(v for k, v in tables.repairs.items() if REDRAWN in k), repairs=dict(tables.repairs))


def load_scaled(path, factor: float = 1.0, at_least: int = 1) -> ResolvedWorld:
    """Load a world spec with every count multiplied by `factor` (at least `at_least` of each
    type the spec counts), validated as a user's spec would be."""
    import tempfile
    from pathlib import Path

    import yaml

    from .validate import load_world

    path = Path(path)
    if factor == 1.0:
        return load_world(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["counts"] = {t: (max(at_least, round(c * factor)) if c else 0) for t, c in raw["counts"].items()}
    with tempfile.TemporaryDirectory() as tmp:
        scaled = Path(tmp) / path.name
        scaled.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
        world = load_world(scaled, schemas_dir=None)
    return world

"""The world stage: a spec and its domain packs in, a frozen world out.

    spec.py, pack.py, options.py   the typed models of world specs, domain packs and stage options
    validate.py                    `load_world`: parse and check a spec with its packs, every problem at once
    dependencies.py                the order generation steps must run in
    sampling.py, planner.py        vectorised samplers and the planner (`plan_world`)
    feasible.py                    source dates a required link can be made at (required links by construction)
    capacity.py                    counts a world's rules cannot be met with, named before planning
    sweep.py                       one spec planned and checked under many seeds
    invariants.py                  built-in and declared invariants (`check_world`)
    store.py                       the world folder: `world.duckdb` + `world.json` (`open_world`)
"""

from .invariants import check_world
from .planner import plan_world
from .spec import ResolvedWorld, WorldSpec
from .store import WorldInfo, open_world
from .validate import load_world

__all__ = ["ResolvedWorld", "WorldInfo", "WorldSpec", "check_world", "load_world", "open_world", "plan_world"]

"""The world stage: a spec and its domain packs in, a frozen world out.

    spec.py, pack/, options.py     the typed models of world specs, domain packs and stage options
    validate.py                    `load_world`: parse and check a spec with its packs, every problem at once
    dependencies.py                the order generation steps must run in
    sampling.py, planner.py        vectorised samplers and the planner (`plan_world`)
    feasible.py                    source dates a required link can be made at (required links by construction)
    capacity.py                    counts a world's rules cannot be met with, named before planning
    sweep.py                       one spec planned and checked under many seeds
    invariants.py                  built-in and declared invariants (`check_world`)
    store.py                       the world folder: `world.duckdb` + `world.json` (`open_world`)
"""

from .arrays import Step, WorldArrays, iso, lookup_target, world_hops
from .audit import SECTIONS, audit_world
from .capacity import count_warnings
from .invariants import all_invariants, check_world
from .lexicon import Lexicon, attribute_label, humanise, lexicon_warnings, relation_label, unit_in
from .options import PERTURBATION_TOOLS, ROW_BUCKETS, AgentSpec, ExportOptions, RenderOptions, RolloutOptions, TasksOptions
from .pack import NAME_RE, CategoricalAttr, CodeAttr, CountAttr, DateAttr, DerivedAttr, LinkEntity, LinkNumber, LookupAttr, NumericAttr
from .parts import HELD_OUT, Parts, entity_parts, former_parts, hold_out, part_phrase
from .planner import count_steps, plan_world
from .sampling import DEFAULT_SYLLABLES, child_rng
from .spec import ResolvedWorld, WorldSpec, attribute_dtype, expected_counts, note_sql, value_translation
from .store import DB_FILE, REPLAN, WorldInfo, ensure_writable, heavy_drops, is_complete, open_world, planned_packs, repairs, world_dir
from .validate import load_world, pydantic_problems, read_yaml

__all__ = [
    "AgentSpec", "CategoricalAttr", "CodeAttr", "CountAttr", "DB_FILE", "DEFAULT_SYLLABLES", "DateAttr",
    "DerivedAttr", "ExportOptions", "HELD_OUT", "Lexicon", "LinkEntity", "LinkNumber", "LookupAttr", "NAME_RE",
    "NumericAttr", "PERTURBATION_TOOLS", "Parts", "REPLAN", "ROW_BUCKETS", "RenderOptions", "ResolvedWorld",
    "RolloutOptions", "SECTIONS", "Step", "TasksOptions", "WorldArrays", "WorldInfo", "WorldSpec",
    "all_invariants", "attribute_dtype", "attribute_label", "audit_world", "check_world", "child_rng",
    "count_steps", "count_warnings", "ensure_writable", "entity_parts", "expected_counts", "former_parts",
    "heavy_drops", "hold_out", "humanise", "is_complete", "iso", "lexicon_warnings", "load_world",
    "lookup_target", "note_sql", "open_world", "part_phrase", "plan_world", "planned_packs",
    "pydantic_problems", "read_yaml", "relation_label", "repairs", "unit_in", "value_translation", "world_dir",
    "world_hops",
]

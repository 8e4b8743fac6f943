"""The export stage: a world's tasks and trajectories as a versioned Hugging Face dataset.

    exports/<world>/<version>/
      README.md                     dataset card: YAML front matter (configs per format and
                                    split) and statistics computed from the data
      manifest.json                 resolved spec, seeds, package versions, sha256 of every file
      data/sft/<split>-0000i-of-0000n.parquet   one row per sample (a context segment, or a whole
                                    trajectory): OpenAI chat `messages`, `tools`, reward, steps
      data/rl/<split>-0000i-of-0000n.parquet    one row per task, verl-style: data_source,
                                    prompt, ability, reward_model{style, ground_truth}, extra_info
      jsonl/{sft,rl}/<split>.jsonl  the same rows as JSON lines
      widesearch/<split>/{tasks.jsonl, gold/, widesearch.jsonl, widesearch_gold/, README.md}   WideSearch's two layouts

A task is in one split only (every trajectory of a task goes with it). `split_by: region`
(the default) keeps the tasks stage's world-level split: validation and test tasks were posed
in held-out parts of the world, with gold facts stated only on pages of those parts, and
training tasks were posed so that their research reads none of those pages. The export
measures it over the trajectories: the pages stating a held-out gold fact (`page_facts`) that a
training trajectory opened (the card and the manifest report it); a training task whose
trajectories opened any is dropped, and a held-out task never moves. `split_by: task` cuts
tasks at random; `split_by: world` puts a whole world in one split. Every SFT sample passes
the grounding check (`rollout/grounding.py`) or is not written. The folder is built beside
its destination and renamed into place; the same inputs give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .cluster import current
from .errors import ExportError
from .kits import AGENT_NAME, check_tokenizer, length_table, settings, tools_kwargs, training_section, write_kits
from .language import BASE
from .language import get as get_language
from .plumbing import check_output_dir, package_versions, read_json, sha256_file, stable_hash, swap_into_place
from .records import RECORDS_VERSION, SPLITS, RLRow, Score, SFTRow, Shape, arrow_schema, check_rows, field_table, row_schemas
from .rollout import SYSTEM_PROMPT, TOOLS, GroundingReport, check_trajectory, held_out_lines, load_tasks, read_report, read_trajectories, samples
from .world import ExportOptions, open_world, planned_packs

MANIFEST = "manifest.json"

# The rows' Parquet schemas, from their records (`worldforge.records`: the same models give the
# JSON Schema the manifest publishes and check every row before it is written).
SFT_SCHEMA = arrow_schema(SFTRow)
RL_SCHEMA = arrow_schema(RLRow)


@dataclass
class ExportReport:
    path: Path
    fingerprint: str
    rows: dict[str, dict[str, int]]  # format -> split -> rows
    files: int
    bytes: int
    replaced: bool
    grounding: dict = None  # the grounding check's counts over the SFT samples
    splits: dict = None  # split -> tasks
    leak: dict = None  # held-out evidence pages opened in training, training tasks dropped for it


def export_path(out_root: str | Path, world: str, version: str) -> Path:
    return Path(out_root) / world / version


def assign_splits(task_ids: list[str], opt: ExportOptions, world: str, seed: int,
                  records: dict[str, dict] | None = None) -> dict[str, str]:
    """task id -> split. By region: the split the tasks stage posed each task in (held-out
    parts of the world), when it held any out, else as by task; by task: tasks ordered by a
    seeded hash and cut at the fractions (rounded, so every split gets its share); by world:
    every task in one split."""
    names = [s for s in SPLITS if opt.splits.get(s, 0.0) > 0]
    if opt.split_by == "region" and records and any(r.get("split", "train") != "train" for r in records.values()):
        return {t: records[t].get("split", "train") if records[t].get("split") in SPLITS else "train" for t in task_ids}
    if opt.split_by == "world":
        split = opt.world_split
        if split is None:
            u, acc = stable_hash(seed, "split", world) / 2**64, 0.0
            split = names[-1]
            for s in names:
                acc += opt.splits[s]
                if u < acc:
                    split = s
                    break
        return dict.fromkeys(task_ids, split)
    order = sorted(task_ids, key=lambda t: (stable_hash(seed, "split", t), t))
    n = len(order)
    bounds, acc = [], 0.0
    for s in names:
        acc += opt.splits[s]
        bounds.append((s, round(acc * n)))
    out, start = {}, 0
    for s, end in bounds:
        for t in order[start:end]:
            out[t] = s
        start = max(start, end)
    return out


def opened_pages(trajectory: dict) -> set[str]:
    """Every page a trajectory opened (its web_extractor calls)."""
    out = set()
    for m in trajectory["messages"]:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            if fn.get("name") != "web_extractor":
                continue
            try:
                url = json.loads(fn.get("arguments") or "{}").get("url")
            except (ValueError, AttributeError):
                continue
            if isinstance(url, str):
                out.add(url)
    return out


def held_out_pages(world_path: Path, tasks: list, splits: dict[str, str]) -> dict[str, set[str]]:
    """Per held-out split: the pages (URLs) that state a gold fact of one of its tasks, by the
    render's provenance (`page_facts`; a name is how an entity is found, not a gold fact). A
    training trajectory that opens one has read held-out evidence; shared pages that state no
    held-out gold fact ("List of countries", a training country's lists) are not among them."""
    from .web import held_out_facts, pages_stating

    facts = held_out_facts([{**t.record, "split": splits[t.id]} for t in tasks])
    return {s: pages_stating(world_path / "web", facts[s]) for s in ("validation", "test") if facts.get(s)}


def _shown_text(shown: dict, region: bool) -> str:
    if not shown["pairs"]:
        return ""
    return (f"Held-out gold (key, value) pairs that one line of a training trajectory's tool results states (a "
            f"snippet naming a held-out entity beside its value): {shown['on_a_line']:,} of {shown['pairs']:,} "
            f"({100 * shown['share']:.1f} %)" + ("; training episodes' searches do not find the pages that state held-out "
                                                 "gold (evaluation episodes search the whole web)." if region else "."))


def split_leak(held: dict[str, set[str]], trajs: list[dict], splits: dict[str, str]) -> tuple[dict, list[str]]:
    """Per held-out split, the held-out evidence pages (`held_out_pages`) training trajectories
    opened, and the training tasks whose trajectories opened any (the export drops them: a
    held-out task never moves to train)."""
    protected = set().union(*held.values()) if held else set()
    leaking = sorted({t["instance_id"] for t in trajs if splits.get(t["instance_id"]) == "train" and opened_pages(t) & protected})
    read = set().union(*(opened_pages(t) for t in trajs if splits.get(t["instance_id"]) == "train")) if trajs else set()
    by_split = {s: {"pages": len(pages), "opened_in_training": len(pages & read)} for s, pages in held.items()}
    return by_split, leaking


def sft_rows(t: dict, world: str, record: dict, mode: str, report: GroundingReport, scorer: str = "widesearch",
             state_weight: int = 1) -> list[dict]:
    """The SFT rows of one trajectory: one per sample (`rollout.context.samples`: a segment, or the
    whole unsummarised trajectory with `context: full`), each exactly what the model saw, and only
    the samples that pass the grounding check (`rollout.grounding`; `report` counts them all).
    Every sample of a trajectory carries its final reward. Each assistant message carries its
    loss weight: 1, but `state_weight` for the research state a segment ends with."""
    out = []
    tid = f"{t['instance_id']}#{t['sample']}"
    sc = t["score"]
    calls = _calls_per_message(t["messages"])
    for sample, check in check_trajectory(t, record, mode, scorer):
        sid = tid if sample.segment < 0 else f"{tid}/{sample.segment}"
        report.add(sid, check)
        if not check.ok:
            continue
        a, b = sample.turns
        first, n = sum(calls[:a]), sum(calls[a:b])
        last = len(sample.messages) - 1
        msgs = [{"role": m["role"], "content": m.get("content") or "", "tool_calls": m.get("tool_calls"),
                 "tool_call_id": m.get("tool_call_id"),
                 "weight": None if m["role"] != "assistant" else (state_weight if i == last and not sample.final else 1)}
                for i, m in enumerate(sample.messages)]
        out.append({"id": sid, "trajectory_id": tid, "segment": max(sample.segment, 0), "segments": sample.segments,
                    "instance_id": t["instance_id"], "sample": t["sample"], "world": world, "kind": t["kind"],
                    "policy": t["policy"], "messages": msgs, "tools": json.dumps(TOOLS, ensure_ascii=False), "reward": t["reward"],
                    "score": {k: float(sc[k]) for k in Score.model_fields}, "end": t["end"], "turns": t["turns"],
                    "tool_calls": t["tool_calls"], "tokens": {k: t["tokens"].get(k, 0) for k in ("prompt", "assistant", "tool")},
                    "steps": t["steps"] if mode == "full" else t["steps"][first:first + n], "context": context_record(t)})
    return out


def _calls_per_message(msgs: list[dict]) -> list[int]:
    """Tool calls each message makes (steps are recorded per call, in order)."""
    return [len(m.get("tool_calls") or ()) for m in msgs]


def context_record(t: dict) -> dict:
    """A trajectory's context budget record."""
    c = t.get("context") or {}
    return {"budget": c.get("budget"), "peak": c.get("peak", 0), "compactions": c.get("compactions", 0),
            "sizes": list(c.get("sizes") or [])}


def ground_truth(task, aliases: dict[str, str], scoring: dict) -> dict:
    """What `worldforge.rewards.compute_score` needs to score an answer exactly as the live
    environment does: the gold table, WideSearch's `evaluation`, the aliases its keys align
    through (`task_aliases`), and the scorer mode, reward metric and date (the world's as_of,
    for dates without a year or month) of the rollout."""
    r = task.record
    truth = {"instance_id": task.id, "kind": r["kind"], "columns": task.header, "rows": task.rows,
             "evaluation": r["evaluation"], "aliases": aliases, **scoring}
    if r["kind"] == Shape.MULTIHOP:
        truth["answer_aliases"] = r.get("answer_aliases", [])
    if r.get("language", BASE) != BASE:  # a Chinese task's cells are read the Chinese way (English truths unchanged)
        truth["language"] = r["language"]
    return truth


def rl_row(task, world: str, split: str, index: int, system: str, truth: dict) -> dict:
    r = task.record
    d = r["difficulty"]
    return {
        "data_source": f"worldforge/{world}",
        "agent_name": AGENT_NAME,
        "prompt": [{"role": "system", "content": system}, {"role": "user", "content": r["query"]}],
        "ability": "web-search",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(truth, ensure_ascii=False)},
        "extra_info": {"index": index, "split": split, "instance_id": task.id, "world": world, "language": r.get("language", BASE),
                       "kind": r["kind"],
                       "entity_type": r["entity_type"], "rows": d["rows"], "columns": d["columns"], "hops": d["hops"],
                       "constraints": d["constraints"], "min_pages": d["min_pages"],
                       "tools": json.dumps(TOOLS, ensure_ascii=False), "tools_kwargs": tools_kwargs(task.id)},
    }




def ground_truths(world_path: Path, tasks: list, rollout_options: dict) -> dict[str, dict]:
    from .tasks import Evaluation, aliases_by_name, task_aliases, world_aliases
    from .world import open_world

    aliases = world_aliases(world_path)
    by_name = aliases_by_name(aliases)
    scoring = {"scorer": rollout_options.get("scorer", "widesearch"), "reward_metric": rollout_options["reward_metric"],
               "as_of": open_world(world_path).world.spec.as_of.isoformat()}
    return {t.id: ground_truth(t, task_aliases(Evaluation.model_validate(t.record["evaluation"]), t.header, t.rows, aliases,
                                               by_name), scoring) for t in tasks}


def write_rows(rows: list[dict], schema: pa.Schema, folder: Path, jsonl: Path, split: str, shard_rows: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    n = max(1, math.ceil(len(rows) / shard_rows))
    table = pa.Table.from_pylist(rows, schema=schema)
    paths = []
    for i in range(n):
        p = folder / f"{split}-{i:05d}-of-{n:05d}.parquet"
        pq.write_table(table.slice(i * shard_rows, shard_rows), p, compression="zstd")
        paths.append(p)
    import polars as pl

    pl.from_arrow(table).write_ndjson(jsonl)  # the same rows as JSON lines (polars writes them in Rust)
    return paths


def _write_split(job: tuple[str, str, list], world: str, system: str, shard_rows: int, partial: str,
                 context: str = "segments", scorer: str = "widesearch", state_weight: int = 1) -> tuple[int, dict, list]:
    """Write one format's rows of one split (Parquet shards and JSON lines); returns the row count,
    the grounding report of its samples (SFT) and the trajectories all of whose samples passed."""
    fmt, s, items = job
    report = GroundingReport()
    whole = []
    if fmt == "sft":
        rows, schema = [], SFT_SCHEMA
        for t, record in items:
            failed = report.failed
            rows += sft_rows(t, world, record, context, report, scorer, state_weight)
            if report.failed == failed:
                whole.append(f"{t['instance_id']}#{t['sample']}")
    else:
        rows, schema = [rl_row(t, world, s, i, system, truth) for i, (t, truth) in enumerate(items)], RL_SCHEMA
    check_rows(fmt, rows)  # every row is its record: a wrong field stops the export, never lands as a null
    if rows:
        write_rows(rows, schema, Path(partial) / "data" / fmt, Path(partial) / "jsonl" / fmt / f"{s}.jsonl", s, shard_rows)
    return len(rows), report.as_dict(), whole


def check_dest(dest: Path, fingerprint: str | None, force: bool) -> bool:
    """Whether `dest` holds an earlier export to replace. A folder that holds something else
    is never replaced; a different dataset version needs --force."""
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest} is a file; give a folder for the dataset")
    if not dest.is_dir() or not any(dest.iterdir()):
        return False
    man = dest / MANIFEST
    if not man.is_file():
        raise ExportError(f"{dest} is not empty and holds no worldforge dataset ({MANIFEST}); choose a new or empty folder")
    old = read_json(man, f"delete {dest} (or choose another folder or version) and export again")
    if not isinstance(old, dict):
        raise ExportError(f"{man} is not a worldforge manifest (a JSON {type(old).__name__}, not an object); delete {dest} "
                          "(or choose another folder or version) and export again")
    old = old.get("fingerprint")
    if fingerprint is not None and old != fingerprint and not force:
        raise ExportError(f"{dest} already holds a different dataset (fingerprint {old}, this one is {fingerprint}); "
                          "pass --force to replace it, or set stages.export.version to a new version")
    return True


def export_dataset(world_path: str | Path, out_root: str | Path = "exports", options: ExportOptions | None = None, *,
                   force: bool = False, tokenizer: str | None = None,
                   on_progress: Callable[[str, int, int], None] | None = None) -> ExportReport:
    """Write a world's dataset to `<out_root>/<world>/<version>/` (see the module docstring).
    `tokenizer` (default `stages.export.tokenizer`) counts the card's token lengths."""
    world_path = Path(world_path)
    info = open_world(world_path)
    pack_yaml = planned_packs(info)  # before any work: a world whose pack files moved says so here
    spec = info.world.spec
    opt = options or spec.stages.export
    if tokenizer is not None:
        opt = opt.model_copy(update={"tokenizer": tokenizer})
    if opt.tokenizer is not None:
        check_tokenizer(opt.tokenizer)  # before any work: an unusable one failed after the data was written
    world = spec.name
    dest = export_path(out_root, world, opt.version)
    check_output_dir(dest, "dataset folder")
    check_dest(dest, None, force)  # a foreign folder fails before any work
    trajs = read_trajectories(world_path)
    rollout = read_report(world_path)
    tasks = load_tasks(world_path)
    seed = spec.seed
    splits = assign_splits([t.id for t in tasks], opt, world, seed, {t.id: t.record for t in tasks})
    region = opt.split_by == "region" and any(v != "train" for v in splits.values())
    leak, leaking = split_leak(held_out_pages(world_path, tasks, splits), trajs, splits)
    if not region:  # a random cut (by task) is measured, not mended: the card says how much it leaks
        leaking = []
    if leaking:  # a training task whose research read held-out evidence is dropped, never the held-out task
        drop = set(leaking)
        tasks = [t for t in tasks if t.id not in drop]
        trajs = [t for t in trajs if t["instance_id"] not in drop]
        leak, _ = split_leak(held_out_pages(world_path, tasks, splits), trajs, splits)
    system = SYSTEM_PROMPT.format(today=spec.as_of.strftime("%B %-d, %Y"))
    truths = ground_truths(world_path, tasks, rollout["options"]) if "rl" in opt.formats else {}

    partial = dest.with_name(f".{dest.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    used = [s for s in SPLITS if any(v == s for v in splits.values())]
    fmts = [f for f in ("sft", "rl") if f in opt.formats]
    rows: dict[str, dict[str, int]] = {f: {} for f in fmts}
    records = {t.id: t.record for t in tasks}

    # SFT targets are right answers: trajectories below sft_min_reward give no SFT rows (RL rows and
    # held-out evaluation keep every task)
    sft_trajs = [t for t in trajs if t["reward"] >= opt.sft_min_reward]
    totals = {"sft": sum(len(t.get("segments") or [1]) if opt.context == "segments" else 1 for t in sft_trajs), "rl": len(tasks)}

    def jobs():  # one writer per format and split: Ray tasks under --ray, merged in this fixed order
        for fmt in fmts:
            for s in used:
                items = ([(t, records[t["instance_id"]]) for t in sft_trajs if splits[t["instance_id"]] == s] if fmt == "sft"
                         else [(t, truths[t.id]) for t in tasks if splits[t.id] == s])
                yield fmt, s, items

    order = [(f, s) for f in fmts for s in used]
    grounding = GroundingReport()
    grounded: set[str] = set()  # trajectories every sample of which passed the check
    scorer = rollout["options"].get("scorer", "widesearch")
    for (fmt, s), (n, rep, whole) in zip(order, current().map(_write_split, jobs(), world, system, opt.shard_rows, str(partial),
                                                            opt.context, scorer, opt.state_weight)):
        if n:  # a split whose trajectories were all rejected has no SFT rows
            rows[fmt][s] = n
        if fmt == "sft":
            grounding.merge(rep)
            grounded.update(whole)
        if on_progress:
            on_progress(fmt, sum(rows[fmt].values()) if fmt == "rl" else grounding.samples, totals[fmt])
    if "widesearch" in opt.formats:
        rows["widesearch"] = _write_widesearch(partial, tasks, splits, used, f"{world} {opt.version}")

    tasks_report = read_json(world_path / "tasks" / "report.json", f"pose the tasks again with `worldforge tasks {world_path} --force`")
    stats = _dataset_stats(trajs, sft_trajs, tasks, splits, used, rows, rollout, opt, (region, leaking, leak),
                           (grounding, grounded), tasks_report)
    lengths = length_table([x for t in trajs for x in samples(t, opt.context)],
                           [[{"role": "system", "content": system}, {"role": "user", "content": t.query}] for t in tasks], opt.tokenizer,
                           whole=[x for t in trajs for x in samples(t, "full")] if opt.context == "segments" else None)
    trainer = settings(lengths, rollout["options"], rows.get("rl", {}).get("train", 0))
    rl_files = {s: sorted(str(p.relative_to(partial)) for p in (partial / "data" / "rl").glob(f"{s}-*.parquet")) for s in used}
    write_kits(partial, world, opt.version, rl_files, trainer, lengths)
    stats["training"] = {"lengths": lengths, "settings": trainer}
    files = {str(p.relative_to(partial)): p for p in sorted(partial.rglob("*")) if p.is_file()}
    hashes = {k: {"sha256": sha256_file(p), "bytes": p.stat().st_size} for k, p in files.items()}
    card = dataset_card(world, opt, spec, rows, stats, rollout, packs=list(pack_yaml))
    (partial / "README.md").write_text(card)
    hashes["README.md"] = {"sha256": hashlib.sha256(card.encode()).hexdigest(), "bytes": len(card.encode())}
    fingerprint = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
    render = read_json(world_path / "web" / "render.json", f"render the world again with `worldforge render {world_path} --force`")
    manifest = _manifest(info, opt, fingerprint, pack_yaml, tasks_report, rollout, render, world_path, stats, rows,
                         splits, tasks, hashes)
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    replaced = check_dest(dest, fingerprint, force)
    swap_into_place(partial, dest)
    size = sum(h["bytes"] for h in hashes.values())
    return ExportReport(dest, fingerprint, rows, len(hashes) + 1, size, replaced, stats["grounding"],
                        dict(sorted(Counter(splits[t.id] for t in tasks).items())), stats["leak"])


def _write_widesearch(partial: Path, tasks: list, splits: dict[str, str], used: list[str], title: str) -> dict[str, int]:
    """WideSearch's own files per split (`widesearch/<split>/`): the questions and gold CSVs."""
    from .tasks import gold_csv, write_widesearch

    out = {}
    for s in used:
        mine = {t.id: t for t in tasks if splits[t.id] == s}
        write_widesearch(partial / "widesearch" / s, [t.record for t in mine.values()],
                         lambda iid, m=mine: gold_csv(m[iid].header, m[iid].rows), f"{title}: {s} split")
        out[s] = len(mine)
    return out


def _dataset_stats(trajs: list[dict], sft_trajs: list[dict], tasks: list, splits: dict[str, str], used: list[str],
                   rows: dict, rollout: dict, opt: ExportOptions, leaks: tuple, checked: tuple, tasks_report: dict) -> dict:
    """The dataset's statistics for its card and manifest: the tasks and trajectories by split,
    the held-out leak (`leaks`: whether split by region, the training tasks dropped, the leak by
    split), the grounding check (`checked`: its report and the whole trajectories) and the SFT
    filter."""
    region, leaking, leak = leaks
    grounding, grounded = checked
    stats = _statistics(trajs, tasks, splits, rollout["stats"])
    stats["list_column_tasks"] = sum(any("llm_judge" in (c.get("metric") or []) for c in
                                         t.record["evaluation"].get("eval_pipeline", {}).values()) for t in tasks)
    for s_, v in stats["splits"].items():
        v["samples"] = rows.get("sft", {}).get(s_, 0)
    stats["leak"] = {"split_by": "region" if region else ("task" if opt.split_by != "world" else "world"),
                     "dropped_training_tasks": leaking, "by_split": leak,
                     "leaked_pages": sum(v["opened_in_training"] for v in leak.values()),
                     "held_out_pairs_shown": held_out_lines(tasks, splits, trajs),
                     "parts": {s: v.get("parts", []) for s, v in tasks_report.get("splits", {}).items() if s != "train" and region}}
    stats["grounding"] = {"context": opt.context, **grounding.as_dict(), "trajectories": len(sft_trajs),
                          "whole_trajectories": len(grounded), "example": _segment_example(sft_trajs, opt.context)}
    kept_tasks = {t["instance_id"] for t in sft_trajs}
    stats["sft_filter"] = {"min_reward": opt.sft_min_reward, "state_weight": opt.state_weight, "trajectories": len(trajs),
                           "kept": len(sft_trajs), "left_out": len(trajs) - len(sft_trajs),
                           "tasks": len({t["instance_id"] for t in trajs}), "tasks_kept": len(kept_tasks),
                           "by_split": {s: {"tasks": sum(1 for t in tasks if splits[t.id] == s),
                                            "tasks_kept": sum(1 for t in tasks if splits[t.id] == s and t.id in kept_tasks)}
                                        for s in used}}
    return stats


def _manifest(info, opt: ExportOptions, fingerprint: str, pack_yaml: dict[str, str], tasks_report: dict, rollout: dict,
              render: dict, world_path: Path, stats: dict, rows: dict, splits: dict[str, str], tasks: list, hashes: dict) -> dict:
    """`manifest.json`: what the dataset is (fingerprint, records, spec, packs, seeds, rollout and
    render settings, package versions, the world to rebuild it from) and every file's hash."""
    spec = info.world.spec
    seed = spec.seed
    extra = ("tantivy", "pydantic", "typer") + (("vllm",) if "vllm" in (rollout["policy"], render["options"]["backend"]) else ())
    return {
        "dataset": f"{spec.name}/{opt.version}", "fingerprint": fingerprint, "format": 1, "records": row_schemas(),
        "spec": spec.model_dump(mode="json"), "packs": {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in sorted(pack_yaml.items())},
        "seeds": {"world": spec.seed, "tasks": tasks_report.get("seed"), "rollout": rollout["seed"],
                  "perturbations": rollout["seed"], "split": seed},
        "rollout": {"policy": rollout["policy"], "options": rollout["options"]},
        "render": {"backend": render["options"]["backend"], "fingerprint": render.get("fingerprint")},
        "packages": package_versions(extra),
        # JSON text, not an object: the manifest's keys are sorted, and the order of packs, types and
        # attributes is the order a world is generated in (serve --from-manifest rebuilds from it).
        "world": json.dumps({"spec": json.loads(info.world.spec.model_dump_json()),
                             "pack_yaml": pack_yaml}),
        "tasks_sha256": sha256_file(world_path / "tasks" / "tasks.jsonl"),
        "training": stats["training"],
        "rows": rows, "splits": dict(sorted(Counter(splits[t.id] for t in tasks).items())), "leak": stats["leak"],
        "grounding": {k: v for k, v in stats["grounding"].items() if k != "example"},
        "sft_filter": stats["sft_filter"],
        "files": dict(sorted(hashes.items())),
    }



def _statistics(trajs: list[dict], tasks: list, splits: dict[str, str], trajectory_stats: dict) -> dict:
    per_split = {}
    for s in SPLITS:
        mine = [t for t in tasks if splits[t.id] == s]
        if not mine:
            continue
        tr = [t for t in trajs if splits[t["instance_id"]] == s]
        per_split[s] = {
            "tasks": len(mine), "table": sum(t.record["kind"] == Shape.TABLE for t in mine),
            "multihop": sum(t.record["kind"] == Shape.MULTIHOP for t in mine),
            "gold_rows": sum(len(t.rows) for t in mine), "gold_cells": sum(len(t.rows) * len(t.header) for t in mine),
            "trajectories": len(tr),
        }
    return {"splits": per_split, "trajectories": trajectory_stats,  # the rollout report's, over the same trajectories
            "difficulty": {k: dict(sorted(Counter(t.record["difficulty"][k] for t in tasks).items()))
                           for k in ("hops", "constraints")},
            "entity_types": dict(sorted(Counter(t.record["entity_type"] for t in tasks).items()))}


def _segment_example(trajs: list[dict], mode: str) -> dict | None:
    """One compacted trajectory, for the card: its segments, their sizes, and the start of the
    research state its first segment ends with."""
    t = next((t for t in trajs if len(t.get("segments") or ()) > 1), None)
    if t is None:
        return None
    segs = t["segments"]
    msgs = t["messages"]
    state = msgs[segs[0]["end"] - 1]["content"]
    lines = state.splitlines()
    excerpt = "\n".join(lines[:14]) + (f"\n... ({len(lines) - 14} more lines)" if len(lines) > 14 else "")
    return {"trajectory": f"{t['instance_id']}#{t['sample']}", "segments": len(segs), "reward": t["reward"],
            "turns": [sum(1 for m in msgs[x["start"]:x["end"]] if m["role"] == "assistant") for x in segs],
            "sizes": (t.get("context") or {}).get("sizes", []), "state": excerpt, "mode": mode}


def grounding_section(g: dict) -> list[str]:
    """The card's section on samples, segments and the grounding check."""
    mode = g["context"]
    out = ["## Samples: what the model saw", ""]
    if mode == "segments":
        out += ["Long trajectories do not fit one context. When the visible context passes 9/10 of the budget (less the "
                "notes it started from), the agent writes a *research note*: what changed since its last note (rows settled "
                "since, each written once, with the pages their values came from; candidates rejected; rows still lacking "
                "cells and where to read them; the candidates still to check and the pages to open next). It continues from "
                "`[system, user: task + every note so far]`, as in ReSum (arXiv 2509.13313) and SUPO (arXiv 2510.06727); "
                "when the notes fill 40% of the budget, one note that replaces them all is written instead. A trajectory is "
                "thus a run of *segments*, maximal runs of turns whose context only grows, and **each SFT row is one "
                "segment, exactly as the model saw it**: its prefix (system, task, and the notes written before), its "
                "turns, and the note it ended with (or the final answer). Rows of one trajectory share `trajectory_id`, are numbered by `segment` (of `segments`) and "
                "carry the trajectory's final `reward` (ReSum-GRPO's advantage broadcasting: train every segment with the "
                "trajectory's outcome). Train with loss on the assistant turns; the state each segment ends with is an "
                "assistant turn, so the model learns to write it (weighted by `stages.export.state_weight`). `context: full` in `stages.export` exports each whole "
                "trajectory instead, without its compactions, for long-context trainers. In RL the same happens in the "
                "rollout: the verl kit's agent loop (`kits/verl/agent_loop.yaml`, `context_tokens`) asks for the state when "
                "the context fills and returns each segment as an output, which verl's v1 trainer trains with the final "
                "reward. (TRL's GRPOTrainer keeps one growing completion per rollout and has no hook to replace it, so its "
                "kit does not compact: size `max_completion_length` for whole trajectories there.)", ""]
    else:
        out += ["Each SFT row is a whole trajectory (`context: full`): every turn in order, without the research states "
                "written when the rollout's context filled (the later turns had everything earlier in view).", ""]
    ex = g.get("example")
    if ex and mode == "segments":
        out += [f"For example, `{ex['trajectory']}` has {ex['segments']} segments of {', '.join(map(str, ex['turns']))} "
                f"assistant turns ({', '.join(f'{n:,}' for n in ex['sizes'])} tokens); its first segment ends with this "
                "note, which the second starts from:", "", "```text", ex["state"], "```", ""]
    share = 100 * g["visible_cell_share"]
    out += ["Every sample passed a grounding check before it was written: every URL it opens, and every URL a state it "
            "writes names, appears earlier in its visible context (system, task, state, tool results; never the "
            "assistant's own text); every informative answer cell (3+ characters, compared after the scorer's date and "
            "number normalisation) appears there, a rank through the values it orders; every count its narration states "
            "(rows, candidates, dropped, pages read, tries) equals what the actions did. Samples that fail are not "
            "exported.", "",
            "| grounding | value |", "|---|---:|",
            f"| samples checked | {g['samples']:,} |", f"| samples exported | {g['samples'] - g['failed']:,} |",
            f"| samples dropped | {g['failed']:,} |",
            f"| trajectories with every sample exported | {g['whole_trajectories']:,} of {g['trajectories']:,} |",
            f"| pages opened | {g['opens']:,} |", f"| opened before anything showed them | {g['unseen_opens']:,} |",
            f"| URLs in research states | {g['state_urls']:,} |", f"| of them never seen | {g['unseen_state_urls']:,} |",
            f"| informative answer cells | {g['cells']:,} |", f"| visible in their sample | {share:.2f} % |",
            f"| counts stated in the narration | {g['claims']:,} |", f"| contradicting the actions | {g['contradicted']:,} |", ""]
    return out


def sft_filter_section(f: dict) -> list[str]:
    """The card's section on what SFT trains on: right answers, and the loss weights."""
    by = "; ".join(f"{s}: {v['tasks_kept']:,} of {v['tasks']:,}" for s, v in f["by_split"].items())
    rule = ("only trajectories whose answer is right (reward 1.0)" if f["min_reward"] >= 1.0
            else f"trajectories with a reward of at least {f['min_reward']:g}")
    return ["## What SFT trains on", "",
            f"SFT rows come from {rule} (`stages.export.sft_min_reward`): an answer with a wrong cell is no target for "
            "imitation. RL rows and the held-out evaluation keep every task.", "",
            "| SFT filter | value |", "|---|---:|",
            f"| trajectories | {f['trajectories']:,} |", f"| kept for SFT | {f['kept']:,} |",
            f"| left out (reward below {f['min_reward']:g}) | {f['left_out']:,} |",
            f"| tasks with at least one SFT trajectory | {f['tasks_kept']:,} of {f['tasks']:,} ({by}) |", "",
            "Each assistant message carries a loss `weight` (0 or 1, as in OpenAI's chat fine-tuning format): the agent's "
            f"decisions and answers weigh 1, the research state a segment ends with weighs {f['state_weight']} "
            "(`stages.export.state_weight`). The TRL kit (`kits/trl/sft.py`) masks weight-0 messages out of the loss; "
            "for verl's SFT trainer, drop them from the loss mask the same way (see docs/how-to/train-verl.md).", ""]


def _size_category(n: int) -> str:
    for lim, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < lim:
            return name
    return "1M<n<10M"


def dataset_card(world: str, opt: ExportOptions, spec, rows: dict, stats: dict, rollout: dict, packs: list[str] | None = None) -> str:
    """README.md: YAML front matter for the Hub, then the card with real statistics."""
    import yaml

    configs = []
    for fmt in ("sft", "rl"):
        if fmt in rows and rows[fmt]:
            c = {"config_name": fmt, "data_files": [{"split": s, "path": f"data/{fmt}/{s}-*.parquet"} for s in rows[fmt]]}
            if fmt == "sft" or "sft" not in rows:
                c["default"] = True
            configs.append(c)
    n_rows = max([sum(v.values()) for v in rows.values()] + [0])
    front = {"pretty_name": f"worldforge {world} ({opt.version})", "license": opt.license, "language": [spec.stages.tasks.language],
             "task_categories": ["question-answering", "text-generation"],
             "tags": ["synthetic", "agents", "tool-use", "web-search", "widesearch", "worldforge"],
             "size_categories": [_size_category(n_rows)], "configs": configs}
    tr = stats["trajectories"]
    lines = ["---", yaml.safe_dump(front, sort_keys=False).rstrip(), "---", "",
             f"# worldforge: {world} ({opt.version})", "",
             f"Synthetic training data for search agents, generated by worldforge from a "
             f"fictional world ({spec.description or world}). Every entity, page and search result is invented; gold answers "
             "come from the world's database, never from pages. Tasks follow WideSearch: find every entity that satisfies "
             "the conditions and fill a table, or answer a multi-hop question as a one-row table.", "",
             f"World: `{world}`, seed {spec.seed}, as of {spec.as_of}, packs {', '.join(packs if packs is not None else spec.packs)}. "
             f"Trajectories by the `{rollout['policy']}` policy.", "",
             "## Splits", "", "| split | tasks | table | multi-hop | gold rows | gold cells | trajectories | SFT samples |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s, v in stats["splits"].items():
        lines.append(f"| {s} | {v['tasks']:,} | {v['table']:,} | {v['multihop']:,} | {v['gold_rows']:,} | "
                     f"{v['gold_cells']:,} | {v['trajectories']:,} | {v.get('samples', 0):,} |")
    lk = stats["leak"]
    if lk["split_by"] == "region":
        held = "; ".join(f"{s}: {', '.join(p)}" for s, p in lk["parts"].items() if p)
        split_rule = ("validation and test tasks are posed in parts of the world held out from training "
                      f"({held}); every gold fact of a held-out task is stated only on pages of those parts, and no "
                      "training task's research reads a page of them"
                      + (f"; {len(lk['dropped_training_tasks'])} training task(s) whose trajectories still opened held-out "
                         "evidence were dropped" if lk["dropped_training_tasks"] else ""))
    elif lk["split_by"] == "task":
        split_rule = "each task is in exactly one split (all trajectories of a task go with it)"
    else:
        split_rule = "the whole world is in one split"
    leak_text = ", ".join(f"{s}: {v['opened_in_training']:,} of its {v['pages']:,} evidence pages" for s, v in lk["by_split"].items()) \
        or "no held-out split"
    lines += ["", f"Splits are by {lk['split_by']}: {split_rule}.", "",
              f"Leak: pages stating a gold fact of a held-out task (per the render's provenance, `page_facts`) that a "
              f"training trajectory opened: {leak_text}. Shared pages that state no held-out gold fact (a list of "
              "countries, a training country's lists) do not count. "
              + _shown_text(lk["held_out_pairs_shown"], lk["split_by"] == "region"), "",
              *grounding_section(stats["grounding"]),
              *sft_filter_section(stats["sft_filter"]),
              "## Trajectories", "", "| measure | value |", "|---|---:|",
              f"| trajectories | {tr['trajectories']:,} |", f"| mean reward ({rollout['options']['reward_metric']}) | {tr['reward_mean']:.4f} |",
              f"| success rate | {tr['success_rate']:.4f} |", f"| mean turns | {tr['turns_mean']:.2f} |",
              f"| max turns | {tr['turns_max']} |", f"| tool calls | {tr['tool_calls']:,} |",
              f"| mean tool calls | {tr['tool_calls_mean']:.2f} |"]
    for tool, n in tr["calls_by_tool"].items():
        lines.append(f"| calls to {tool} | {n:,} |")
    for k, n in tr["tokens"].items():
        lines.append(f"| {k} tokens | {n:,} |")
    lines.append(f"| malformed or failed calls | {tr['errors']:,} |")
    lines += ["", "Reward distribution:", "", "| reward | trajectories |", "|---|---:|"]
    lines += [f"| {b} | {n:,} |" for b, n in tr["reward_histogram"].items()]
    lines += ["", "Perturbations met (seeded, recorded per step in `steps`):", "", "| kind | tool calls |", "|---|---:|"]
    lines += [f"| {k} | {n:,} |" for k, n in tr["perturbations"].items()] or ["| none | 0 |"]
    lines += ["", "Task difficulty:", "", "| hops | tasks |", "|---:|---:|"]
    lines += [f"| {k} | {n:,} |" for k, n in stats["difficulty"]["hops"].items()]
    lines += ["", "| constraints | tasks |", "|---:|---:|"]
    lines += [f"| {k} | {n:,} |" for k, n in stats["difficulty"]["constraints"].items()]
    lines += ["", "## Configs", "",
              "- `sft`: one row per sample (a context segment, or a whole trajectory with `context: full`; see above). "
              "`messages` is OpenAI chat format (`system`, `user`, `assistant` with `tool_calls`, `tool` with "
              "`tool_call_id`); `tools` is the JSON list of function specs (`json.loads` it for "
              "`tokenizer.apply_chat_template(messages, tools=tools)`); `reward` and `score` are the trajectory's WideSearch "
              "metrics; `steps` records each of the sample's tool calls with its perturbation and error; `context` the "
              "trajectory's budget, compactions and segment sizes.",
              "- `rl`: one row per task, verl-style: `prompt`, `ability`, `reward_model.ground_truth` (JSON: columns, "
              "gold rows, WideSearch `evaluation`) and `extra_info`.",
              "- `widesearch/<split>/`: the tasks in WideSearch's own layouts, so its entry script "
              "(`scripts/run_infer_and_eval_batching.py`) runs on them with a path change only: `tasks.jsonl` + "
              "`gold/<instance_id>.csv` for its local loader (`WideSearchDataLoader`), `widesearch.jsonl` (`evaluation` "
              "as a JSON string, split `full`) + `widesearch_gold/` for its Hub loader (`WideSearchDataLoaderHF(repo_id=...)` "
              "once the folder is pushed as a dataset repo).", "- `jsonl/`: the `sft` and `rl` rows as JSON lines.", "",
              *list_column_note(stats.get("list_column_tasks", 0), sum(v["tasks"] for v in stats["splits"].values())),
              "```python", "from datasets import load_dataset", "",
              "sft = load_dataset(\"parquet\", data_files={\"train\": \"data/sft/train-*.parquet\"})", "```", "",
              *rows_section(),
              *training_section(stats["training"]["lengths"], stats["training"]["settings"], world),
              "## Reproduce", "", "```bash", f"worldforge run worlds/{world}.yaml", "```", "",
              "`manifest.json` holds the resolved spec, the seeds, package versions and the sha256 of every file; the "
              "same spec and seed give byte-identical files.", ""]
    lines += language_section(spec.stages.tasks.language, sum(v["tasks"] for v in stats["splits"].values()))
    return "\n".join(lines)


def rows_section() -> list[str]:
    """The card's row schema: each row kind's fields and types, from its record (`worldforge.records`)."""
    out = ["## Row schema", "",
           f"Rows are records version {RECORDS_VERSION} (`worldforge.records`; `manifest.json` holds each row's full JSON "
           "Schema under `records`, and `worldforge.records.read_rows(folder, kind, split)` reads a split after checking "
           "the version). Nested fields (`messages`, `score`, `steps`, `context`, `extra_info`) are structs and lists.", ""]
    for kind, model in (("sft", SFTRow), ("rl", RLRow)):
        out += [f"`{kind}` ({model.__name__}):", "", *field_table(model), ""]
    return out


def list_column_note(n: int, total: int | None) -> list[str]:
    """What the card says about list columns (founders, members): WideSearch grades them with an LLM."""
    if not n:
        return []
    of = f" of {total:,}" if total else ""
    return [f"**List columns.** {n:,}{of} tasks have a column holding a list (founders, members), declared "
            "`metric: [\"llm_judge\"]` with a `criterion` in the task's language: WideSearch's evaluator grades those "
            "cells with its LLM judge, and without a judge model every such cell scores 0 there. worldforge's scorer "
            "(`worldforge score`, the rollout reward, `worldforge.rewards`) grades them with the column's `llm_free` "
            "metric, `set_match`: right when the cell names the same set of items as the gold cell, in any order, "
            "separators (`;` `,` `、` line breaks) aside and each item compared after `norm_str`; a missing or extra "
            "item makes the cell wrong.", ""]


def language_section(language: str, n: int) -> list[str]:
    """The card's section in a task language other than the card's own, for datasets with tasks
    in it (`card` in worldforge/language/<code>.yaml; [] where the language has none)."""
    card = get_language(language).card
    if not card:
        return []
    out = [f"## {card['heading']}", ""]
    prev = None
    for para in card["paragraphs"]:  # a blank line between paragraphs; a list's items run on
        if prev is not None and not (para.startswith("- ") and prev.startswith("- ")):
            out.append("")
        out.append(para.format(n=n))
        prev = para
    return out + [""]

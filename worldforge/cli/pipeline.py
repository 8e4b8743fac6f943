"""Commands that make a dataset: pose tasks, roll out, export, run everything, farm many worlds, score answers."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..errors import WorldforgeError
from ..plumbing import raise_if_interrupted
from .common import (
    cluster_for,
    command,
    console,
    err_console,
    not_blank,
    progress_bars,
    ray_address_option,
    ray_cpus_option,
    ray_option,
    user_errors,
    workers_option,
    writing,
)


@command()
def tasks(
    world_dir: Path = typer.Argument(..., help="A rendered world folder, e.g. build/demo"),
    n: int = typer.Option(None, "--n", "-n", min=0, help="Tasks to keep per kind (default: stages.tasks.table / .multihop)."),
    kind: str = typer.Option("all", "--kind", "-k", help="table, multihop, or all."),
    seed: int = typer.Option(None, "--seed", "-s", min=0, help="Task seed (default: stages.tasks.seed, else the world's seed)."),
    export_widesearch: Path = typer.Option(None, "--export-widesearch", help="Also write WideSearch's own files "
                                           "(tasks.jsonl with instance_id/query/language/evaluation, gold/<id>.csv) here."),
    paraphrase: bool = typer.Option(False, "--paraphrase", help="Rewrite questions through vLLM; only faithful rewrites are kept."),
    model: str = typer.Option(None, "--model", "-m", help="--paraphrase: local model folder or hub id (default: stages.render.model)."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace existing tasks (and an earlier WideSearch export in the export folder)."),
    show_report: bool = typer.Option(False, "--report", help="Print the tasks' distribution beside WideSearch's published figures "
                                "(of the existing tasks, unless --force poses them again)."),
) -> None:
    """Generate WideSearch-style table tasks and multi-hop questions with gold answers from the
    world, keep only those whose every gold value is reachable in its simulated web, and write
    them to WORLD_DIR/tasks/ (score them with `worldforge score WORLD_DIR/tasks RESPONSES`)."""
    from ..errors import TasksError
    from ..plumbing import check_output_dir
    from ..tasks import REPORT_FILE, check_export_dest, generate_tasks, tasks_dir
    from ..tasks import export_widesearch as export_ws
    from ..world import open_world

    with user_errors():
        if kind not in ("all", "table", "multihop"):
            raise TasksError(f"unknown --kind {kind!r}; choose table, multihop or all")
        if show_report and not force and (tasks_dir(world_dir) / REPORT_FILE).is_file() and export_widesearch is None:
            open_world(world_dir)
            _tasks_report(world_dir)
            return
        if export_widesearch is not None:
            check_output_dir(export_widesearch, "WideSearch export folder")
            check_export_dest(export_widesearch, force)
        info = open_world(world_dir)
        opts = info.world.spec.stages.tasks
        if paraphrase:
            opts = opts.model_copy(update={"paraphrase": True})
        kinds = ("table", "multihop") if kind == "all" else (kind,)
        progress, on_progress = progress_bars("tasks")
        with writing(world_dir), progress:
            report = generate_tasks(world_dir, opts, kinds=kinds, n_table=n, n_multihop=n, seed=seed, force=force,
                                    model=model if paraphrase else None, on_progress=on_progress)
        exported = export_ws(world_dir, export_widesearch, force=True) if export_widesearch is not None else None
    t = Table(title=f"tasks (seed {report.seed}, {report.seconds:.1f} s, {report.searches:,} searches)")
    for c in ("kind", "kept", "drawn", "dropped: reason"):
        t.add_column(c, justify="left" if c in ("kind", "dropped: reason") else "right")
    for k in report.kept:
        reasons = ", ".join(f"{r} {c:,}" for r, c in report.dropped[k].items()) or "-"
        t.add_row(k, f"{report.kept[k]:,}", f"{report.drawn[k]:,}", reasons)
    console.print(t)
    if report.paraphrased:
        console.print(f"paraphrase: {report.paraphrased['accepted']:,} accepted, {report.paraphrased['rejected']:,} "
                      "rejected (template question kept)")
    short = [k for k in report.kept if report.kept[k] < (n if n is not None else getattr(opts, k))]
    if short:
        err_console.print(f"[yellow]fewer {' and '.join(short)} tasks than asked: the world has too few distinct, "
                          "reachable candidates (see the reasons above; raise stages.tasks.max_attempts or plan a larger world)")
    console.print(f"wrote {world_dir / 'tasks'}" + (f"; WideSearch files ({exported:,} tasks) in {export_widesearch}"
                                                   if exported is not None else ""))
    if show_report:
        _tasks_report(world_dir)


def _tasks_report(world_dir: Path) -> None:
    """The tasks' distribution beside WideSearch's figures (worldforge tasks --report)."""
    from ..tasks import comparison_rows, distribution, read_tasks, reference, tasks_dir

    with user_errors():
        mine = distribution(tasks_dir(world_dir), read_tasks(world_dir))
        leak = _split_leak(world_dir)
    ref = reference()
    t = Table(title=f"tasks in {world_dir} beside WideSearch")
    t.add_column("measure")
    t.add_column("WideSearch")
    t.add_column("these tasks")
    for row in comparison_rows(mine, ref):
        t.add_row(*row)
    if leak is not None:
        t.add_row("leak (held-out evidence pages opened in training)", "-", leak)
    wide = Console(width=max(console.width, 150))  # a wide table: wrapped cells would not read
    wide.print(t)
    wide.print(f"WideSearch figures: {ref['source']}", soft_wrap=True)


def _split_leak(world_dir: Path) -> str | None:
    """The held-out splits' leak over the world's rollout, as the export measures it (None: no
    held-out split; said so when there are no trajectories yet)."""
    from ..export import held_out_pages, split_leak
    from ..rollout import is_rolled_out, load_tasks, read_trajectories

    tasks = load_tasks(world_dir)
    splits = {t.id: t.record.get("split", "train") for t in tasks}
    if set(splits.values()) <= {"train"}:
        return None
    held = held_out_pages(Path(world_dir), tasks, splits)
    pages = ", ".join(f"{s} {len(v):,}" for s, v in held.items())
    if not is_rolled_out(world_dir):
        return f"no rollout yet (held-out evidence pages: {pages})"
    by_split, dropped = split_leak(held, read_trajectories(world_dir), splits)
    got = ", ".join(f"{s} {v['opened_in_training']:,} of {v['pages']:,}" for s, v in by_split.items())
    return got + (f"; {len(dropped)} training task(s) the export drops for it" if dropped else "")


def _rollout_table(r) -> Table:
    s = r.stats
    t = Table(title=f"rollout ({r.policy}, seed {r.seed}, {r.seconds:.1f} s)")
    t.add_column("measure")
    t.add_column("value", justify="right")
    rows = [("tasks", f"{r.tasks:,}"), ("trajectories kept", f"{r.trajectories:,}"), ("rejected (below min_reward)", f"{r.rejected:,}"),
            ("mean reward", f"{s['reward_mean']:.4f}"), ("success rate", f"{s['success_rate']:.4f}"),
            ("mean turns", f"{s['turns_mean']:.2f}"), ("tool calls", f"{s['tool_calls']:,}"),
            ("tool calls/s", f"{r.steps / r.seconds:,.0f}" if r.seconds else "-"),
            ("perturbations", ", ".join(f"{k} {v:,}" for k, v in s["perturbations"].items()) or "-"),
            ("failed or malformed calls", f"{s['errors']:,}"), ("episode ends", ", ".join(f"{k} {v:,}" for k, v in s["ends"].items()))]
    c = s.get("context") or {}
    if c:
        rows.append((f"segment tokens (p50 / p95 / max; budget {c['budget'] or 'none'})",
                     f"{c['segment_p50']:,} / {c['segment_p95']:,} / {c['segment_max']:,}"))
        rows.append(("trajectories that wrote a research state", f"{c['compacted_trajectories']:,} ({c['compactions']:,} states, "
                     f"{c['segments']:,} segments)"))
    if s.get("token_counter"):
        rows.append(("tokens counted with", s["token_counter"]))
    if "rejection" in s:
        rj = s["rejection"]
        rows.append((f"rejection sampling (reward >= {rj['min_reward']})",
                     f"kept {rj['kept']:,}, dropped {rj['dropped']:,}; {len(rj['tasks_without_a_kept_trajectory']):,} tasks left without one"))
    if "agent" in s:
        a = s["agent"]
        rows += [("LLM requests", f"{a['requests']:,}"), ("lockstep rounds", f"{a['rounds']:,}"),
                 ("prompt / output tokens", f"{a['prompt_tokens']:,} / {a['output_tokens']:,}"),
                 ("prefix-cache hit tokens", f"{a['cached_tokens']:,}")]
    for k, v in rows:
        t.add_row(k, v)
    return t


@command()
def rollout(
    world_dir: Path = typer.Argument(..., help="A world folder with tasks, e.g. build/demo"),
    policy: str = typer.Option(None, "--policy", "-p", help="oracle (default) or vllm. Overrides stages.rollout.policy."),
    model: str = typer.Option(None, "--model", "-m", help="vllm policy: local model folder or hub id."),
    parser: str = typer.Option(None, "--parser", help="vllm policy: vLLM tool parser (hermes, qwen3_xml, llama3_json, ...)."),
    seed: int = typer.Option(None, "--seed", "-s", min=0, help="Rollout and perturbation seed (default: the world's seed)."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace existing trajectories."),
    tokenizer: str = typer.Option(None, "--tokenizer", callback=not_blank, help="A tokenizer.json file or a model folder holding one: counts "
                                  "tokens (lengths, the context budget) with it. Default: stages.rollout.tokenizer, else "
                                  "worldforge's script-aware estimate (docs/performance.md)."),
    ray: bool = ray_option(),
    ray_address: str = ray_address_option(),
    ray_cpus: int = ray_cpus_option(),
    workers: int = workers_option(),
) -> None:
    """Run a policy on every task in the simulated web (with the spec's perturbations) and store
    the trajectories in WORLD_DIR/rollout/. An interrupted rollout resumes where it stopped.
    The oracle researches from the question and what it reads only (docs/concepts/oracle.md)."""
    from ..rollout import run_rollout

    with user_errors():
        progress, on_progress = progress_bars("rollout")
        with writing(world_dir), cluster_for(ray, ray_address, ray_cpus, workers), progress:
            r = run_rollout(world_dir, policy=policy, model=model, parser=parser, seed=seed, force=force,
                            on_progress=lambda d, n: on_progress("tasks", d, n), tokenizer=tokenizer)
    console.print(_rollout_table(r))
    console.print(f"wrote {world_dir / 'rollout'} (export it with `worldforge export {world_dir}`)")


@command()
def export(
    world_dir: Path = typer.Argument(..., help="A world folder with trajectories, e.g. build/demo"),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="Root folder; the dataset goes to OUT/<world>/<version>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace a different dataset version in the destination."),
    tokenizer: str = typer.Option(None, "--tokenizer", callback=not_blank, help="A Hugging Face tokenizer (name or folder) to count the card's "
                                  "token lengths and size the trainer kits (default: stages.export.tokenizer, else a "
                                  "worldforge's script-aware estimate, on the safe side)."),
    ray: bool = ray_option(),
    ray_address: str = ray_address_option(),
    ray_cpus: int = ray_cpus_option(),
    workers: int = workers_option(),
) -> None:
    """Export tasks and trajectories as a Hugging Face dataset: Parquet + JSONL (SFT and RL),
    WideSearch task files, trainer kits (verl, TRL, a neutral environment), a dataset card
    with a training section, and a manifest with content hashes."""
    from ..export import export_dataset

    with user_errors():
        progress, on_progress = progress_bars("export")
        with writing(world_dir), cluster_for(ray, ray_address, ray_cpus, workers), progress:
            r = export_dataset(world_dir, out, force=force, tokenizer=tokenizer, on_progress=on_progress)
    t = Table(title=f"dataset {r.path} (fingerprint {r.fingerprint})")
    for c in ("format", *("train", "validation", "test")):
        t.add_column(c, justify="right" if c != "format" else "left")
    for fmt, v in r.rows.items():
        t.add_row(fmt, *(f"{v.get(s, 0):,}" for s in ("train", "validation", "test")))
    console.print(t)
    g = r.grounding or {}
    if g.get("samples"):
        console.print(f"grounding: {g['samples'] - g['failed']:,} of {g['samples']:,} SFT samples passed ({g['unseen_opens']} pages "
                      f"opened unseen, {100 * g['visible_cell_share']:.1f} % of answer cells visible, {g['contradicted']} narration "
                      f"counts contradicting the actions); failing samples are not exported")
    console.print(f"wrote {r.files:,} files ({r.bytes / 1e6:.1f} MB) to {r.path}" + (" (replaced the earlier export)" if r.replaced else ""))


@command()
def run(
    spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Working folder: one sub-folder per world."),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="Datasets go to OUT/<world>/<version>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace an export folder that holds another version of the dataset."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say which stages are up to date and which would run (and why), then stop."),
    ray: bool = ray_option(),
    ray_address: str = ray_address_option(),
    ray_cpus: int = ray_cpus_option(),
    workers: int = workers_option(),
) -> None:
    """Run every stage end to end: plan, render (pages + search index), tasks, rollout and export.
    Stages whose inputs are unchanged and whose outputs are intact are skipped, so an
    interrupted run resumes; the run first says which stages will run and why. The dataset is
    byte-identical to an uninterrupted run."""
    from ..run import run_pipeline

    t0 = time.perf_counter()
    progress, on_progress = progress_bars("run")

    def show_plan(decisions) -> None:
        style = {"skip": "green", "run": "yellow", "depends": "cyan"}
        for d in decisions:
            word = {"skip": "up to date", "run": "will run", "depends": "may run"}[d.action]
            err_console.print(f"  [{style[d.action]}]{d.stage:<8} {word}[/]" + ("" if d.action == "skip" else f": {escape(d.reason)}"),
                              soft_wrap=True)
        if not dry_run:
            progress.start()

    try:
        with cluster_for(ray and not dry_run, None if dry_run else ray_address, ray_cpus, 1 if dry_run else workers):
            report = run_pipeline(spec, build_dir, out, force=force, dry_run=dry_run, on_plan=show_plan, on_progress=on_progress)
    finally:
        progress.stop()
    if dry_run:
        return
    t = Table(title=f"worldforge run {spec} ({time.perf_counter() - t0:.1f} s)")
    for c in ("stage", "status", "seconds", "result"):
        t.add_column(c, justify="right" if c == "seconds" else "left")
    for s in report.stages:
        t.add_row(s.stage, s.status, f"{s.seconds:.1f}", s.summary)
    console.print(t)
    console.print(f"[green]dataset[/] {report.dataset} (world in {report.world})")


@command()
def farm(
    spec: Path = typer.Argument(..., help="Farm spec YAML, e.g. worlds/mini.farm.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Working folder; the farm's worlds go to "
                                   "BUILD_DIR/<farm>/worlds/."),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="The release goes to OUT/<farm>/<release>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace a release folder that holds a different dataset."),
    ray: bool = ray_option(),
    ray_address: str = ray_address_option(),
    ray_cpus: int = ray_cpus_option(),
    workers: int = workers_option(),
) -> None:
    """Build every world of a farm (with `run`: resumable, up-to-date worlds are skipped; in
    parallel under --ray) and merge their tasks and trajectories into one dataset release with
    world-level splits, deduplicated across worlds and against the farm's earlier releases."""
    from ..farm import load_farm, run_farm

    load_farm(spec)  # a bad farm spec fails before any cluster starts
    t0 = time.perf_counter()

    def on_world(res: dict) -> None:
        raise_if_interrupted()  # a Ctrl-C a library swallowed
        what = ", ".join(res["ran"]) or "up to date"
        err_console.print(f"  world {escape(res['name'])} ({res['split']}): {escape(what)}, {res['seconds']:.1f} s")

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # every world's spec is checked before anything is built (300 worlds: minutes, not silence)
    with Progress(TextColumn("[bold]farm[/] checking world specs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True) as progress:
        checking = progress.add_task("check", total=None)

        def on_checked(done: int, total: int) -> None:
            raise_if_interrupted()
            progress.update(checking, completed=done, total=total)
            if done == total:
                progress.stop()

        with cluster_for(ray, ray_address, ray_cpus, workers):
            r = run_farm(spec, build_dir, out, force=force, on_world=on_world, on_checked=on_checked)
    t = Table(title=f"worldforge farm {spec} ({time.perf_counter() - t0:.1f} s)")
    for c in ("world", "split", "entities", "tasks", "kept", "dropped"):
        t.add_column(c, justify="left" if c in ("world", "split", "dropped") else "right")
    for w in r.worlds:
        t.add_row(w["name"], w["split"], f"{w['entities']:,}", f"{w['tasks']:,}", f"{w['kept']:,}",
                  "; ".join(f"{n:,} {k}" for k, n in w["dropped"].items()) or "-")
    console.print(t)
    rows = ", ".join(f"{fmt} " + "/".join(f"{s} {n:,}" for s, n in v.items()) for fmt, v in r.rows.items())
    console.print(f"[green]release[/] {r.path} (fingerprint {r.fingerprint}): {rows}"
                  + (f"; deduplicated against {', '.join(r.previous)}" if r.previous else ""))


@command()
def score(
    tasks: Path = typer.Argument(..., help="A WideSearch task folder: tasks.jsonl and gold/<instance_id>.csv"),
    responses: Path = typer.Argument(..., help="JSONL of {\"instance_id\": ..., \"response\": ...}"),
    world: Path = typer.Option(None, "--world", "-w", help="A planned world: align names through its aliases "
                               "(default: the world holding TASKS, for WORLD_DIR/tasks)."),
    json_out: Path = typer.Option(None, "--json", help="Also write per-task scores and the average here."),
    lenient: bool = typer.Option(False, "--lenient", help="Score as worldforge did before matching WideSearch: the "
                                 "last table, partial credit for missing or extra columns, keys de-duplicated after "
                                 "normalising, aliases in any name column, any whitespace ignored, Chinese cells read "
                                 "the Chinese way (docs/concepts/scoring.md)."),
    as_of: str = typer.Option(None, "--as-of", metavar="YYYY-MM-DD", help="Read a date without its month or year (a "
                              "bare year) as of this day, as dateparser does as of today (default: today, as "
                              "WideSearch's evaluator; the rollout reward uses the world's date)."),
) -> None:
    """Score responses with WideSearch's metrics, no LLM: success, row and item precision/recall/F1.
    By default exactly as WideSearch's own evaluator scores them (its pandas reading of the
    table, its preprocess steps and metrics, dateparser for dates), with its two LLM calls
    replaced: keys align through the world's aliases, list columns by `set_match`.
    --lenient scores as worldforge did before (docs/concepts/scoring.md lists every difference)."""
    import datetime as dt
    import json

    from ..tasks import LENIENT, WIDESEARCH, score_files, world_aliases

    mode = LENIENT if lenient else WIDESEARCH
    with user_errors():
        try:
            day = dt.date.fromisoformat(as_of) if as_of else None
        except ValueError:
            raise WorldforgeError(f"--as-of {as_of!r} is not a date; write it YYYY-MM-DD, e.g. 2025-06-30") from None
        if world is None and (tasks.parent / "world.json").is_file():
            world = tasks.parent  # WORLD_DIR/tasks: align keys through that world's aliases
        aliases = world_aliases(world) if world else None
        scores, avg = score_files(tasks, responses, aliases, mode, as_of=day)
    t = Table(title=f"scores ({len(scores)} tasks, {mode} mode)",
              caption="parsed: no = no table; columns = a table whose columns are not the required ones; error = "
                      "a table WideSearch's evaluator cannot read (a row with too many cells, an unclosed quote); "
                      "--json gives each task's note")
    cols = ("task", "parsed", "success", "row P", "row R", "row F1", "item P", "item R", "item F1", "rows gold/pred")
    for c in cols:
        t.add_column(c, justify="left" if c == "task" else "right")
    for s in scores:
        parsed = "error" if s.note.startswith("evaluator error") else ("yes" if s.columns_match else "columns") if s.parsed else "no"
        t.add_row(s.instance_id, parsed, f"{s.success:.0f}", f"{s.row_precision:.3f}", f"{s.row_recall:.3f}",
                  f"{s.row_f1:.3f}", f"{s.item_precision:.3f}", f"{s.item_recall:.3f}", f"{s.item_f1:.3f}",
                  f"{s.gold_rows}/{s.predicted_rows}")
    t.add_row("[bold]average", "", f"{avg['success']:.3f}", f"{avg['row_precision']:.3f}", f"{avg['row_recall']:.3f}",
              f"{avg['row_f1']:.3f}", f"{avg['item_precision']:.3f}", f"{avg['item_recall']:.3f}", f"{avg['item_f1']:.3f}", "")
    console.print(t)
    if json_out:
        tmp = json_out.with_name(json_out.name + ".tmp")
        tmp.write_text(json.dumps({"mode": mode, "as_of": (day or dt.date.today()).isoformat(), "average": avg,
                                   "tasks": [s.as_dict() for s in scores]}, indent=2, ensure_ascii=False))
        tmp.replace(json_out)

"""The `worldforge` command line. Thin: each command parses options, calls one stage
function and renders the result; heavy imports happen inside the commands."""

from __future__ import annotations

import functools
import time
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .errors import INTERRUPTED, SpecError, WorldforgeError
from .plumbing import load_native_libraries, raise_if_interrupted, watched_interrupts

app = typer.Typer(
    name="worldforge",
    help="Fictional-world synthetic data for training search and browsing agents.\n\n"
    "`worldforge run worlds/demo.yaml` does everything: plan a world from a spec, render its web "
    "pages and search index, pose WideSearch-style tasks, roll out an agent in the perturbed web, "
    "and export a dataset. Each stage also has its own command.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


@contextmanager
def _user_errors():
    """Turn user-fixable errors into a red message and their exit code; never a traceback.
    Ctrl-C (Python's or DuckDB's "query interrupted") exits 130; a filesystem error (disk
    full, permission denied) is one line naming the file."""
    load_native_libraries()  # with Ctrl-C held: an interrupt inside DuckDB's initialisation aborts the process
    import duckdb

    with watched_interrupts() as interrupt_seen:
        try:
            try:
                yield
            except Exception:
                if interrupt_seen():  # whatever a library made of the Ctrl-C (an error of its own), it is one
                    raise KeyboardInterrupt from None
                raise
        except SpecError as exc:
            # One line per problem (file: field: message (got value)), so batch logs stay greppable.
            n = len(exc.problems)
            err_console.print(f"[bold red]error:[/] {n} problem{'s' if n != 1 else ''} in the world spec; nothing was written",
                              soft_wrap=True)
            for p in exc.problems:
                err_console.print(f"  [red]-[/] {escape(str(p))}", soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except WorldforgeError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except (KeyboardInterrupt, duckdb.InterruptException):
            _interrupted()
        except RuntimeError as exc:  # DuckDB's "Query interrupted" reaches Python as a RuntimeError in some calls
            if "interrupted" not in str(exc).lower():
                raise
            _interrupted()
        except duckdb.IOException as exc:
            err_console.print(f"[bold red]error:[/] a database could not be read or written ({escape(str(exc).splitlines()[0])}); "
                              "if it is damaged, rebuild the stage that wrote it with --force", soft_wrap=True)
            raise typer.Exit(1) from None
        except duckdb.InvalidInputException as exc:  # a page file damaged inside (a footer is checked on open)
            if "Failed to read file" not in str(exc):
                raise
            err_console.print(f"[bold red]error:[/] a file is damaged ({escape(str(exc).splitlines()[0])}); rebuild the stage "
                              "that wrote it with --force, or `worldforge run SPEC`, which finds damaged outputs by their digests",
                              soft_wrap=True)
            raise typer.Exit(1) from None
        except (MemoryError, duckdb.OutOfMemoryException) as exc:  # numpy's "Unable to allocate 12.3 GiB for an array ..."
            what = (str(exc).strip().splitlines() or ["no detail"])[0][:300]
            err_console.print(f"[bold red]error:[/] out of memory ({escape(what)}); lower the world's counts or the count "
                              "ranges that multiply them up (`worldforge validate SPEC` shows the sizes), or run on a "
                              "machine with more memory; the stage's output was not written", soft_wrap=True)
            raise typer.Exit(1) from None
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            err_console.print(f"[bold red]error:[/] {escape(exc.strerror or str(exc))}{escape(where)}; check the folder's "
                              "permissions and free space", soft_wrap=True)
            raise typer.Exit(1) from None


def _interrupted():
    err_console.print(f"[yellow]{INTERRUPTED}[/]")
    _state["interrupt_reported"] = True
    raise typer.Exit(130)


_state = {"interrupt_reported": False}


def _command(*args, **kwargs):
    """`app.command`, with the whole command (imports, work and printing) under `_user_errors`."""

    def register(fn):
        @functools.wraps(fn)
        def guarded(*a, **k):
            with _user_errors():
                return fn(*a, **k)

        return app.command(*args, **kwargs)(guarded)

    return register


def _ray_flag():
    return typer.Option(False, "--ray", help="Run the stage's shards as Ray tasks on a local cluster started for this "
                        "command (needs the ray extra); the output is the same bytes as without it.")


def _not_blank(value: str | None) -> str | None:
    """An option given as "" is a mistake (an unset shell variable), not the option left out."""
    if value is not None and not value.strip():
        raise typer.BadParameter("is empty; give a value, or leave the option out")
    return value


def _ray_address():
    return typer.Option(None, "--ray-address", callback=_not_blank, help="Run on an existing Ray cluster (e.g. "
                        "ray://head:10001 or auto) instead of starting a local one.")


def _ray_cpus():
    return typer.Option(None, "--ray-cpus", min=1, help="--ray: CPUs (workers) of the local cluster (default: all of this machine's).")


def _workers():
    return typer.Option(None, "--workers", "-w", min=1, help="Processes of this machine that run the stage's shards "
                        "(render shards, rollout chunks, export writers, a farm's worlds); 1 runs them in this process. "
                        "Default: $WORLDFORGE_WORKERS, else one per core. The output is the same bytes with any number.")


@contextmanager
def _cluster(ray: bool, address: str | None, cpus: int | None, workers: int | None = None):
    """The stage inside runs its shards on Ray when --ray or --ray-address is given, else in
    `workers` processes of this machine (default: one per core)."""
    from .cluster import check_workers, default_workers, use_cluster

    n = 1 if ray or address else (check_workers(workers) if workers else default_workers())
    if not ray and not address and n <= 1:
        yield
        return
    with use_cluster(ray=ray, address=address, num_cpus=cpus, workers=n) as ex:
        if ray or address:
            err_console.print(f"[dim]running on {escape(ex.name)}[/]")
        yield


@contextmanager
def _writing(world_dir: Path):
    """Hold a world's build lock and check its folder can take output, before any work."""
    from .plumbing import BuildLock, check_output_dir

    check_output_dir(world_dir, "world folder")
    with BuildLock(world_dir):
        yield


def _counts_table(title: str, rows, headers=("name", "count")) -> Table:
    t = Table(title=title)
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if i else "left")
    for r in rows:
        t.add_row(*[f"{v:,}" if isinstance(v, int) else str(v) for v in r])
    return t


@_command()
def validate(spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml")) -> None:
    """Validate a world spec and its domain packs; report every problem at once (exit code 2)."""
    from .world import all_invariants, count_warnings, expected_counts, lexicon_warnings, load_world

    with _user_errors():
        world = load_world(spec)
    exp = expected_counts(world)
    rows = [(t, world.pack_of_type(t), "root" if world.types[t].parent is None
             else f"{'editions of' if world.types[t].parent.series else 'per'} {world.types[t].parent.type}",
             int(round(exp[t][1]))) for t in world.types]
    console.print(_counts_table(f"world '{world.spec.name}' (seed {world.spec.seed}, as of {world.spec.as_of})",
                                rows, ("type", "pack", "sized", "expected count")))
    console.print(f"[green]valid:[/] {len(world.packs)} pack(s), {len(world.types)} types, "
                  f"{len(world.relations)} relations, {len(all_invariants(world))} invariants")
    for _, w in count_warnings(world) + lexicon_warnings(world):
        err_console.print(f"[yellow]warning:[/] {w}")


@_command()
def plan(
    spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Folder that holds one sub-folder per world."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace an existing complete world."),
) -> None:
    """Plan a world: generate entities, attributes, relations and aliases, write
    <build-dir>/<name>/world.duckdb, check every invariant, then mark it complete."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .world import count_steps, count_warnings, ensure_writable, heavy_drops, load_world, plan_world, repairs

    with _user_errors():
        world = load_world(spec)
        ensure_writable(build_dir, world.spec.name, force)
    for _, w in count_warnings(world):
        err_console.print(f"[yellow]warning:[/] {w}")
    with _writing(Path(build_dir) / world.spec.name), _user_errors():
        ensure_writable(build_dir, world.spec.name, force)  # again, under the lock
        t0 = time.perf_counter()
        total = count_steps(world) + 2
        with Progress(TextColumn("[bold]plan[/] {task.description:<40}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err_console, transient=False) as progress:
            task = progress.add_task("start", total=total)
            first = [True]

            def step(desc: str) -> None:
                raise_if_interrupted()  # a Ctrl-C a library swallowed
                if not first[0]:
                    progress.advance(task)
                first[0] = False
                progress.update(task, description=desc)

            info = plan_world(world, build_dir, force=force, on_step=step)
            progress.update(task, completed=total, description="done")
    secs = time.perf_counter() - t0
    m = info.manifest
    n_ent = sum(m["counts"].values())
    console.print(_counts_table("entities", sorted(m["counts"].items()), ("type", "count")))
    rep = repairs(m)
    if rep:
        console.print(_counts_table("repairs (to keep every invariant)",
                                    [(r.what, r.count, f"{r.count / r.drawn:.0%} of {r.drawn:,} drawn" if r.drawn else "")
                                     for r in rep], ("what", "count", "share")))
    console.print(f"[green]planned[/] {info.path}: {n_ent:,} entities, {sum(m['relations'].values()):,} links, "
                  f"{m['aliases']:,} aliases, {m['facts']:,} facts in {secs:.1f} s; all invariants hold")
    for w in heavy_drops(m):
        err_console.print(f"[yellow]warning:[/] {w}")


@_command()
def check(world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo")) -> None:
    """Re-verify every invariant of a stored world and list violations (exit 1 if any)."""
    from .world import check_world

    with _user_errors():
        n, violations = check_world(world_dir)
    if not violations:
        console.print(f"[green]ok:[/] {n} invariants hold in {world_dir}")
        return
    t = Table(title=f"[red]{len(violations)} of {n} invariants violated")
    for col in ("invariant", "description", "rows", "examples"):
        t.add_column(col, overflow="fold")
    for v in violations:
        t.add_row(v.name, v.description, str(v.count) if v.count >= 0 else "not checked", "\n".join(v.examples))
    console.print(t)
    raise typer.Exit(1)


_AUDIT_COLUMNS = {
    "ages": [("event", "event"), ("entity", "age of"), ("n", "n"), ("min", "min age"), ("median", "median"), ("max", "max"),
             ("before_start", "before start"), ("after_end", "after end")],
    "anniversaries": [("event", "event"), ("reference", "on an anniversary of"), ("n", "n"), ("hits", "hits"), ("share", "share")],
    "lifespans": [("type", "type"), ("start", "start"), ("end", "end"), ("n", "n"), ("ended_share", "ended"), ("min", "min life"),
                  ("median", "median"), ("max", "max"), ("oldest_going", "oldest going"),
                  ("cohort_85y_ended_share", "ended, started 85y+ ago")],
    "part_whole": [("part", "part"), ("whole", "whole"), ("via", "via"), ("declared", "declared"), ("n", "n"),
                   ("max_ratio", "max part/whole"), ("parts_over_whole", "parts > whole"), ("max_sum_ratio", "max sum/whole"),
                   ("wholes_over_sum", "wholes < sum")],
    "derived": [("subject", "derived"), ("n", "n"), ("agree", "agree"), ("share", "share")],
    "requires": [("subject", "requirement"), ("n", "links"), ("agree", "covered"), ("share", "share")],
    "names": [("subject", "name part"), ("n", "n"), ("agree", "agree"), ("share", "share")],
    "given": [("subject", "category given"), ("n", "n"), ("agree", "allowed"), ("share", "share")],
    "concurrency": [("relation", "relation"), ("side", "per"), ("n", "entities"), ("max_concurrent", "max at once"),
                    ("with_concurrent", "with 2+ at once"), ("now_median", "median open today")],
    "degrees": [("relation", "relation"), ("n", "links"), ("out_max", "out max"), ("out_p99", "out p99"), ("in_max", "in max"),
                ("in_p99", "in p99"), ("targets_without", "targets without"), ("sources_without", "sources without")],
    "locality": [("subject", "links within one group"), ("n", "links"), ("same", "same"), ("share", "share")],
    "link_values": [("subject", "a link's own attribute"), ("n", "links"), ("filled", "with a value"), ("median", "median"),
                    ("p90", "p90"), ("max", "max"), ("clashes", "clashes"), ("targets_without", "targets without"),
                    ("falls", "falls"), ("early_top", "top value early"), ("top_share", "commonest value's share"),
                    ("unheld", "not held then")],
    "ratios": [("subject", "figure per unit of another"), ("n", "n"), ("min", "min"), ("p01", "p01"), ("median", "median"),
               ("p99", "p99"), ("max", "max")],
}


@_command()
def audit(
    world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo"),
    json_out: bool = typer.Option(False, "--json", help="Print the whole report as JSON instead of tables."),
    top: int = typer.Option(12, "--top", min=1, help="Anniversary rows shown (highest shares first)."),
) -> None:
    """A plausibility report: ages at each kind of event, events on anniversaries, lifespans,
    part/whole ratios, derived values against their relations, covered links, names and
    categories against the attributes that pick them, concurrent roles, degrees, links within
    one group and figures drawn per unit of another. Exit 1 when a threshold a pack declares is broken,
    2 when one judges no row (its `match` names nothing the report measures)."""
    import json

    from .world import SECTIONS, audit_world

    with _user_errors():
        report = audit_world(world_dir)
    if json_out:
        typer.echo(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        for section in SECTIONS:
            rows = report.sections.get(section, [])
            if not rows:
                continue
            shown = rows[:top] if section == "anniversaries" else rows
            more = f" (the {top} highest of {len(rows)})" if len(shown) < len(rows) else ""
            t = Table(title=f"{section}{more}", title_justify="left")
            cols = _AUDIT_COLUMNS[section]
            for i, (_, head) in enumerate(cols):
                t.add_column(head, justify="left" if i == 0 or head in ("age of", "on an anniversary of", "via", "per", "whole",
                                                                        "start", "end") else "right", overflow="fold")
            for r in shown:
                t.add_row(*[_audit_cell(k, r.get(k)) for k, _ in cols])
            console.print(t)
    if report.unmatched:
        err_console.print(f"[bold red]error:[/] {len(report.unmatched)} audit threshold(s) judge no row (a threshold that "
                          "matches nothing would hold whatever the world does):", soft_wrap=True)
        for u in report.unmatched:
            have = ", ".join(f"'{x}'" for x in u["subjects"][:12]) + (" ..." if len(u["subjects"]) > 12 else "")
            err_console.print(f"  [red]-[/] pack {escape(u['pack'])}: {u['section']} {u['metric']} with match "
                              f"'{escape(u['match'])}': the section's rows of this pack are "
                              f"{escape(have) if have else 'none (the section measures nothing of this pack)'}; "
                              "fix `match` in the pack's `audit:` or remove the threshold", soft_wrap=True)
        raise typer.Exit(2)
    if report.broken:
        err_console.print(f"[bold red]{len(report.broken)} audit threshold(s) broken:[/]")
        for b in report.broken:
            bound = " and ".join(x for x in (f">= {b['min']}" if b["min"] is not None else "",
                                              f"<= {b['max']}" if b["max"] is not None else "") if x)
            err_console.print(f"  [red]-[/] {escape(b['section'])}: {escape(b['subject'])}: {b['metric']} = {b['value']} "
                              f"(pack {b['pack']} wants {bound}; n = {b['n']})", soft_wrap=True)
        raise typer.Exit(1)
    if not json_out:
        n = len(report.thresholds)
        console.print(f"[green]ok:[/] {n} audit threshold{'s' if n != 1 else ''} hold in {world_dir}")


def _audit_cell(key: str, v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float) and ("share" in key or key == "share"):
        return f"{v:.1%}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


@_command()
def inspect(
    world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo"),
    samples: int = typer.Option(2, "--samples", "-n", min=0, help="Sample entities to show, per type."),
    type_: list[str] = typer.Option(None, "--type", "-t", help="Only show samples of these types."),
) -> None:
    """Counts per type and relation, degree statistics, and sample entities with their facts."""
    from .world import open_world

    with _user_errors():
        info = open_world(world_dir)
        world = info.world
        unknown = [t for t in (type_ or []) if t not in world.types]
        if unknown:
            raise WorldforgeError(f"unknown type(s) {', '.join(unknown)}; known: {', '.join(world.types)}")
    m = info.manifest
    console.print(f"[bold]{world.spec.name}[/] seed {world.spec.seed}, as of {world.spec.as_of}, "
                  f"packs {', '.join(world.packs)}; {sum(m['counts'].values()):,} entities, {m['facts']:,} facts, "
                  f"{m['aliases']:,} aliases")
    console.print(_counts_table("entities per type", [(t, m["counts"][t]) for t in world.types], ("type", "count")))
    with info.connect() as con:
        deg = Table(title="relations and degree statistics")
        for col in ("relation", "source -> target", "card.", "links", "sources linked", "out mean", "out max", "in mean", "in max"):
            deg.add_column(col, justify="left" if col in ("relation", "source -> target", "card.") else "right")
        for r, rs in world.relations.items():
            q = f'"rel_{r}"'
            links, srcs, omean, omax = con.execute(
                f"SELECT (SELECT count(*) FROM {q}), count(*), coalesce(avg(n), 0), coalesce(max(n), 0) "
                f"FROM (SELECT source, count(*) n FROM {q} GROUP BY source)").fetchone()
            imean, imax = con.execute(
                f"SELECT coalesce(avg(n), 0), coalesce(max(n), 0) FROM (SELECT target, count(*) n FROM {q} GROUP BY target)").fetchone()
            deg.add_row(r, f"{rs.source} -> {rs.target}", rs.cardinality, f"{links:,}", f"{srcs:,}",
                        f"{omean:.2f}", str(omax), f"{imean:.2f}", str(imax))
        console.print(deg)
        sampled = [(t, r[0]) for t in type_ or list(world.types)
                   for r in con.execute(f'SELECT id FROM "{t}" ORDER BY id LIMIT ?', [samples]).fetchall()]
        ids = [eid for _, eid in sampled]
        # One pass over facts and aliases for every sampled entity; linked entities shown by name.
        names = " UNION ALL ".join(f'SELECT id AS entity, name FROM "{x}"' for x in world.types)
        facts: dict[str, list] = {eid: [] for eid in ids}
        for subj, p, v, vf, vt in con.execute(
                "SELECT f.subject, f.predicate, coalesce(n.name || ' (' || f.value || ')', f.value), f.valid_from, f.valid_to "
                f"FROM facts f LEFT JOIN ({names}) n ON f.value_type = 'entity' AND n.entity = f.value "
                "WHERE list_contains(?, f.subject) ORDER BY f.subject, f.predicate, f.valid_from", [ids]).fetchall():
            facts[subj].append((p, v, vf, vt))
        aliases: dict[str, list[str]] = {eid: [] for eid in ids}
        for eid, alias in con.execute("SELECT entity_id, alias FROM aliases WHERE list_contains(?, entity_id) "
                                      "ORDER BY entity_id, alias", [ids]).fetchall():
            aliases[eid].append(alias)
        for t, eid in sampled:
            al = aliases[eid]
            ft = Table(title=f"{t} {eid}" + (f"  aliases: {', '.join(al)}" if al else ""), title_justify="left")
            for col in ("predicate", "value", "valid from", "valid to"):
                ft.add_column(col, overflow="fold")
            for p, v, vf, vt in facts[eid]:
                ft.add_row(p, v, str(vf) if vf else "", str(vt) if vt else ("current" if vf else ""))
            console.print(ft)


@_command()
def render(
    world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo"),
    backend: str = typer.Option(None, "--backend", help="template (default; no model) or vllm. Overrides stages.render.backend."),
    model: str = typer.Option(None, "--model", "-m", help="vllm backend: local model folder or hub id "
                              "(on a GPU: Qwen/Qwen-AgentWorld-35B-A3B)."),
    retries: int = typer.Option(None, "--retries", min=0, max=10, help="vllm: new-seed retries of a page that fails validation."),
    on_failure: str = typer.Option(None, "--on-failure", help="vllm: 'template' keeps the template page, 'reject' drops it."),
    batch_size: int = typer.Option(None, "--batch-size", min=1, help="vllm: pages per LLM.chat call (and per resumable shard)."),
    max_tokens: int = typer.Option(None, "--max-tokens", min=1, help="vllm: output token limit per page."),
    force: bool = typer.Option(False, "--force", "-f", help="Render again over an existing render."),
    report_only: bool = typer.Option(False, "--report", help="Print the variety report of an existing render "
                                     "(sentence skeletons, words per page kind) and stop; nothing is rendered."),
    ray: bool = _ray_flag(),
    ray_address: str = _ray_address(),
    ray_cpus: int = _ray_cpus(),
    workers: int = _workers(),
) -> None:
    """Render every page of a world (articles, profiles, news, directories) with provenance,
    then build its search index. An interrupted render resumes where it stopped."""
    from .web import render_world
    from .world import open_world

    if report_only:
        with _user_errors():
            v = _stored_variety(world_dir)
            console.print(_variety_table(v))
            if v.get("sources"):
                console.print(_sources_table(v["sources"]))
        return
    with _user_errors():
        info = open_world(world_dir)
        opts = info.world.spec.stages.render
        if backend is not None and backend not in ("template", "vllm"):
            raise WorldforgeError(f"unknown backend {backend!r}; choose --backend template or --backend vllm")
        if on_failure is not None and on_failure not in ("template", "reject"):
            raise WorldforgeError(f"unknown --on-failure {on_failure!r}; choose template or reject")
        changes = {k: v for k, v in {"retries": retries, "on_failure": on_failure, "batch_size": batch_size}.items() if v is not None}
        if max_tokens is not None:
            changes["sampling"] = opts.sampling.model_copy(update={"max_tokens": max_tokens})
        opts = opts.model_copy(update=changes)
        progress, on_progress = _progress_bars("render")
        with _writing(world_dir), _cluster(ray, ray_address, ray_cpus, workers), progress:
            report = render_world(world_dir, opts, backend=backend, model=model, force=force, on_progress=on_progress)
    t = Table(title=f"render report ({report.backend}{', ' + report.model if report.model else ''})")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for k in ("article", "profile", "news", "directory"):
        t.add_row(f"{k} pages", f"{report.kinds.get(k, 0):,}")
    t.add_row("pages", f"{report.pages:,}")
    if report.backend == "vllm":
        llm = report.llm
        for label, v in (("accepted", report.accepted), ("  of which after retries", report.accepted_after_retry),
                         ("pages retried (any outcome)", report.retried),
                         ("fell back to template", report.fallback), ("rejected", report.rejected),
                         ("requests", llm["requests"]), ("prompt tokens", llm["prompt_tokens"]),
                         ("output tokens", llm["output_tokens"]), ("prefix-cache hit tokens", llm["cached_tokens"])):
            t.add_row(label, f"{v:,}")
        t.add_row("prefix-cache share", f"{report.prefix_cache_share:.1%}")
        if llm["failures"]:
            t.add_row("failed checks", ", ".join(f"{k} {v:,}" for k, v in llm["failures"].items()))
    if report.resumed_shards:
        t.add_row("shards resumed", f"{report.resumed_shards} of {report.shards}")
    t.add_row("seconds", f"{report.seconds:.1f}")
    if report.phases:
        t.add_row("  by phase", ", ".join(f"{k} {v:.1f}" for k, v in report.phases.items()))
    console.print(t)
    if report.variety:
        console.print(_variety_table(report.variety))
        if report.variety.get("sources"):
            console.print(_sources_table(report.variety["sources"]))
    console.print(f"[green]rendered[/] {world_dir}: {report.pages:,} pages, indexed for search "
                  f"(try: worldforge search {world_dir} \"...\")")


def _stored_variety(world_dir: Path) -> dict:
    """The variety measures of a finished render (from render.json; measured now if it predates them)."""
    from .web import require_rendered, web_report
    from .world import open_world

    info = open_world(world_dir)  # a clear error for a folder that holds no world
    web = require_rendered(world_dir)
    import json

    try:
        stored = json.loads((web / "render.json").read_text())["report"].get("variety")
    except (OSError, ValueError, KeyError, TypeError):
        stored = None
    if stored and "sources" in stored:
        return stored
    return web_report(web, language=info.world.spec.language)  # measured now: the render predates some measures


def _variety_table(v: dict) -> Table:
    measured = f"{v['pages_measured']:,} of {v['pages']:,} pages" if v["pages_measured"] < v["pages"] else f"{v['pages']:,} pages"
    t = Table(title=f"how the web reads ({measured})")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("prose sentences", f"{v['sentences']:,}")
    t.add_row("distinct sentence skeletons", f"{v['skeletons']:,}")
    t.add_row("most common skeleton's share", f"{v['top_skeleton_share']:.1%}")
    t.add_row("sentences whose skeleton is on 10+ pages", f"{v['share_on_10_plus_pages']:.1%}")
    for k, d in v["kinds"].items():
        t.add_row(f"words per {k} (mean; p10-p90)", f"{d['mean_words']:.0f}; {d['p10_words']}-{d['p90_words']}")
    for name, share in (v.get("prose_slips") or {}).items():
        t.add_row(f"pages with a slip: {name}", f"{share:.1%}")
    ry = v.get("relative_years")
    if ry:
        t.add_row("'N years later' checked / counted wrong", f"{ry['judged']:,} / {ry['wrong']:,}")
    return t


def _sources_table(v: dict) -> Table:
    sampled = f", the facts of one entity in {v['sampled_every']:,}" if v["sampled_every"] > 1 else ""
    t = Table(title=f"where facts live ({v['entities']:,} entities with a page{sampled})")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("entities without an encyclopedia article", f"{v['without_article'] / max(1, v['entities']):.1%}")
    for what in ("attributes", "links"):
        d = v.get(what)
        if not d:
            continue
        t.add_row(f"{what}: facts", f"{d['facts']:,}")
        t.add_row("  stated on the encyclopedia", f"{d['on_encyclopedia']:.1%}")
        t.add_row("  stated only off it", f"{d['only_off']:.1%}")
        t.add_row("    profile or official site / directory / news",
                  f"{d['only_off_on_profile']:.1%} / {d['only_off_in_directory']:.1%} / {d['only_off_in_news']:.1%}")
    return t


@_command()
def search(
    world_dir: Path = typer.Argument(..., help="A rendered world folder, e.g. build/demo"),
    query: str = typer.Argument(..., help="Search words, e.g. \"companies headquartered in Hesheston\""),
    offset: int = typer.Option(0, "--offset", min=0, help="Index of the first result (10 per page: 0, 10, 20, ...)."),
) -> None:
    """Search a rendered world's web; prints results as the web_search tool returns them."""
    from .web import SearchEngine

    with _user_errors():
        engine = SearchEngine.for_world(world_dir)
        try:
            text = engine.web_search(query, offset=offset)
        finally:
            engine.close()
    console.print(text, markup=False, highlight=False, soft_wrap=True)


@_command("open")
def open_page(
    world_dir: Path = typer.Argument(..., help="A rendered world folder, e.g. build/demo"),
    url: str = typer.Argument(..., help="A page URL from search results."),
) -> None:
    """Open a page of a rendered world; prints its Markdown as the web_extractor tool returns it."""
    from .web import SearchEngine

    with _user_errors():
        engine = SearchEngine.for_world(world_dir)
        try:
            text = engine.web_extractor(url)
        finally:
            engine.close()
    console.print(text, markup=False, highlight=False, soft_wrap=True)



@_command()
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
    from .errors import TasksError
    from .plumbing import check_output_dir
    from .tasks import REPORT_FILE, check_export_dest, generate_tasks, tasks_dir
    from .tasks import export_widesearch as export_ws
    from .world import open_world

    with _user_errors():
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
        progress, on_progress = _progress_bars("tasks")
        with _writing(world_dir), progress:
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
    from .tasks import comparison_rows, distribution, read_tasks, reference, tasks_dir

    with _user_errors():
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
    from .export import held_out_pages, split_leak
    from .rollout import is_rolled_out, load_tasks, read_trajectories

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


def _progress_bars(label: str):
    """A rich Progress with one bar per named stage, and the callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    progress = Progress(TextColumn(f"[bold]{label}[/] " + "{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=err_console)
    bars: dict[str, int] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        raise_if_interrupted()  # a Ctrl-C a library swallowed
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total or None)
        progress.update(bars[stage], completed=done, total=total or None)

    return progress, on_progress


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


@_command()
def rollout(
    world_dir: Path = typer.Argument(..., help="A world folder with tasks, e.g. build/demo"),
    policy: str = typer.Option(None, "--policy", "-p", help="oracle (default) or vllm. Overrides stages.rollout.policy."),
    model: str = typer.Option(None, "--model", "-m", help="vllm policy: local model folder or hub id."),
    parser: str = typer.Option(None, "--parser", help="vllm policy: vLLM tool parser (hermes, qwen3_xml, llama3_json, ...)."),
    seed: int = typer.Option(None, "--seed", "-s", min=0, help="Rollout and perturbation seed (default: the world's seed)."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace existing trajectories."),
    tokenizer: str = typer.Option(None, "--tokenizer", callback=_not_blank, help="A tokenizer.json file or a model folder holding one: counts "
                                  "tokens (lengths, the context budget) with it. Default: stages.rollout.tokenizer, else "
                                  "worldforge's script-aware estimate (docs/performance.md)."),
    ray: bool = _ray_flag(),
    ray_address: str = _ray_address(),
    ray_cpus: int = _ray_cpus(),
    workers: int = _workers(),
) -> None:
    """Run a policy on every task in the simulated web (with the spec's perturbations) and store
    the trajectories in WORLD_DIR/rollout/. An interrupted rollout resumes where it stopped.
    The oracle researches from the question and what it reads only (docs/concepts/oracle.md)."""
    from .rollout import run_rollout

    with _user_errors():
        progress, on_progress = _progress_bars("rollout")
        with _writing(world_dir), _cluster(ray, ray_address, ray_cpus, workers), progress:
            r = run_rollout(world_dir, policy=policy, model=model, parser=parser, seed=seed, force=force,
                            on_progress=lambda d, n: on_progress("tasks", d, n), tokenizer=tokenizer)
    console.print(_rollout_table(r))
    console.print(f"wrote {world_dir / 'rollout'} (export it with `worldforge export {world_dir}`)")


@_command()
def export(
    world_dir: Path = typer.Argument(..., help="A world folder with trajectories, e.g. build/demo"),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="Root folder; the dataset goes to OUT/<world>/<version>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace a different dataset version in the destination."),
    tokenizer: str = typer.Option(None, "--tokenizer", callback=_not_blank, help="A Hugging Face tokenizer (name or folder) to count the card's "
                                  "token lengths and size the trainer kits (default: stages.export.tokenizer, else a "
                                  "worldforge's script-aware estimate, on the safe side)."),
    ray: bool = _ray_flag(),
    ray_address: str = _ray_address(),
    ray_cpus: int = _ray_cpus(),
    workers: int = _workers(),
) -> None:
    """Export tasks and trajectories as a Hugging Face dataset: Parquet + JSONL (SFT and RL),
    WideSearch task files, trainer kits (verl, TRL, a neutral environment), a dataset card
    with a training section, and a manifest with content hashes."""
    from .export import export_dataset

    with _user_errors():
        progress, on_progress = _progress_bars("export")
        with _writing(world_dir), _cluster(ray, ray_address, ray_cpus, workers), progress:
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


@_command()
def run(
    spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Working folder: one sub-folder per world."),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="Datasets go to OUT/<world>/<version>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace an export folder that holds another version of the dataset."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say which stages are up to date and which would run (and why), then stop."),
    ray: bool = _ray_flag(),
    ray_address: str = _ray_address(),
    ray_cpus: int = _ray_cpus(),
    workers: int = _workers(),
) -> None:
    """Run every stage end to end: plan, render (pages + search index), tasks, rollout and export.
    Stages whose inputs are unchanged and whose outputs are intact are skipped, so an
    interrupted run resumes; the run first says which stages will run and why. The dataset is
    byte-identical to an uninterrupted run."""
    from .run import run_pipeline

    t0 = time.perf_counter()
    progress, on_progress = _progress_bars("run")

    def show_plan(decisions) -> None:
        style = {"skip": "green", "run": "yellow", "depends": "cyan"}
        for d in decisions:
            word = {"skip": "up to date", "run": "will run", "depends": "may run"}[d.action]
            err_console.print(f"  [{style[d.action]}]{d.stage:<8} {word}[/]" + ("" if d.action == "skip" else f": {escape(d.reason)}"),
                              soft_wrap=True)
        if not dry_run:
            progress.start()

    try:
        with _cluster(ray and not dry_run, None if dry_run else ray_address, ray_cpus, 1 if dry_run else workers):
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


@_command()
def farm(
    spec: Path = typer.Argument(..., help="Farm spec YAML, e.g. worlds/mini.farm.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Working folder; the farm's worlds go to "
                                   "BUILD_DIR/<farm>/worlds/."),
    out: Path = typer.Option(Path("exports"), "--out", "-o", help="The release goes to OUT/<farm>/<release>/."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace a release folder that holds a different dataset."),
    ray: bool = _ray_flag(),
    ray_address: str = _ray_address(),
    ray_cpus: int = _ray_cpus(),
    workers: int = _workers(),
) -> None:
    """Build every world of a farm (with `run`: resumable, up-to-date worlds are skipped; in
    parallel under --ray) and merge their tasks and trajectories into one dataset release with
    world-level splits, deduplicated across worlds and against the farm's earlier releases."""
    from .farm import load_farm, run_farm

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

        with _cluster(ray, ray_address, ray_cpus, workers):
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


@_command()
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

    from .tasks import LENIENT, WIDESEARCH, score_files, world_aliases

    mode = LENIENT if lenient else WIDESEARCH
    with _user_errors():
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


@_command()
def serve(
    world_dir: Path = typer.Argument(None, help="A world with tasks, e.g. build/demo (or give --from-manifest)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535, help="Port to listen on."),
    from_manifest: Path = typer.Option(None, "--from-manifest", help="A dataset's manifest.json: rebuild its world "
                                       "(plan, render, tasks) under --build-dir, check it is the same, and serve it."),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Where --from-manifest rebuilds the world."),
    force: bool = typer.Option(False, "--force", help="Let --from-manifest replace a world folder of the same name that "
                               "it did not make (everything in it, trajectories included, is deleted)."),
    seed: int = typer.Option(None, "--seed", "-s", min=0, help="Default perturbation seed of episodes (default: the "
                             "world's rollout seed, or the manifest's)."),
    max_episodes: int = typer.Option(1024, "--max-episodes", min=1, help="Open episodes at once; more are refused (429)."),
    ttl: float = typer.Option(900.0, "--ttl", min=1.0, help="Seconds an idle episode lives before it expires (410)."),
    max_body: int = typer.Option(1 << 20, "--max-body", min=1024, help="Largest request body in bytes (413 above)."),
    search_cache: int = typer.Option(8192, "--search-cache", min=0, help="Search result pages kept in memory "
                                     "(results never change, so a hit is exact); 0 turns the cache off."),
    splits: str = typer.Option(None, "--splits", help="Serve episodes of these splits only, comma-separated (e.g. train, "
                               "or train,validation): held-out tasks are refused (404). Default: every split."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn's log level."),
    export: Path = typer.Option(None, "--export", help="The dataset the browser view at /view/ shows (default: the newest "
                                "exports/<world>/v<N>/ found here or beside the build folder)."),
) -> None:
    """Serve a world's environment over HTTP (episodes, the web_search and web_extractor tools,
    Search-R1's /retrieve) and MCP (/mcp), for RL trainers and agents, and its browser view at
    /view/ (read-only). Needs the serve extra."""
    from .serve import rebuild_from_manifest, require_serve_extra

    require_serve_extra()
    from .serve import ServiceLimits
    from .serve import serve as run_server
    from .tasks import SPLITS

    options = None
    chosen = tuple(dict.fromkeys(x.strip() for x in splits.split(",") if x.strip())) if splits is not None else None
    if chosen is not None and (not chosen or set(chosen) - set(SPLITS)):
        raise typer.BadParameter(f"--splits takes split names from {', '.join(SPLITS)}, comma-separated; got {splits[:60]!r}{' (cut)' if len(splits) > 60 else ''}")
    if from_manifest is not None and world_dir is not None:
        raise typer.BadParameter("give WORLD_DIR or --from-manifest, not both")
    if from_manifest is None and world_dir is None:
        raise typer.BadParameter("give WORLD_DIR (a world with tasks) or --from-manifest MANIFEST")
    with _user_errors():
        _check_listen(host, port)  # before any rebuild, and before uvicorn exits 3 with its own log line
    if from_manifest is not None:
        world_dir, options, man_seed = rebuild_from_manifest(from_manifest, build_dir, force=force,
                                                             on_stage=lambda m: err_console.print(m, soft_wrap=True))
        seed = man_seed if seed is None else seed
    err_console.print(f"serving {world_dir} on http://{host}:{port} (MCP at /mcp, the browser view at "
                      f"http://{_shown_host(host)}:{port}/view/); Ctrl-C stops", soft_wrap=True)
    with _user_errors():
        run_server(world_dir, host=host, port=port, seed=seed, options=options, log_level=log_level, search_cache=search_cache,
                   limits=ServiceLimits(max_episodes=max_episodes, ttl=ttl, max_body=max_body), export=export, splits=chosen)


def _shown_host(host: str) -> str:
    """The host to print in a URL a browser can open (a wildcard address is this machine)."""
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else f"[{host}]" if ":" in host else host


@_command()
def view(
    world_dir: Path = typer.Argument(..., help="A rendered world, e.g. build/demo (tasks and trajectories are shown when it has them)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535, help="Port to listen on."),
    export: Path = typer.Option(None, "--export", help="The dataset to show (a folder `worldforge export` wrote; default: "
                                "the newest exports/<world>/v<N>/ found here or beside the build folder)."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn's log level."),
) -> None:
    """Look at a world in a browser: its simulated web as web pages (each site in its own look,
    links, search with the tools' ranking, provenance on demand), its tasks with gold tables and
    evidence, trajectories replayed turn by turn and scored cell by cell, and the export's card,
    reports and plots. Prints the URL; Ctrl-C stops. Needs the serve extra."""
    from .serve import require_serve_extra

    require_serve_extra()
    import uvicorn

    from .view import ViewData, create_view_app

    with _user_errors():
        _check_listen(host, port)
        data = ViewData(world_dir, export=export)
        data.warm()
    typer.echo(f"http://{_shown_host(host)}:{port}/view/")
    err_console.print(f"viewing {world_dir}{f' and {data.export}' if data.export else ''}; Ctrl-C stops", soft_wrap=True)
    try:
        uvicorn.run(create_view_app(data), host=host, port=port, log_level=log_level, access_log=False)
    finally:
        data.close()


def _check_listen(host: str, port: int) -> None:
    """The address resolves and the port is free, or a one-line error (exit 1) saying so."""
    import socket

    from .errors import WorldforgeError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise WorldforgeError(f"cannot listen on {host}:{port}: the host does not resolve ({exc}); give --host an address "
                              "of this machine, e.g. 127.0.0.1 or 0.0.0.0") from None
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as exc:
            raise WorldforgeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; stop what holds the port "
                                  "or choose another --port") from None


def main() -> None:
    """The command line (the `worldforge` script goes through `worldforge.__main__`)."""
    import sys

    try:
        app()
    except KeyboardInterrupt:  # outside any command (while arguments are parsed)
        err_console.print(f"[yellow]{INTERRUPTED}[/]")
        sys.exit(130)
    except SystemExit as exc:  # typer turns an interrupt while parsing into a silent exit 130
        if exc.code == 130 and not _state["interrupt_reported"]:
            err_console.print(f"[yellow]{INTERRUPTED}[/]")
        raise


if __name__ == "__main__":
    main()

"""Commands over a world: validate a spec, plan it, check its invariants, audit its plausibility, inspect an entity."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import WorldforgeError
from ..plumbing import raise_if_interrupted
from .common import command, console, counts_table, err_console, user_errors, writing


@command()
def validate(spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml")) -> None:
    """Validate a world spec and its domain packs; report every problem at once (exit code 2)."""
    from ..world import all_invariants, count_warnings, expected_counts, lexicon_warnings, load_world

    with user_errors():
        world = load_world(spec)
    exp = expected_counts(world)
    rows = [(t, world.pack_of_type(t), "root" if world.types[t].parent is None
             else f"{'editions of' if world.types[t].parent.series else 'per'} {world.types[t].parent.type}",
             int(round(exp[t][1]))) for t in world.types]
    console.print(counts_table(f"world '{world.spec.name}' (seed {world.spec.seed}, as of {world.spec.as_of})",
                                rows, ("type", "pack", "sized", "expected count")))
    console.print(f"[green]valid:[/] {len(world.packs)} pack(s), {len(world.types)} types, "
                  f"{len(world.relations)} relations, {len(all_invariants(world))} invariants")
    for _, w in count_warnings(world) + lexicon_warnings(world):
        err_console.print(f"[yellow]warning:[/] {w}")


@command()
def plan(
    spec: Path = typer.Argument(..., help="World spec YAML, e.g. worlds/demo.yaml"),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", "-b", help="Folder that holds one sub-folder per world."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace an existing complete world."),
) -> None:
    """Plan a world: generate entities, attributes, relations and aliases, write
    <build-dir>/<name>/world.duckdb, check every invariant, then mark it complete."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..world import count_steps, count_warnings, ensure_writable, heavy_drops, load_world, plan_world, repairs

    with user_errors():
        world = load_world(spec)
        ensure_writable(build_dir, world.spec.name, force)
    for _, w in count_warnings(world):
        err_console.print(f"[yellow]warning:[/] {w}")
    with writing(Path(build_dir) / world.spec.name), user_errors():
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
    console.print(counts_table("entities", sorted(m["counts"].items()), ("type", "count")))
    rep = repairs(m)
    if rep:
        console.print(counts_table("repairs (to keep every invariant)",
                                    [(r.what, r.count, f"{r.count / r.drawn:.0%} of {r.drawn:,} drawn" if r.drawn else "")
                                     for r in rep], ("what", "count", "share")))
    console.print(f"[green]planned[/] {info.path}: {n_ent:,} entities, {sum(m['relations'].values()):,} links, "
                  f"{m['aliases']:,} aliases, {m['facts']:,} facts in {secs:.1f} s; all invariants hold")
    for w in heavy_drops(m):
        err_console.print(f"[yellow]warning:[/] {w}")


@command()
def check(world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo")) -> None:
    """Re-verify every invariant of a stored world and list violations (exit 1 if any)."""
    from ..world import check_world

    with user_errors():
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


@command()
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

    from ..world import SECTIONS, audit_world

    with user_errors():
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


@command()
def inspect(
    world_dir: Path = typer.Argument(..., help="A planned world folder, e.g. build/demo"),
    samples: int = typer.Option(2, "--samples", "-n", min=0, help="Sample entities to show, per type."),
    type_: list[str] = typer.Option(None, "--type", "-t", help="Only show samples of these types."),
) -> None:
    """Counts per type and relation, degree statistics, and sample entities with their facts."""
    from ..world import open_world

    with user_errors():
        info = open_world(world_dir)
        world = info.world
        unknown = [t for t in (type_ or []) if t not in world.types]
        if unknown:
            raise WorldforgeError(f"unknown type(s) {', '.join(unknown)}; known: {', '.join(world.types)}")
    m = info.manifest
    console.print(f"[bold]{world.spec.name}[/] seed {world.spec.seed}, as of {world.spec.as_of}, "
                  f"packs {', '.join(world.packs)}; {sum(m['counts'].values()):,} entities, {m['facts']:,} facts, "
                  f"{m['aliases']:,} aliases")
    console.print(counts_table("entities per type", [(t, m["counts"][t]) for t in world.types], ("type", "count")))
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

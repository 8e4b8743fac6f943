"""Commands over a world's web: render its pages and index, search it, open a page."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ..errors import WorldforgeError
from .common import cluster_for, command, console, progress_bars, ray_address_option, ray_cpus_option, ray_option, user_errors, workers_option, writing


@command()
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
    ray: bool = ray_option(),
    ray_address: str = ray_address_option(),
    ray_cpus: int = ray_cpus_option(),
    workers: int = workers_option(),
) -> None:
    """Render every page of a world (articles, profiles, news, directories) with provenance,
    then build its search index. An interrupted render resumes where it stopped."""
    from ..web import render_world
    from ..world import open_world

    if report_only:
        with user_errors():
            v = _stored_variety(world_dir)
            console.print(_variety_table(v))
            if v.get("sources"):
                console.print(_sources_table(v["sources"]))
        return
    with user_errors():
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
        progress, on_progress = progress_bars("render")
        with writing(world_dir), cluster_for(ray, ray_address, ray_cpus, workers), progress:
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
    from ..web import require_rendered, web_report
    from ..world import open_world

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


@command()
def search(
    world_dir: Path = typer.Argument(..., help="A rendered world folder, e.g. build/demo"),
    query: str = typer.Argument(..., help="Search words, e.g. \"companies headquartered in Hesheston\""),
    offset: int = typer.Option(0, "--offset", min=0, help="Index of the first result (10 per page: 0, 10, 20, ...)."),
) -> None:
    """Search a rendered world's web; prints results as the web_search tool returns them."""
    from ..web import SearchEngine

    with user_errors():
        engine = SearchEngine.for_world(world_dir)
        try:
            text = engine.web_search(query, offset=offset)
        finally:
            engine.close()
    console.print(text, markup=False, highlight=False, soft_wrap=True)


@command("open")
def open_page(
    world_dir: Path = typer.Argument(..., help="A rendered world folder, e.g. build/demo"),
    url: str = typer.Argument(..., help="A page URL from search results."),
) -> None:
    """Open a page of a rendered world; prints its Markdown as the web_extractor tool returns it."""
    from ..web import SearchEngine

    with user_errors():
        engine = SearchEngine.for_world(world_dir)
        try:
            text = engine.web_extractor(url)
        finally:
            engine.close()
    console.print(text, markup=False, highlight=False, soft_wrap=True)

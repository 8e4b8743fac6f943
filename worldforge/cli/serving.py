"""Commands that serve a world: the environment server and the browser view."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import WorldforgeError
from .common import command, err_console, user_errors


@command()
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
    from ..serve import rebuild_from_manifest, require_serve_extra

    require_serve_extra()
    from ..serve import ServiceLimits
    from ..serve import serve as run_server
    from ..tasks import SPLITS

    options = None
    chosen = tuple(dict.fromkeys(x.strip() for x in splits.split(",") if x.strip())) if splits is not None else None
    if chosen is not None and (not chosen or set(chosen) - set(SPLITS)):
        raise typer.BadParameter(f"--splits takes split names from {', '.join(SPLITS)}, comma-separated; got {splits[:60]!r}{' (cut)' if len(splits) > 60 else ''}")
    if from_manifest is not None and world_dir is not None:
        raise typer.BadParameter("give WORLD_DIR or --from-manifest, not both")
    if from_manifest is None and world_dir is None:
        raise typer.BadParameter("give WORLD_DIR (a world with tasks) or --from-manifest MANIFEST")
    with user_errors():
        _check_listen(host, port)  # before any rebuild, and before uvicorn exits 3 with its own log line
    if from_manifest is not None:
        world_dir, options, man_seed = rebuild_from_manifest(from_manifest, build_dir, force=force,
                                                             on_stage=lambda m: err_console.print(m, soft_wrap=True))
        seed = man_seed if seed is None else seed
    err_console.print(f"serving {world_dir} on http://{host}:{port} (MCP at /mcp, the browser view at "
                      f"http://{_shown_host(host)}:{port}/view/); Ctrl-C stops", soft_wrap=True)
    with user_errors():
        run_server(world_dir, host=host, port=port, seed=seed, options=options, log_level=log_level, search_cache=search_cache,
                   limits=ServiceLimits(max_episodes=max_episodes, ttl=ttl, max_body=max_body), export=export, splits=chosen)


def _shown_host(host: str) -> str:
    """The host to print in a URL a browser can open (a wildcard address is this machine)."""
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else f"[{host}]" if ":" in host else host


@command()
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
    from ..serve import require_serve_extra

    require_serve_extra()
    import uvicorn

    from ..view import ViewData, create_view_app

    with user_errors():
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

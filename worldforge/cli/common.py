"""The command line's app and what its commands share: user errors as one-line messages and exit codes, interrupts, the cluster and worker options, tables."""

from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..errors import INTERRUPTED, TERMINATED, SpecError, Terminated, WorldforgeError
from ..plumbing import load_native_libraries, raise_if_interrupted, watched_interrupts

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
def user_errors():
    """Turn user-fixable errors into a red message and their exit code; never a traceback.
    Ctrl-C (Python's or DuckDB's "query interrupted") exits 130; a filesystem error (disk
    full, permission denied) is one line naming the file."""
    load_native_libraries()  # with Ctrl-C held: an interrupt inside DuckDB's initialisation aborts the process
    import duckdb

    with watched_interrupts() as interrupt_seen, _terminate_as_interrupt():
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
        except Terminated:
            _interrupted(terminated=True)
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


def _interrupted(terminated: bool = False):
    err_console.print(f"[yellow]{TERMINATED if terminated else INTERRUPTED}[/]")
    _state["interrupt_reported"] = True
    raise typer.Exit(143 if terminated else 130)


@contextmanager
def _terminate_as_interrupt():
    """SIGTERM raises `Terminated` (a KeyboardInterrupt) in the main thread while a command runs:
    the default action would kill the process on the spot, leaving temporary files and a vLLM
    engine's worker processes behind."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_state = {"interrupt_reported": False}


def command(*args, **kwargs):
    """`app.command`, with the whole command (imports, work and printing) under `user_errors`."""

    def register(fn):
        @functools.wraps(fn)
        def guarded(*a, **k):
            with user_errors():
                return fn(*a, **k)

        return app.command(*args, **kwargs)(guarded)

    return register


def ray_option():
    return typer.Option(False, "--ray", help="Run the stage's shards as Ray tasks on a local cluster started for this "
                        "command (needs the ray extra); the output is the same bytes as without it.")


def not_blank(value: str | None) -> str | None:
    """An option given as "" is a mistake (an unset shell variable), not the option left out."""
    if value is not None and not value.strip():
        raise typer.BadParameter("is empty; give a value, or leave the option out")
    return value


def ray_address_option():
    return typer.Option(None, "--ray-address", callback=not_blank, help="Run on an existing Ray cluster (e.g. "
                        "ray://head:10001 or auto) instead of starting a local one.")


def ray_cpus_option():
    return typer.Option(None, "--ray-cpus", min=1, help="--ray: CPUs (workers) of the local cluster (default: all of this machine's).")


def workers_option():
    return typer.Option(None, "--workers", "-w", min=1, help="Processes of this machine that run the stage's shards "
                        "(render shards, rollout chunks, export writers, a farm's worlds); 1 runs them in this process. "
                        "Default: $WORLDFORGE_WORKERS, else one per core. The output is the same bytes with any number.")


@contextmanager
def cluster_for(ray: bool, address: str | None, cpus: int | None, workers: int | None = None):
    """The stage inside runs its shards on Ray when --ray or --ray-address is given, else in
    `workers` processes of this machine (default: one per core)."""
    from ..cluster import check_workers, default_workers, use_cluster

    n = 1 if ray or address else (check_workers(workers) if workers else default_workers())
    if not ray and not address and n <= 1:
        yield
        return
    with use_cluster(ray=ray, address=address, num_cpus=cpus, workers=n) as ex:
        if ray or address:
            err_console.print(f"[dim]running on {escape(ex.name)}[/]")
        yield


@contextmanager
def writing(world_dir: Path):
    """Hold a world's build lock and check its folder can take output, before any work."""
    from ..plumbing import BuildLock, check_output_dir

    check_output_dir(world_dir, "world folder")
    with BuildLock(world_dir):
        yield


def counts_table(title: str, rows, headers=("name", "count")) -> Table:
    t = Table(title=title)
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if i else "left")
    for r in rows:
        t.add_row(*[f"{v:,}" if isinstance(v, int) else str(v) for v in r])
    return t


def progress_bars(label: str):
    """A rich Progress with one bar per named stage, and the callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """Items a second (pages/s on a render), once rich has measured a rate."""

        def render(self, task) -> Text:
            return Text(f"{task.speed:,.1f}/s" if task.speed else "", style="progress.data.speed")

    progress = Progress(TextColumn(f"[bold]{label}[/] " + "{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                        Rate(), TimeElapsedColumn(), TimeRemainingColumn(), console=err_console)
    bars: dict[str, int] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        raise_if_interrupted()  # a Ctrl-C a library swallowed
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total or None)
        progress.update(bars[stage], completed=done, total=total or None)

    return progress, on_progress


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

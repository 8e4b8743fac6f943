"""Where the stages run their shards: in worker processes of this machine (the command line's
default, one per core: `--workers N`), in this process (`--workers 1`, and the library's
default), or as Ray tasks on a local cluster (`--ray`) or an existing one (`--ray-address ADDR`).

A stage hands `current().map(fn, items, *shared)` a function of one shard (a render shard,
a rollout chunk, an export writer) and gets the results back in the order of `items`,
whoever ran them and whenever they finished. Every shard writes its own file, named by its
index, and the stage merges them in index order: the output is the same bytes with and
without Ray, and with any number of workers.

    with use_cluster(ray=True, num_cpus=2):      # starts a local cluster, shuts it down after
        render_world(...)                        # shards run as Ray tasks
    with use_cluster(workers=2):                 # two worker processes, stopped after
        render_world(...)

Functions and shared arguments must pickle (module-level functions, plain data); `shared`
goes to the object store once, not once per shard.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import WorldforgeError
from .plumbing import WORKER_THREADS_ENV, batch_gc, held_interrupts, release_memory


class ClusterError(WorldforgeError):
    """Ray is missing, or the cluster cannot be reached."""


_HELD: dict = {}  # in a Ray worker: the state of the job it last worked for (see `worker_state`)


def worker_state(key, make: Callable, close: Callable | None = None):
    """In a Ray worker: what a job's shards share (an open world view, an environment), made
    by `make()` for the first shard of the job `key` and reused by its later ones. A worker
    holds one job's state at a time: moving on to another job (rolling out the world it has
    just rendered, another world of a farm) closes the previous state (`close(state)`) and
    hands its memory back before making the new one, so no worker carries a finished stage's
    world view into the next."""
    if _HELD.get("key") != key:
        if not _HELD:  # this worker's first job
            batch_gc()
        if "state" in _HELD:
            drop_held()
            release_memory()
        _HELD.update(key=key, state=make(), close=close)
    return _HELD["state"]


class Local:
    """Shards run one after another in this process."""

    workers = 1
    name = "one process"

    def map(self, fn: Callable, items: Iterable, *shared) -> Iterator:
        for item in items:
            yield fn(item, *shared)


class RayCluster:
    """Shards run as Ray tasks, `window` of them running at a time; results come back in item
    order. A finished shard behind a slower one waits in a buffer (at most `buffer` results)
    while the next shards start, so one long shard does not leave the other workers idle."""

    def __init__(self, workers: int, name: str):
        self.workers = max(1, workers)
        self.name = name
        self.window = 2 * self.workers
        self.buffer = 16 * self.workers
        self._remote: dict[Callable, object] = {}

    def _task(self, fn: Callable):
        import ray

        if fn not in self._remote:
            self._remote[fn] = ray.remote(num_cpus=1, max_retries=0)(fn)
        return self._remote[fn]

    def map(self, fn: Callable, items: Iterable, *shared) -> Iterator:
        import ray

        task = self._task(fn)
        refs = [ray.put(s) for s in shared]
        todo = iter(items)
        pending: deque = deque()  # submitted, not yet yielded, in item order
        running: set = set()  # submitted, not known to be finished
        more = True
        # The shards still running when one fails (or the caller stops reading) are left to end:
        # at most `window` of them. Ray 2.60's driver aborts the whole process (a failed internal
        # check, exit 1: it took a CI run down) when a cancel, forced or not, crosses the reply of
        # a task that was just finishing; a local cluster's shutdown stops them anyway.
        try:
            while True:
                while more and len(running) < self.window and len(pending) < self.buffer:
                    item = next(todo, _END)
                    if item is _END:
                        more = False
                        break
                    ref = task.remote(item, *refs)
                    pending.append(ref)
                    running.add(ref)
                if not pending:
                    return
                if pending[0] in running:  # wait for any shard to finish, then look again
                    done, _ = ray.wait(list(running), num_returns=1)
                    running.difference_update(done)
                    continue
                yield ray.get(pending.popleft())
        except ray.exceptions.RayTaskError as exc:
            # the worker's own exception (a WorldforgeError keeps its message and exit code)
            cause = exc.as_instanceof_cause()
            raise (cause.cause if getattr(cause, "cause", None) is not None else cause) from None


_END = object()

# What a worker process of this machine is given: one thread for DuckDB and polars, as a Ray task.
WORKER_ENV = {WORKER_THREADS_ENV: "1", "POLARS_MAX_THREADS": "1"}
WORKERS_ENV = "WORLDFORGE_WORKERS"  # the command line's default --workers (unset: one per core)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def max_workers() -> int:
    """The most worker processes a command starts: four a core (each holds a world's tables; more
    only queue for the cores and fill the memory)."""
    return max(8, 4 * _cores())


def check_workers(n: int, where: str = "--workers") -> int:
    """`n` worker processes, or a ClusterError naming the limit and how to stay under it."""
    if n > max_workers():
        raise ClusterError(f"{where}={n}: at most {max_workers()} worker processes on this machine "
                           f"({_cores()} cores, four a core); give a smaller number, or use --ray for more machines")
    return n


def default_workers() -> int:
    """The command line's worker processes: $WORLDFORGE_WORKERS, else one per core (at most 8)."""
    n = os.environ.get(WORKERS_ENV, "").strip()
    if n:
        if not n.isdigit() or int(n) < 1:
            raise ClusterError(f"${WORKERS_ENV}={n!r}: give a whole number of worker processes, 1 or more (1: in this process)")
        return check_workers(int(n), f"${WORKERS_ENV}")
    return max(1, min(8, _cores()))


def drop_held() -> None:
    """Close the job state `worker_state` holds in this process, if any."""
    if "state" in _HELD:
        state, done = _HELD.pop("state"), _HELD.pop("close")
        _HELD.clear()
        if done is not None:
            done(state)


def _worker_start(parent: int, env: dict) -> None:
    """A worker process's first act, before it imports a stage: one thread for DuckDB and
    polars; Ctrl-C is the parent's to handle (it stops the pool); and the worker ends itself
    when the parent is gone (killed, or stopped by SIGTERM), so no orphan keeps a world open."""
    os.environ.update(env)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    batch_gc()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="worldforge-parent-watch", daemon=True).start()


def _ready() -> int:
    return os.getpid()


class Pool:
    """Shards run in `workers` processes of this machine, `window` at a time; results come back
    in item order. The processes are started fresh (not forked: the parent's DuckDB and polars
    threads do not survive a fork) when a map first has two items or more, and live until the
    pool closes, so a run's stages share them; like a Ray worker, a process keeps one job's
    state (`worker_state`). Every shard writes its own file, so the output is the bytes one
    process writes."""

    def __init__(self, workers: int):
        self.workers = max(2, workers)
        self.name = f"{self.workers} worker processes"
        self.window = 2 * self.workers
        self.buffer = 16 * self.workers
        self._pool = None
        self._pids: set[int] = set()

    def _executor(self):
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_worker_start, initargs=(os.getpid(), WORKER_ENV))
            self._pool = pool
            # start every worker now (not one per submit), and learn their process ids
            self._pids = {_result(f) for f in [pool.submit(_ready) for _ in range(self.workers)]}
        return self._pool

    def map(self, fn: Callable, items: Iterable, *shared) -> Iterator:
        todo = iter(items)
        first = [x for x in (next(todo, _END), next(todo, _END)) if x is not _END]
        if len(first) < 2 and self._pool is None:  # nothing to share out: no process is started for one shard
            try:
                for item in first:
                    yield fn(item, *shared)
            finally:
                drop_held()  # the job's state was this process's to make: it does not outlive the map
            return
        pool = self._executor()
        todo = _chain(first, todo)
        pending: deque = deque()
        more = True
        try:
            while True:
                while more and len(pending) < self.window:
                    item = next(todo, _END)
                    if item is _END:
                        more = False
                        break
                    pending.append(pool.submit(fn, item, *shared))
                if not pending:
                    return
                yield _result(pending.popleft())
        finally:  # a failure, Ctrl-C or a caller that stops reading: what has not started never will
            for f in pending:
                f.cancel()

    def close(self, abort: bool = False) -> None:
        """Stop the workers: after the shards running now finish, or at once when `abort` (Ctrl-C
        or a failure: what a stopped shard wrote is a temporary file, and a resume redoes it)."""
        if self._pool is None:
            return
        if abort:
            for pid in self._pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool, self._pids = None, set()


def _result(future):
    """A future's result, waited for in short steps: a signal (Ctrl-C) may land on any of the
    pool's threads, and the main thread runs its handler only once it wakes."""
    from concurrent.futures import wait

    while not wait([future], timeout=0.25).done:
        pass
    return future.result()


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest


_current: Local | RayCluster | Pool = Local()


def current() -> Local | RayCluster | Pool:
    """The executor stages run their shards on (in-process unless inside `use_cluster`)."""
    return _current


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # the preface, then an empty SETTINGS frame


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail in seconds, not after Ray's minutes of retries, when nothing listens at a host:port
    address, or what listens is not a Ray cluster: Ray's head (GCS) and its client server speak
    gRPC, which answers HTTP/2's connection preface with a SETTINGS frame at once; anything else
    (a web server, a database, a port that accepts and stays silent) does not."""
    import socket

    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise ClusterError(f"--ray-address {address!r}: give HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                chunk = sock.recv(9 - len(head))
                if not chunk:
                    break
                head += chunk
    except TimeoutError:
        raise ClusterError(f"{address} accepts connections but does not answer as a Ray cluster (no reply in {timeout:g} s); "
                           "give the address `ray start --head` printed (HOST:6379, or ray://HOST:10001)") from None
    except OSError as exc:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None
    if len(head) < 9 or head[3] != 4:  # an HTTP/2 frame header whose type is SETTINGS
        raise ClusterError(f"{address} is not a Ray cluster (it does not speak gRPC); give the address `ray start --head` "
                           "printed (HOST:6379, or ray://HOST:10001)")


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


@contextmanager
def use_cluster(ray: bool = False, address: str | None = None, num_cpus: int | None = None, workers: int = 1):
    """Run the stages inside on Ray: a local cluster of `num_cpus` CPUs (default: this
    machine's) when `ray` is set, the cluster at `address` when given; neither: in `workers`
    processes of this machine (1: in this process). A cluster or pool started here is shut down
    on the way out."""
    global _current
    if not ray and not address:
        if workers <= 1 or not isinstance(_current, Local):  # a worker process runs its job in itself
            yield _current
            return
        previous, _current = _current, Pool(workers)
        pool = _current
        try:
            yield pool
        except BaseException:  # Ctrl-C or a failure: the running shards are stopped, not awaited
            pool.close(abort=True)
            raise
        finally:
            _current = previous
            pool.close()
        return
    try:
        with held_interrupts():  # a native library's initialisation does not take Ctrl-C cleanly
            import ray as ray_mod
    except ImportError:
        raise ClusterError("--ray needs Ray: pip install 'worldforge[ray]'") from None
    started = False
    if not ray_mod.is_initialized():
        kw = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False, configure_logging=True)
        # A task holds one CPU: its DuckDB and polars run on one thread (on every core, two
        # workers' thread pools fought for the same two cores and spent 12 % more CPU a page).
        env = {WORKER_THREADS_ENV: "1", "POLARS_MAX_THREADS": "1"}
        try:
            if address:
                _check_reachable(address)
                ray_mod.init(address=address, runtime_env={"env_vars": env}, **kw)
            else:
                # Local workers import this worldforge (a checkout, not only an installed copy).
                path = os.pathsep.join(p for p in (_package_root(), os.environ.get("PYTHONPATH", "")) if p)
                ray_mod.init(num_cpus=num_cpus or os.cpu_count() or 1, runtime_env={"env_vars": env | {"PYTHONPATH": path}}, **kw)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(f"cannot start or reach the Ray cluster{' at ' + address if address else ''}: "
                               f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        started = True
    workers = int(ray_mod.cluster_resources().get("CPU", 1))
    previous, _current = _current, RayCluster(workers, f"Ray ({workers} CPUs{', ' + address if address else ', local'})")
    try:
        yield _current
    finally:
        _current = previous
        if started:
            ray_mod.shutdown()

"""Shared plumbing every stage uses and no stage owns: atomic files and folder swaps,
content hashing and digests of outputs, reading state files that may be damaged, the
build-folder lock, output-folder checks, SQL identifier quoting and the package versions a
manifest records.

It imports no stage (nor anything of worldforge but `errors`), so any stage can use it
without creating an import circle."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import BusyError, DamagedStateError, OutputLocationError


def write_atomic(path: Path, text: str) -> None:
    """Write a file through a temporary sibling and a rename: complete or absent."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def swap_into_place(partial: Path, final: Path) -> None:
    """Rename a finished folder into place. An existing `final` moves aside first and is
    removed only after the swap, so `final` is always either the old or the new folder."""
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        os.replace(final, old)
    os.replace(partial, final)
    if old.exists():
        shutil.rmtree(old)


def link_or_copy(src: Path, dst: Path) -> None:
    """A hard link of `src` at `dst` (no bytes copied), or a copy on a file system without links."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def stable_hash(*names: object) -> int:
    """A 64-bit hash of names that is the same on every machine and Python run."""
    h = hashlib.blake2b("\x1f".join(map(str, names)).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little")


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# CJK and typographic punctuation: a URL in running text ends at one ('，', '：', '（', '——', '“'), as a
# reader of Chinese ends it; `iri_quote` encodes these, so no page's URL carries one.
CJK_PUNCT = r"\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
# A URL in running text, English or Chinese: up to a space, a closing bracket or quote, or CJK punctuation.
URL_PATTERN = rf"https?://[^\s)\]<>\"'|{CJK_PUNCT}]+"


def iri_quote(text: str, safe: str) -> str:
    """`text` percent-encoded for an IRI (RFC 3987): ASCII as `urllib.parse.quote(text, safe)`
    does, non-ASCII characters kept as they are but for separators, controls, format marks and
    punctuation (Unicode categories Z, C and P: a reader of Chinese prose ends a URL at its
    '，' or '。'), which are encoded too."""
    import unicodedata
    from urllib.parse import quote

    return "".join(c if ord(c) > 127 and unicodedata.category(c)[0] not in "ZCP" else quote(c, safe=safe) for c in text)


def quote_ident(name: str) -> str:
    """An SQL identifier in double quotes (DuckDB), with embedded quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Installed versions of worldforge and the packages its outputs depend on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("worldforge", "duckdb", "polars", "numpy", "faker", "networkx", "pyarrow", *extra):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "unknown"
    return out


# --------------------------------------------------------------------------- state files that may be damaged


def read_json(path: Path, fix: str) -> Any:
    """A JSON state file a stage wrote. A truncated or unreadable one raises DamagedStateError
    naming the file and `fix` (what to run to rebuild it)."""
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DamagedStateError(f"{path} is damaged (not valid JSON: {str(exc).splitlines()[0][:100]}); {fix}") from None


def read_jsonl(path: Path, fix: str) -> list:
    """A JSON-lines state file, one record a line; a damaged line raises DamagedStateError."""
    out = []
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedStateError(f"{path} is damaged (not UTF-8 text); {fix}") from None
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            raise DamagedStateError(f"{path} is damaged at line {i} ({str(exc).splitlines()[0][:100]}); {fix}") from None
    if text and not text.endswith("\n"):
        raise DamagedStateError(f"{path} is damaged (its last line is cut off); {fix}")
    return out


# Threads a process's DuckDB connections may use (unset: one per core). A Ray worker holds one
# CPU, and is given WORKER_THREADS_ENV=1 with polars' own setting (`cluster.use_cluster`):
# two workers each running DuckDB and polars on every core spent 12 % more CPU a page.
WORKER_THREADS_ENV = "WORLDFORGE_THREADS"


def duckdb_config() -> dict:
    """Settings for a new DuckDB connection in this process (its thread count, if limited)."""
    n = os.environ.get(WORKER_THREADS_ENV, "")
    return {"threads": int(n)} if n.isdigit() and int(n) > 0 else {}


def connect_duckdb(path: Path, fix: str, read_only: bool = True):
    """Open a DuckDB file a stage wrote; an unreadable one raises DamagedStateError."""
    import duckdb

    try:
        return duckdb.connect(str(path), read_only=read_only, config=duckdb_config())
    except duckdb.IOException as exc:
        raise DamagedStateError(f"{path} is damaged ({str(exc).splitlines()[0][:160]}); {fix}") from None


# --------------------------------------------------------------------------- digests of outputs

_FULL_HASH_BYTES = 32 << 20  # files up to this size are hashed whole
_SAMPLE_BLOCKS, _SAMPLE_BYTES = 64, 64 << 10


def file_digest(path: Path) -> dict:
    """{bytes, sha256} of a file. Files up to 32 MiB are hashed whole; larger ones (databases,
    index segments of big worlds) by their size and 64 evenly spaced 64 KiB blocks, the last
    block included: any truncation, and damage to most of a file, changes the digest at a
    cost that does not grow with the file."""
    size = Path(path).stat().st_size
    if size <= _FULL_HASH_BYTES:
        return {"bytes": size, "sha256": sha256_file(path)}
    h = hashlib.sha256(f"sampled:{size}:".encode())
    step = (size - _SAMPLE_BYTES) // (_SAMPLE_BLOCKS - 1)
    with open(path, "rb") as f:
        for i in range(_SAMPLE_BLOCKS):
            f.seek(i * step if i < _SAMPLE_BLOCKS - 1 else size - _SAMPLE_BYTES)  # the last block ends at the end
            h.update(f.read(_SAMPLE_BYTES))
    return {"bytes": size, "sha256": "sampled:" + h.hexdigest()}


def folder_digests(root: Path, names: list[str] | None = None) -> dict[str, dict]:
    """Digests of every file under `root` (or of the named files and folders in it), by path
    relative to `root`."""
    root = Path(root)
    targets = [root / n for n in names] if names is not None else [root]
    out = {}
    for t in targets:
        files = [t] if t.is_file() else sorted(p for p in t.rglob("*") if p.is_file() and p.suffix != ".lock") if t.is_dir() else []
        for p in files:
            out[str(p.relative_to(root))] = file_digest(p)
    return dict(sorted(out.items()))


def digest_problems(root: Path, recorded: dict[str, dict]) -> list[str]:
    """How the files under `root` differ from digests recorded earlier: missing, resized or
    changed files (empty when they all match)."""
    out = []
    for rel, want in recorded.items():
        p = Path(root) / rel
        if not p.is_file():
            out.append(f"{rel} is missing")
            continue
        size = p.stat().st_size
        if size != want.get("bytes"):
            out.append(f"{rel} has {size:,} bytes, {want.get('bytes', 0):,} were written")
        elif file_digest(p)["sha256"] != want.get("sha256"):
            out.append(f"{rel} was changed after it was written")
    return out


def truncation(path: Path, recorded: dict) -> str | None:
    """Whether a database file is shorter than when its stage wrote it (or gone): the cheap
    check made on every open. A database edited on purpose keeps or grows its size and is
    then judged by its invariants (`worldforge check`), not called damaged."""
    path = Path(path)
    if not path.is_file():
        return f"{path.name} is missing"
    size = path.stat().st_size
    if size < recorded.get("bytes", 0):
        return f"{path.name} has {size:,} bytes, {recorded['bytes']:,} were written"
    return None


# --------------------------------------------------------------------------- the build-folder lock


class BuildLock:
    """An exclusive lock on one world's build folder, held while a command writes to it.

    The lock is `<build-dir>/.<world>.lock`, locked with flock: the kernel releases it when the
    holder exits, however it exits (a killed run never leaves a stale lock, only a file that
    the next writer locks again). A second writer fails at once with the holder's pid instead
    of waiting or corrupting the folder. The file is removed when the lock is released."""

    def __init__(self, world_path: Path):
        world_path = Path(world_path)
        self.path = world_path.parent / f".{world_path.name}.lock"
        self.world = world_path
        self._fd: int | None = None

    def __enter__(self) -> BuildLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                finally:
                    os.close(fd)
                raise BusyError(f"another worldforge process (pid {holder}) is working on {self.world}; wait for it to "
                                f"finish or stop it (kill {holder}), then run this again") from None
            try:  # the holder before us may have removed the file after we opened it: lock the file that is there
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            try:
                os.unlink(self.path)  # removed while still locked, so no one else holds this file
            except OSError:
                pass
            os.close(self._fd)  # closing releases the flock
            self._fd = None


# --------------------------------------------------------------------------- output folders

MIN_FREE_BYTES = 200 << 20


def check_output_dir(path: Path, what: str, min_free: int = MIN_FREE_BYTES) -> None:
    """Fail before any work when `path` (a folder to create or write into) cannot take output:
    a file stands where a folder should be, the nearest existing folder is not writable (tried
    with a real file, so read-only mounts are caught), or it has less than `min_free` bytes free."""
    path = Path(path)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    for p in [path, *path.parents]:
        if p.exists() and not p.is_dir():
            raise OutputLocationError(f"{what}: {p} is a file, but a folder is needed there; move it or choose another "
                                      f"location for {path}")
        if p == probe:
            break
    test = probe / f".worldforge-write-test-{os.getpid()}"
    try:
        test.write_bytes(b"")
        test.unlink()
    except OSError as exc:
        raise OutputLocationError(f"{what}: cannot write in {probe} ({exc.strerror}); choose a writable location "
                                  f"for {path}") from None
    free = shutil.disk_usage(probe).free
    if free < min_free:
        raise OutputLocationError(f"{what}: only {free / 2**20:,.0f} MiB free on the disk holding {probe}; "
                                  f"free some space or choose another location for {path}")


class Background:
    """`fn(*args, **kwargs)` on a daemon thread; `result()` waits and returns it or raises its
    error. A daemon: an interrupt of the caller does not wait for it. For work that lets go of
    the GIL (tantivy's merge, polars, DuckDB) beside the caller's own."""

    def __init__(self, fn: Callable, *args, **kwargs):
        self._out: list = []

        def run() -> None:
            try:
                self._out.append((True, fn(*args, **kwargs)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller of result()
                self._out.append((False, exc))

        self._thread = threading.Thread(target=run, daemon=True, name="worldforge-background")
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()

    def result(self):
        self._thread.join()
        ok, value = self._out[0]
        if not ok:
            raise value
        return value


def release_memory() -> None:
    """Hand freed memory back to the system after a bulk phase. glibc keeps what a process's
    threads (DuckDB's, polars', tantivy's) freed in per-thread arenas, so a driver that read
    gigabytes once would keep them as resident memory through every later stage."""
    import gc

    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        pass
    try:  # Arrow's own allocator (mimalloc or jemalloc) keeps freed buffers for reuse until asked
        import pyarrow

        pyarrow.default_memory_pool().release_unused()
    except ImportError:
        pass


# The young generation's threshold for batch work: Python's default (700 allocations) runs a
# collection every few hundred page clauses or search results, and each one walks the objects
# that just survived the last, which took 5 % of the render and 7 % of the rollout. The
# pipeline's objects are rarely cyclic, so collections a hundred times rarer free the same.
BATCH_GC_THRESHOLD = 50_000


def batch_gc() -> None:
    """Collect garbage for a batch job (the command line, a Ray worker): young-generation
    collections `BATCH_GC_THRESHOLD` allocations apart. Only the process's entry points call it;
    importing worldforge as a library leaves the host's settings alone."""
    import gc

    _, g1, g2 = gc.get_threshold()
    gc.set_threshold(BATCH_GC_THRESHOLD, g1, g2)


# --------------------------------------------------------------------------- Ctrl-C


def _takes_interrupts() -> bool:
    """Whether this thread handles Ctrl-C: only the main thread receives signals, and a process
    started with SIGINT ignored (a shell's background job) keeps ignoring it, as Python does."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


@contextmanager
def held_interrupts() -> Iterator[None]:
    """Hold Ctrl-C while native libraries initialise, then deliver it to the handler in place
    (Python's raises KeyboardInterrupt).

    An interrupt inside a native module's initialisation is not a clean KeyboardInterrupt:
    DuckDB's bindings abort the process ("Critical nanobind error") or turn it into an
    ImportError with a traceback. Only the main thread receives signals; elsewhere this is a
    no-op, and so where Ctrl-C is ignored (`_takes_interrupts`)."""
    if not _takes_interrupts():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        signal.raise_signal(signal.SIGINT)


_WATCHES: list[list[int]] = []  # the interrupts each open `watched_interrupts` block has seen, innermost last


@contextmanager
def watched_interrupts() -> Iterator[Callable[[], bool]]:
    """Ctrl-C raises KeyboardInterrupt as usual and is remembered, for two cases a library hides:
    - it turns the interrupt into an error of its own (DuckDB reports a KeyboardInterrupt raised
      in a Python callback as an "Invalid Input Error"): the block's caller asks `seen()`;
    - it swallows it (C code that clears any error while it probes for an optional module): the
      work's progress callbacks call `raise_if_interrupted`, which raises it again.
    Only the main thread receives signals; elsewhere, or where Ctrl-C is ignored
    (`_takes_interrupts`), nothing is watched."""
    seen: list[int] = []
    if not _takes_interrupts():
        yield lambda: False
        return

    def on_sigint(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    _WATCHES.append(seen)
    try:
        yield lambda: bool(seen)
    finally:
        del _WATCHES[next(i for i, w in enumerate(_WATCHES) if w is seen)]  # by identity: blocks nest
        signal.signal(signal.SIGINT, previous)


def raise_if_interrupted() -> None:
    """Raise KeyboardInterrupt if the innermost `watched_interrupts` block saw a Ctrl-C that
    the work did not stop for (a progress callback is a point where work is known to go on)."""
    if _WATCHES and _WATCHES[-1]:
        raise KeyboardInterrupt


def load_native_libraries() -> None:
    """Import the native libraries every stage uses, with Ctrl-C held (`held_interrupts`)."""
    with held_interrupts():
        import duckdb  # noqa: F401
        import numpy  # noqa: F401
        import polars  # noqa: F401
        import pyarrow.parquet  # noqa: F401


def forget_handled_interrupt() -> None:
    """Clear CPython's "unhandled Ctrl-C" mark before a clean exit 130.

    CPython 3.11 sets the mark when a KeyboardInterrupt passes through `exec` of a string
    (dataclasses and namedtuple build their methods that way while modules import) and never
    clears it once the interrupt is caught, so the process that exits 130 is then killed by
    SIGINT at the very end (status -2). Interpreters without the variable have nothing to clear."""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, ValueError, AttributeError, OSError):
        pass

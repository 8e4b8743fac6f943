"""Shared plumbing every stage uses and no stage owns: atomic files and folder swaps,
content hashing, SQL identifier quoting and the package versions a manifest records.

It imports no stage (nor anything of worldforge but `errors`), so any stage can use it
without creating an import circle."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


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

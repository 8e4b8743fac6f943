"""The `worldforge` command line. Thin: each command parses options, calls one stage
function and renders the result; heavy imports happen inside the commands. The commands are
registered on `app` (in `common`) by the modules below, in the order `--help` lists them."""

from __future__ import annotations

from .common import app, main

# isort: off
from . import world, web, pipeline, serving  # noqa: F401, E402 - registers the commands, in this order
# isort: on

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()

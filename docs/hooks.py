"""mkdocs hooks (mkdocs.yml: `hooks: [docs/hooks.py]`): the generated reference sections.

A page may hold `<!-- generated: cli -->`, `<!-- generated: pack-schema -->`,
`<!-- generated: spec-schema -->` or `<!-- generated: farm-schema -->`; each is replaced, at
build time, by what `docs/gen_reference.py` makes from the code (the Typer app, the pydantic
models), so the reference cannot disagree with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_reference  # noqa: E402


def on_page_markdown(markdown, page, config, files):
    return gen_reference.expand(markdown)

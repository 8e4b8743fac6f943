"""The vLLM page check against claims the world does not hold (issue 61).

For each built world: every template page is judged exactly as an LLM page is
(`web.llm.page_problems`: its fact sheet, its tables, its claims); a template page refused is a
false alarm. Then claims are injected into template pages, one sentence a page, of eight kinds,
and the page judged again; an injected page that passes is an accepted claim:

- real_place, real_org, real_person: real-world names in sentences a fluent model writes
  (`benchmarks/claims_corpus.yaml`, per language);
- invented_person: a name from Faker's locale that no entity of the world has;
- other_entity: one of the subject's relations said with an entity of the world not on the sheet;
- wrong_relation: a relation said of an entity the sheet links to the subject by another one;
- other_value: another value of a category attribute the sheet gives (an occupation, a genre);
- other_number: another entity's figure for a numeric attribute the sheet gives.

    python benchmarks/claims.py build/demo build/demo_zh build/demo_es
    python benchmarks/claims.py build/demo --per-kind 60

Prints one table: per world, the pages judged and refused (false alarms), and per kind the claims
injected and accepted. The target is 0 accepted and 0 false alarms.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KINDS = ("real_place", "real_org", "real_person", "invented_person", "other_entity", "wrong_relation", "other_value",
         "other_number")
CORPUS = yaml.safe_load((Path(__file__).parent / "claims_corpus.yaml").read_text(encoding="utf-8"))


def inject(markdown: str, sentence: str) -> str:
    """The page with one more paragraph after its first paragraph of prose."""
    blocks = markdown.split("\n\n")
    at = next((i for i, b in enumerate(blocks) if b.strip() and b.strip()[0] not in "#*|-![>"), len(blocks) - 1)
    return "\n\n".join(blocks[:at + 1] + [sentence] + blocks[at + 1:])


class Injector:
    """Builds the claim sentences of each kind for one world's pages."""

    def __init__(self, view):
        from faker import Faker

        from worldforge.language import get as get_language

        self.view = view
        self.corpus = CORPUS[view.lang]
        self.faker = Faker(get_language(view.lang).locale)
        self.faker.seed_instance(61)
        self.taken = {n.lower() for n in view.names.values()}
        self.by_type: dict[str, list[str]] = {}
        for eid, t in view.type_of.items():
            self.by_type.setdefault(t, []).append(eid)
        self.count = dict.fromkeys(KINDS, 0)

    def _phrase(self, r: str) -> str | None:
        rs = self.view.relations[r]
        for ph in self.view.meta[(rs.source, r)].phrases:
            if "{start}" not in ph and "{end}" not in ph:
                return ph
        return None

    def _value(self, subject: str, label: str, value: str) -> str:
        return self.corpus["value_frame"].format(subject=subject, label=label, value=value)

    def claim(self, kind: str, page) -> str | None:
        """A sentence of this kind for this page, or None where the page has nothing to build it from."""
        from worldforge.web.text import format_number
        from worldforge.world import value_translation

        view = self.view
        c = self.count[kind]
        subj = view.names[page.subject]
        t = view.type_of[page.subject]
        sheet = set(page.entity_ids) | {page.subject} | {f.value for f in page.facts if f.value_type == "entity"}
        if kind in ("real_place", "real_org", "real_person"):
            frames, names = self.corpus[kind]["frames"], self.corpus[kind]["names"]
            return frames[c % len(frames)].format(subject=subj, name=names[c % len(names)])
        if kind == "invented_person":
            for _ in range(50):
                name = self.faker.name()
                if name.lower() not in self.taken:
                    frames = self.corpus[kind]["frames"]
                    return frames[c % len(frames)].format(subject=subj, name=name)
            return None
        own = [f for f in page.facts if f.subject == page.subject]
        if kind == "other_entity":
            rels = sorted(r for r, rs in view.relations.items() if rs.source == t and self._phrase(r))
            if not rels:
                return None
            r = rels[c % len(rels)]
            pool = [e for e in self.by_type.get(view.relations[r].target, []) if e not in sheet and e not in view.home_of.values()]
            if not pool:
                return None
            other = pool[zlib.crc32(page.url.encode()) % len(pool)]
            return self._phrase(r).format(subject=subj, object=view.names[other])
        if kind == "wrong_relation":
            for f in own:
                if f.value_type != "entity" or f.predicate not in view.relations:
                    continue
                vt = view.type_of.get(f.value)
                held = {g.predicate for g in own if g.value == f.value}
                for r, rs in sorted(view.relations.items()):
                    if rs.source == t and rs.target == vt and r not in held and self._phrase(r):
                        return self._phrase(r).format(subject=subj, object=view.names[f.value])
            return None
        if kind == "other_value":
            for f in own:
                spec = view.types[t].attributes.get(f.predicate)
                values = [str(v) for v in (getattr(spec, "values", None) or [])]
                if f.value_type != "string" or len(values) < 2 or getattr(spec, "hidden", False):
                    continue
                tr = value_translation(view.world, t, f.predicate)
                shown = str(tr.get(f.value, f.value))  # (a world in another language stores its own word)
                others = [v for v in values if v != f.value and str(tr.get(v, v)) not in (shown, f.value) and len(str(tr.get(v, v))) >= 4]
                if others:
                    v = others[zlib.crc32(page.url.encode()) % len(others)]
                    return self._value(subj, view.meta[(t, f.predicate)].label, str(tr.get(v, v)))
            return None
        if kind == "other_number":
            for f in own:
                if f.value_type not in ("int", "float"):
                    continue
                x = float(f.value)
                other = x * 1.37 + 11 if x >= 0 else x * 1.37 - 11  # another entity's figure: far from this one
                value = format_number(str(round(other) if f.value_type == "int" else round(other, 1)), f.value_type)
                return self._value(subj, view.meta[(t, f.predicate)].label, value)
            return None
        raise ValueError(kind)


def measure(world_dir: Path, per_kind: int, max_pages: int | None = None, stride: int = 7) -> dict:
    """Judge a world's template pages (up to `max_pages`) and inject `per_kind` claims of each kind
    into every `stride`-th page with a subject (by URL); see the module."""
    from worldforge.web.claims import ClaimCheck
    from worldforge.web.llm import page_problems
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.web.template import TemplateWriter, article_sources
    from worldforge.world.store import open_world

    info = open_world(world_dir)
    view = WorldView(info, info.world.spec.stages.render)
    writer = TemplateWriter(view)
    t0 = time.perf_counter()
    claims = ClaimCheck(view)
    built = time.perf_counter() - t0
    inj = Injector(view)
    out = {"world": world_dir.name, "lang": view.lang, "pages": 0, "false_alarms": 0, "examples": [],
           "injected": dict.fromkeys(KINDS, 0), "accepted": dict.fromkeys(KINDS, 0), "accepted_examples": []}
    check_s = 0.0
    turn = 0
    for p in plan_pages(view):
        if max_pages is not None and out["pages"] >= max_pages:
            break
        md = writer.write(p)
        if p.kind == "article":
            md = md.replace(article_sources(view, p, view.lang).rstrip(), "")
        t1 = time.perf_counter()
        probs = page_problems(view, p, md, claims)
        check_s += time.perf_counter() - t1
        out["pages"] += 1
        if probs:
            out["false_alarms"] += 1
            if len(out["examples"]) < 5:
                out["examples"].append((p.url, probs[:3]))
            continue
        # every 7th page (by URL) with a subject takes one claim, the kinds in turn
        if p.subject is None or p.kind == "directory" or zlib.crc32(p.url.encode()) % stride:
            continue
        for k in range(len(KINDS)):
            kind = KINDS[(turn + k) % len(KINDS)]
            if inj.count[kind] >= per_kind:
                continue
            sentence = inj.claim(kind, p)
            if sentence is None:
                continue
            turn += 1
            inj.count[kind] += 1
            out["injected"][kind] += 1
            if not page_problems(view, p, inject(md, sentence), claims):
                out["accepted"][kind] += 1
                out["accepted_examples"].append((kind, p.url, sentence))
            break
    out["check_ms"] = 1000 * check_s / max(out["pages"], 1)
    out["build_s"] = built
    view.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("worlds", nargs="+", type=Path, help="built world folders (worldforge render done)")
    ap.add_argument("--per-kind", type=int, default=30, help="claims injected per kind and world")
    args = ap.parse_args()
    rows = [measure(w, args.per_kind) for w in args.worlds]
    head = ["world", "lang", "pages", "false alarms", "check ms/page"] + [k for k in KINDS] + ["accepted / injected"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r["world"], r["lang"], f"{r['pages']:,}", str(r["false_alarms"]), f"{r['check_ms']:.2f}"]
        cells += [f"{r['accepted'][k]}/{r['injected'][k]}" for k in KINDS]
        cells.append(f"{sum(r['accepted'].values())}/{sum(r['injected'].values())}")
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        for url, probs in r["examples"]:
            print(f"false alarm ({r['world']}): {url}: {probs}")
        shown: dict[str, int] = {}
        for kind, url, sentence in r["accepted_examples"]:
            shown[kind] = shown.get(kind, 0) + 1
            if shown[kind] > 3:
                continue
            print(f"accepted ({r['world']}, {kind}): {url}: {sentence}")  # (three a kind)


if __name__ == "__main__":
    main()

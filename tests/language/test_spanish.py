"""A third language as data only (issue 56): Spanish is a language file, three banks and the
packs' `i18n: {es: ...}` words, with no Python that names it; a Spanish world is planned,
written, searched, asked, researched and scored in Spanish."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.conftest import REPO
from worldforge import language
from worldforge.language import get as get_language

PKG = REPO / "worldforge"
ES = {"country": 4, "person": 300, "company": 70}


def test_a_language_is_its_data_files_and_no_python_names_it():
    """Every family has its Spanish file, and no Python file outside the layer compares, keys or
    passes a language code other than the packs' own (a suffix 'es' added to a word is no code)."""
    for folder in ("language", "web/banks", "tasks/questions", "rollout/narration"):
        assert (PKG / folder / "es.yaml").is_file(), folder
    codes = {c for c in language.languages() if c != language.BASE}
    codes |= {get_language(c).locale for c in codes}
    named = []
    for path in sorted(PKG.rglob("*.py")):
        if path.parent.name == "language":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in codes and not isinstance(parents.get(id(node)), ast.BinOp):
                named.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value!r}")
    assert not named, f"Python that names a language (say it through worldforge/language): {named}"


def test_date_style_names_are_unique_across_languages():
    """A site's date style names its language's format: two languages sharing a style name would
    write one language's months on the other's pages ('1 abr 1995' on an English page)."""
    seen: dict[str, str] = {}
    for code in language.languages():
        for style in get_language(code).date_styles:
            assert style not in seen, f"date style {style!r} in both {seen[style]} and {code}"
            seen[style] = code


def test_spanish_articles_agree_with_their_nouns():
    es, en = get_language("es"), get_language("en")
    assert es.agree("el población de el país") == "la población del país"
    assert es.agree("Del fecha de fundación, un empresa matriz") == "De la fecha de fundación, una empresa matriz"
    assert es.agree("el área y los áreas; el día, el sistema, la sede") == "el área y las áreas; el día, el sistema, la sede"
    assert es.agree("los ciudades de El Salvador") == "las ciudades de El Salvador"  # a name keeps its article
    assert en.agree("the el población") == "the el población"  # a language whose articles agree with nothing
    assert es.singular("Directores generales") == "director general" and es.singular("Ciudades") == "ciudad"
    assert es.plural_of("región") == "regiones" and es.plural_of("país") == "países" and es.plural_of("empresa") == "empresas"
    assert es.singular("Fecha de fundación") is None and not es.plural("País")


def test_dates_read_in_every_language():
    import datetime as dt

    from worldforge.rollout.reading import read_date

    day = dt.date(1997, 8, 3)
    for code in language.languages():
        for style in get_language(code).date_styles:
            assert read_date(f"x {get_language(code).date(day, style)} y") == day, (code, style)


@pytest.fixture(scope="module")
def es_run(tmp_path_factory):
    """worlds/demo_es.yaml at a small size, run end to end."""
    from worldforge.run import run_pipeline

    tmp = tmp_path_factory.mktemp("es")
    spec = yaml.safe_load((REPO / "worlds" / "demo_es.yaml").read_text(encoding="utf-8"))
    spec.update(name="demo_es_small", counts=ES)
    (tmp / "demo_es_small.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return run_pipeline(tmp / "demo_es_small.yaml", tmp / "build", tmp / "exports")


def _pages(world: Path) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((world / "web" / "pages").glob("*.pages.parquet"))])


def test_spanish_pages_read_as_spanish(es_run):
    """Pages in Spanish with no English frame left, no empty slot, articles that agree, no person
    called 'it', a Spanish date in prose; the page check and the language's slips find nothing."""
    from worldforge.web.text import UNFILLED_SLOT

    es = get_language("es")
    pages = _pages(es_run.world)
    md = pages["markdown"].to_list()
    text = "\n".join(md)
    assert len(md) > 500
    english = re.compile(r"\b(?:the|of the|since|is a|was born|founded in|and the)\b")
    assert sum(bool(english.search(m)) for m in md) == 0, next(m for m in md if english.search(m))[:800]
    assert not any(UNFILLED_SLOT.search(m) for m in md)
    assert re.search(r"\b\d{1,2} de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre) de \d{4}\b", text)
    for name, pat in es.checks.page_slips.items():
        hits = [m for m in md if pat.search(m)]
        assert not hits, (name, pat.search(hits[0]).group(0))
    assert not re.search(r"\b(?:[Dd]e el|[Aa] el)\b", text)  # contracted: del, al
    assert not re.search(r"\b[Ll]os (?:empresas|ciudades|regiones|personas)\b", text)
    variety = json.loads((es_run.world / "web" / "render.json").read_text())["report"]["variety"]
    assert set(variety["prose_slips"]) == set(es.checks.prose_slips)  # the render measures Spanish by its own slips
    assert all(share <= 0.02 for share in variety["prose_slips"].values()), variety["prose_slips"]


def test_spanish_search_stems_and_folds(es_run):
    """The index is Spanish: a plural, an unaccented or a singular query finds the same pages."""
    from worldforge.web.search import SearchEngine

    eng = SearchEngine(es_run.world / "web")
    assert eng.language == "es"

    def urls(q: str) -> set[str]:
        return {h["url"] for h in eng.search(q, limit=50)[0]}

    plural = urls("empresas")
    assert plural and urls("empresa") & plural
    assert urls("región") and urls("region") == urls("región")


def test_spanish_tasks_are_asked_in_spanish_and_researched(es_run, tmp_path):
    """Questions are Spanish with agreeing articles and pass the question check; every gold table
    scores 1.0; the clean oracle researches them in Spanish and scores as it does in the other
    languages' worlds."""
    from worldforge.tasks.check import question_problems
    from worldforge.tasks.scoring import read_gold_csv, score_files, world_aliases

    tasks = [json.loads(x) for x in (es_run.world / "tasks" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(tasks) >= 100 and {t["language"] for t in tasks} == {"es"}
    for t in tasks:
        assert not question_problems(t["query"], [], "es"), t["query"]
        assert not re.search(r"\b(?:los (?:empresas|ciudades|personas|regiones)|el (?:ciudad|empresa|región))\b", t["query"]), t["query"]
        assert "company" not in t["query"] and " the " not in t["query"]
    responses = []
    for t in tasks:
        header, rows = read_gold_csv((es_run.world / "tasks" / "gold" / f"{t['instance_id']}.csv").read_text(encoding="utf-8"))
        table = "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])
        responses.append({"instance_id": t["instance_id"], "response": table})
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in responses), encoding="utf-8")
    _, avg = score_files(es_run.world / "tasks", tmp_path / "r.jsonl", world_aliases(es_run.world))
    assert avg["success"] == 1.0 and avg["item_f1"] == 1.0
    trajs = [json.loads(x) for x in (es_run.world / "rollout" / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    mean = sum(t["reward"] for t in trajs) / len(trajs)
    assert mean >= 0.85, mean
    said = [m["content"] for t in trajs for m in t["messages"] if m["role"] == "assistant" and m.get("content")]
    assert sum(bool(re.search(r"\b(?:[Bb]usco|[Aa]bro|[Ll]eo|[Rr]eviso|página|lista)\b", s)) for s in said) > len(said) // 3
    assert not any(re.search(r"\b(?:I'll|Let me|I need|the list)\b", s) for s in said)

"""The vLLM backend with a real engine: vLLM's CPU build and a tiny random-weight model
made here. Random weights write noise, so these tests assert on the pipeline (batching,
validation, retries, fallback, rejection, accounting), not on prose. Skipped only where
vllm is not installed; CI installs it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("vllm")

from typer.testing import CliRunner  # noqa: E402

from tests.conftest import ENGINE_OPTS as OPTS  # noqa: E402
from tests.conftest import copy_world, write_spec  # noqa: E402
from worldforge.cli import app  # noqa: E402
from worldforge.web import render_world  # noqa: E402
from worldforge.web.llm import SYSTEM_PROMPT, VLLMWriter  # noqa: E402
from worldforge.web.pages import WorldView
from worldforge.web.planning import plan_pages  # noqa: E402
from worldforge.web.store import open_pages
from worldforge.web.template import TemplateWriter  # noqa: E402
from worldforge.world.planner import plan_world  # noqa: E402
from worldforge.world.store import open_world  # noqa: E402
from worldforge.world.validate import load_world  # noqa: E402


@pytest.fixture(scope="session")
def geo_world(tmp_path_factory):
    """A one-country world (geography pack only): about a hundred pages, rendered by template."""
    tmp = tmp_path_factory.mktemp("geo")
    spec = write_spec(tmp, name="geo", seed=5, counts={"country": 1}, packs=["geography"])
    info = plan_world(load_world(spec), tmp / "build")
    template = copy_world(info, tmp / "template" / "geo")
    render_world(template)
    return info, template


def _table(path, sql):
    with open_pages(path / "web") as con:
        return con.sql(sql).fetchall()


def test_vllm_render_retries_then_falls_back(engine, geo_world, tmp_path, tiny_model):
    info, template = geo_world
    world = copy_world(info, tmp_path / "geo")
    report = render_world(world, OPTS, model=str(tiny_model), llm=engine)
    tpl = dict(_table(template, "SELECT url, markdown FROM pages"))
    got = _table(world, "SELECT url, markdown, source, attempts FROM pages ORDER BY url")
    # Every planned page is there, once, with the template render's provenance.
    assert [r[0] for r in got] == sorted(tpl) and report.pages == len(tpl) > 60
    assert _table(world, "SELECT url, fact_id FROM page_facts ORDER BY ALL") == _table(template, "SELECT url, fact_id FROM page_facts ORDER BY ALL")
    # Outcomes add up; a page that failed every attempt kept its template text, byte for byte.
    assert report.accepted + report.fallback == report.pages and report.rejected == 0
    assert report.fallback > 0
    assert report.retried == sum(1 for r in got if r[3] > 1) >= report.fallback
    assert report.accepted_after_retry == sum(1 for r in got if r[2] == "vllm" and r[3] > 1)
    for url, md, source, attempts in got:
        assert source in ("vllm", "fallback")
        if source == "fallback":
            assert md == tpl[url] and attempts == OPTS.retries + 1
        else:
            assert 1 <= attempts <= OPTS.retries + 1
    # Accounting: one request per attempt, tokens counted, the shared system prompt served from the prefix cache.
    llm = report.llm
    assert llm["requests"] == sum(r[3] for r in got)
    assert llm["requests"] > report.pages  # failed first attempts were retried
    assert 0 < llm["output_tokens"] <= llm["requests"] * OPTS.sampling.max_tokens
    assert llm["prompt_tokens"] > llm["requests"] * 200
    assert report.prefix_cache_share > 0.3
    assert set(llm["failures"]) <= {"missing", "invented", "empty", "truncated", "row", "infobox", "unknown", "names", "says"} and llm["failures"]
    assert report.shards == math.ceil(report.pages / OPTS.batch_size)


def test_vllm_render_rejects_when_asked(engine, geo_world, tmp_path, tiny_model):
    info, template = geo_world
    world = copy_world(info, tmp_path / "geo")
    opts = OPTS.model_copy(update={"on_failure": "reject", "retries": 0})
    report = render_world(world, opts, model=str(tiny_model), llm=engine)
    planned = {r[0] for r in _table(template, "SELECT url FROM pages")}
    kept = {r[0] for r in _table(world, "SELECT url FROM pages")}
    rejected = _table(world, "SELECT url, problems FROM rejected")
    assert report.rejected == len(rejected) > 0 and report.accepted == len(kept)
    assert kept | {r[0] for r in rejected} == planned and not kept & {r[0] for r in rejected}
    assert all(problems for _, problems in rejected)
    # A rejected page has no provenance rows and is not searchable.
    assert not {r[0] for r in _table(world, "SELECT DISTINCT url FROM page_facts")} & {r[0] for r in rejected}
    assert report.llm["requests"] == len(planned)


def test_prompt_shape_and_too_long_pages(engine, geo_world):
    """The system prompt is the shared first message; a page whose prompt cannot fit the
    context window falls back without failing its batch."""
    info, _ = geo_world
    view = WorldView(open_world(info.path), OPTS)
    pages = list(plan_pages(view))[:6]

    class Padded(VLLMWriter):
        def conversation(self, page):
            conv = super().conversation(page)
            if page is pages[2]:
                conv[1]["content"] += " padding" * 6000
            return conv

    writer = Padded(view, OPTS.model_copy(update={"retries": 0}), engine, TemplateWriter(view))
    convs = [writer.conversation(p) for p in pages]
    assert all(c[0] == {"role": "system", "content": SYSTEM_PROMPT} for c in convs)
    assert all(p.url in c[1]["content"] and p.title in c[1]["content"] for p, c in zip(pages, convs))
    out = writer.write_batch(pages)
    assert out[2].source == "fallback" and out[2].problems == ["too_long prompt exceeds max_model_len"]
    assert writer.stats.too_long == 1 and writer.stats.requests == 5
    view.close()


def test_cli_render_vllm_and_model_errors(geo_world, tmp_path, tiny_model):
    info, _ = geo_world
    world = copy_world(info, tmp_path / "geo")
    runner = CliRunner()
    r = runner.invoke(app, ["render", str(world), "--backend", "vllm", "--model", str(tmp_path / "missing")])
    assert r.exit_code == 1 and "does not exist" in r.output
    r = runner.invoke(app, ["render", str(world), "--backend", "vllm", "--model", str(tiny_model), "--retries", "0",
                            "--max-tokens", "8", "--batch-size", "256"])
    assert r.exit_code == 0, r.output
    assert "prefix-cache share" in r.output and "fell back to template" in r.output
    r = runner.invoke(app, ["search", str(world), "capital"])
    assert r.exit_code == 0 and "[1] https://" in r.output


def test_cli_render_refuses_a_broken_gguf_file_with_one_line(geo_world, tmp_path):
    """An empty, foreign or truncated .gguf is named with the reason, exit 1, no traceback,
    nothing converted into the model cache."""
    pytest.importorskip("gguf")
    info, _ = geo_world
    world = copy_world(info, tmp_path / "geo")
    runner = CliRunner()
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(b"PK\x03\x04" + bytes(4096))
    truncated = tmp_path / "truncated.gguf"  # the signature and version, then the file stops
    truncated.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (291).to_bytes(8, "little") + bytes(5))
    cache = tmp_path / "cache"
    for bad, says in ((empty, "not a GGUF model file"), (foreign, "not a GGUF model file"),
                      (truncated, "cannot read the GGUF model")):
        r = runner.invoke(app, ["render", str(world), "--backend", "vllm", "--model", str(bad)],
                          env={"WORLDFORGE_CACHE": str(cache)})
        assert r.exit_code == 1, (bad.name, r.output)
        assert says in r.output and bad.name in r.output and "Traceback" not in r.output, r.output
        assert not (cache / "models").exists() or not any((cache / "models").iterdir())


def test_paraphrase_through_vllm_keeps_only_faithful_rewrites(engine, geo_world, tmp_path):
    """Questions go through the engine in one batch; noise from random weights never names every
    column and constraint value, so every rewrite is rejected and the template questions stay."""
    import shutil

    from worldforge.tasks import generate_tasks, read_tasks
    from worldforge.world.options import TasksOptions
    from worldforge.world.pack import Range

    _, template = geo_world
    w = tmp_path / "geo"
    shutil.copytree(template, w)
    opts = TasksOptions(table=4, multihop=4, rows=Range(min=2, max=60))
    plain = generate_tasks(w, opts)
    before = read_tasks(w)
    assert plain.paraphrased == {} and len(before) == 8
    report = generate_tasks(w, opts, llm=engine, force=True)
    after = read_tasks(w)
    assert report.paraphrased == {"accepted": 0, "rejected": 8}
    assert [r["query"] for r in after] == [r["query"] for r in before]
    assert all("template_query" not in r for r in after)


def test_sigterm_stops_a_vllm_render_cleanly_and_it_resumes(geo_world, tmp_path, tiny_model):
    """A batch scheduler's SIGTERM mid-render: exit 143 with one line, no traceback, the vLLM
    engine's worker processes gone with it (none left in the command's process group), the
    finished batches kept; the same command again resumes them and finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    info, _ = geo_world
    world = copy_world(info, tmp_path / "geo")
    cmd = [sys.executable, "-m", "worldforge", "render", str(world), "--backend", "vllm", "--model", str(tiny_model),
           "--retries", "0", "--max-tokens", "8", "--batch-size", "8"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    shards = world / ".web.partial" / "shards"
    deadline = time.time() + 400
    while time.time() < deadline and p.poll() is None and len(list(shards.glob("*.json"))) < 2:
        time.sleep(0.2)
    assert p.poll() is None, "the render finished before it could be stopped"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 143 and "terminated (SIGTERM)" in err and "Traceback" not in err, err[-2000:]
    def group_alive() -> bool:
        try:
            os.killpg(p.pid, 0)
            return True
        except ProcessLookupError:
            return False

    deadline = time.time() + 30  # the engine core notices its parent's shutdown and exits within seconds
    while group_alive() and time.time() < deadline:
        time.sleep(0.5)
    assert not group_alive(), "a process of the render (an engine core or worker) outlived it"
    kept = len(list(shards.glob("*.json")))
    assert kept >= 2
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "shards resumed" in r.stdout and f"{kept} of" in r.stdout.split("shards resumed", 1)[1].splitlines()[0]

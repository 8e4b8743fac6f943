"""The environment server with real clients: httpx over HTTP, the mcp SDK's client over
streamable HTTP; the same episode gives the same tool results over HTTP as in-process; every
bad request is a 4xx with a message and the server survives a fuzzed storm; limits and expiry."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from tests.conftest import served  # noqa: E402
from worldforge.rollout.env import TOOLS  # noqa: E402
from worldforge.serve.app import create_app  # noqa: E402
from worldforge.serve.env import WebSearchEnv, parse_tool_calls  # noqa: E402
from worldforge.serve.service import EnvironmentService, ServiceError, ServiceLimits  # noqa: E402
from worldforge.world.options import RolloutOptions  # noqa: E402


def _rows(dataset, fmt):
    return [json.loads(x) for p in sorted((dataset / "jsonl" / fmt).glob("*.jsonl")) for x in p.read_text().splitlines()]


def _trajectories(dataset) -> list[dict]:
    """The exported trajectories, each joined back from its segment rows (`context.joined`), in order."""
    from worldforge.rollout.context import joined

    groups: dict[str, list[dict]] = {}
    for r in _rows(dataset, "sft"):
        groups.setdefault(r["trajectory_id"], []).append(r)
    out = []
    for rows in groups.values():
        first = min(rows, key=lambda r: r["segment"])
        assert len(rows) == first["segments"]  # every segment of a kept trajectory is exported
        out.append({**first, "id": first["trajectory_id"], "messages": joined(rows)})
    return out


def _service(world, dataset, **kw):
    man = json.loads((dataset / "manifest.json").read_text())
    return EnvironmentService(world, RolloutOptions.model_validate(man["rollout"]["options"]),
                              seed=man["seeds"]["perturbations"], **kw)


@pytest.fixture(scope="module")
def server(small_run):
    """A real uvicorn server in a background thread: (base URL, service)."""
    _, world, dataset = small_run
    service = _service(world, dataset)
    with served(create_app(service)) as url:
        yield url, service
    service.close()


def test_http_episodes_replay_the_exported_trajectories_exactly(server, small_run):
    """Same task, sample and seed: every tool result over HTTP is the in-process one, and the reward too."""
    url, _ = server
    _, _, dataset = small_run
    rows = _trajectories(dataset)
    checked = 0
    with httpx.Client(base_url=url) as c:
        for r in rows[:8]:
            got = c.post("/episodes", json={"task_id": r["instance_id"], "sample": r["sample"]})
            assert got.status_code == 201, got.text
            ep = got.json()
            assert ep["messages"] == [{"role": m["role"], "content": m["content"]} for m in r["messages"][:2]]
            want = {m["tool_call_id"]: m["content"] for m in r["messages"] if m["role"] == "tool"}
            for m in r["messages"][2:]:
                if m["role"] != "assistant":
                    continue
                calls = [{"id": tc["id"], "name": tc["function"]["name"], "arguments": tc["function"]["arguments"]}
                         for tc in m["tool_calls"] or []]
                out = c.post(f"/episodes/{ep['episode_id']}/step", json={"content": m["content"], "tool_calls": calls}).json()
                for o in out["observations"]:
                    assert o["content"] == want[o["tool_call_id"]]
                    checked += 1
            status = c.get(f"/episodes/{ep['episode_id']}/reward").json()
            assert status["done"] and status["reward"] == r["reward"]
            assert c.delete(f"/episodes/{ep['episode_id']}").status_code == 200
    assert checked > 30


def test_neutral_env_over_http_equals_in_process(server, small_run):
    url, _ = server
    _, world, dataset = small_run
    r = next(t for t in _trajectories(dataset) if t["reward"] == 1.0)
    turns = [m for m in r["messages"][2:] if m["role"] == "assistant"]
    man = json.loads((dataset / "manifest.json").read_text())
    local = WebSearchEnv.local(world, options=RolloutOptions.model_validate(man["rollout"]["options"]),
                               seed=man["seeds"]["perturbations"])
    remote = WebSearchEnv(url)
    try:
        outs = []
        for env in (remote, local):
            env.reset(r["instance_id"], sample=r["sample"])
            seen = []
            for m in turns:
                text = m["content"] + "".join(f'\n<tool_call>\n{{"name": "{tc["function"]["name"]}", "arguments": '
                                              f'{tc["function"]["arguments"]}}}\n</tool_call>' for tc in m["tool_calls"] or [])
                res = env.step(text)
                seen.append([o["content"] for o in res.observations])
            outs.append((seen, env.reward()))
        assert outs[0] == outs[1] and outs[0][1] == r["reward"] == 1.0
    finally:
        remote.close()
        local.close()


def test_tool_schemas_are_identical_everywhere(server, small_run):
    """SFT rows, RL rows, GET /tools, MCP, the verl kit and TRL's schema of the environment's methods."""
    url, _ = server
    _, _, dataset = small_run
    assert all(json.loads(r["tools"]) == TOOLS for r in _rows(dataset, "sft"))
    assert all(json.loads(r["extra_info"]["tools"]) == TOOLS for r in _rows(dataset, "rl"))
    assert httpx.get(f"{url}/tools").json()["tools"] == TOOLS
    kit = yaml.safe_load((dataset / "kits" / "verl" / "tool_config.yaml").read_text())
    assert [t["tool_schema"] for t in kit["tools"]] == TOOLS
    for t in TOOLS:  # the keys verl's schema model keeps: nothing is dropped on the way to the prompt
        p = t["function"]["parameters"]
        assert "required" in p and all(set(v) <= {"type", "description", "enum"} for v in p["properties"].values())
    from transformers.utils import get_json_schema

    from worldforge.serve.trl import WorldforgeToolEnv

    env = WorldforgeToolEnv.__new__(WorldforgeToolEnv)
    assert [get_json_schema(getattr(env, t["function"]["name"])) for t in TOOLS] == TOOLS

    async def mcp_tools():
        from mcp import Client

        async with Client(f"{url}/mcp") as client:
            return (await client.list_tools()).tools

    listed = {t.name: t.input_schema for t in asyncio.run(mcp_tools())}
    assert {k: v for k, v in listed.items() if k in ("web_search", "web_extractor")} == {
        t["function"]["name"]: t["function"]["parameters"] for t in TOOLS[:2]}
    from worldforge.serve.mcp import EPISODE_TOOLS

    assert {k: v for k, v in listed.items() if k not in ("web_search", "web_extractor")} == {
        t["name"]: t["input_schema"] for t in EPISODE_TOOLS}


def test_verl_keeps_the_schemas_whole():
    schemas = pytest.importorskip("verl.tools.schemas")
    for t in TOOLS:
        assert schemas.OpenAIFunctionToolSchema.model_validate(t).model_dump(exclude_unset=True, exclude_none=True) == t


def test_mcp_client_calls_the_tools(server):
    url, service = server

    async def run():
        from mcp import Client

        async with Client(f"{url}/mcp") as client:
            ok = await client.call_tool("web_search", {"query": "companies", "offset": 10})
            bad = await client.call_tool("web_extractor", {"url": "ftp://nowhere"})
            return ok, bad

    ok, bad = asyncio.run(run())
    assert not ok.is_error and ok.content[0].text == service.base.engine.call("web_search", {"query": "companies", "offset": 10})
    assert bad.is_error and "malformed URL" in bad.content[0].text
    assert httpx.post(f"{url}/tools/web_search", json={"query": "companies", "offset": 10}).json()["content"] == ok.content[0].text


def test_mcp_runs_episodes_in_the_perturbed_web_with_their_reward(server, small_run):
    """MCP's episode tools replay an exported trajectory exactly as HTTP does: the perturbed
    tool results call for call, then the reward; bad ids are error results, not failures."""
    url, _ = server
    _, _, dataset = small_run
    r = _trajectories(dataset)[2]
    want = [m["content"] for m in r["messages"] if m["role"] == "tool"]

    async def run():
        from mcp import Client

        async with Client(f"{url}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            listed = json.loads((await client.call_tool("list_tasks", {"kind": "table", "limit": 3})).content[0].text)
            start = await client.call_tool("start_episode", {"task_id": r["instance_id"], "sample": r["sample"]})
            ep = json.loads(start.content[0].text)
            got, last = [], None
            for m in r["messages"][2:]:
                if m["role"] != "assistant":
                    continue
                calls = [{"name": tc["function"]["name"], "arguments": json.loads(tc["function"]["arguments"])}
                         for tc in m["tool_calls"] or []]
                last = await client.call_tool("episode_step", {"episode_id": ep["episode_id"], "content": m["content"],
                                                               "tool_calls": calls})
                assert not last.is_error, last.content[0].text
                got += [o["content"] for o in last.structured_content["observations"]]
            reward = await client.call_tool("episode_reward", {"episode_id": ep["episode_id"]})
            end = await client.call_tool("end_episode", {"episode_id": ep["episode_id"]})
            gone = await client.call_tool("episode_step", {"episode_id": ep["episode_id"], "tool_calls": []})
            bad = await client.call_tool("start_episode", {"task_id": "nope"})
            return names, listed, ep, got, last, reward, end, gone, bad

    names, listed, ep, got, last, reward, end, gone, bad = asyncio.run(run())
    assert {"web_search", "web_extractor", "list_tasks", "start_episode", "episode_step", "episode_reward", "end_episode"} <= names
    assert len(listed["tasks"]) == 3 and all(t["kind"] == "table" for t in listed["tasks"]) and listed["total"] >= 3
    assert ep["messages"] == [{"role": m["role"], "content": m["content"]} for m in r["messages"][:2]]
    assert got == want and last.structured_content["done"]
    assert json.loads(reward.content[0].text)["reward"] == r["reward"] and not end.is_error
    assert gone.is_error and gone.content[0].text.startswith("Error:") and "no open episode" in gone.content[0].text
    assert bad.is_error and "no task" in bad.content[0].text


def test_mcp_get_is_refused_at_once_and_holds_nothing_open(server):
    """GET /mcp was an event stream held open forever (1,000 of them took 76 MiB): now a 405 with
    the reason, answered at once."""
    url, _ = server
    for _ in range(50):
        r = httpx.get(f"{url}/mcp", headers={"Accept": "text/event-stream"}, timeout=5)
        assert r.status_code == 405 and "POST" in r.json()["error"]
    assert httpx.delete(f"{url}/mcp", timeout=5).status_code == 405


def test_clients_that_go_away_mid_request_leave_no_traceback(server, caplog):
    url, _ = server
    host, port = url.removeprefix("http://").split(":")
    with caplog.at_level("WARNING"):
        for path in ("/tools/web_search", "/episodes", "/retrieve", "/mcp"):
            for _ in range(5):
                s = socket.create_connection((host, int(port)))
                s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: 500\r\n\r\n{\"query\": \"com".encode())
                time.sleep(0.05)
                s.close()
        time.sleep(0.5)
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()], caplog.text[:2000]


def test_retrieve_speaks_search_r1(server):
    url, service = server
    got = httpx.post(f"{url}/retrieve", json={"queries": ["companies", "universities"], "topk": 3, "return_scores": True}).json()
    assert len(got["result"]) == 2 and all(len(r) == 3 for r in got["result"])
    first = got["result"][0][0]
    results, _ = service.base.engine.search("companies")
    assert first["document"]["id"] == results[0]["url"]
    assert first["document"]["contents"].split("\n")[0] == results[0]["title"] and isinstance(first["score"], float)
    plain = httpx.post(f"{url}/retrieve", json={"queries": ["companies"], "topk": 2}).json()["result"][0]
    assert [d["id"] for d in plain] == [r["url"] for r in results[:2]]


def test_retrieve_takes_a_whole_search_r1_batch_and_answers_bad_queries_one_by_one(server):
    """Search-R1's client posts a whole batch ({"queries", "topk", "return_scores": True}) and reads
    `result[i]`, each document's `contents` split into a title line and text. 2,560 queries go in
    one request; an empty or non-string query gets no documents and the rest their results;
    topk 0 or none is Search-R1's default (3)."""
    url, service = server
    words = ["companies", "universities", "cities", "players", "clubs", "researchers", "founded", "river", "league", "award"]
    queries = [f"{words[i % 10]} {words[(i // 10) % 10]} {i}" for i in range(2_560)]
    queries[7], queries[900] = "", "   "
    t0 = time.perf_counter()
    r = httpx.post(f"{url}/retrieve", json={"queries": queries, "topk": 3, "return_scores": True}, timeout=120)
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    got = r.json()
    assert len(got["result"]) == 2_560 and got["result"][7] == got["result"][900] == []
    assert [e["index"] for e in got["errors"]] == [7, 900] and "empty query" in got["errors"][0]["error"]
    for i in (0, 1, 2_559):
        want, _ = service.base.engine.search(queries[i], 0, 3)
        assert [d["document"]["id"] for d in got["result"][i]] == [w["url"] for w in want]
    for doc in got["result"][0]:  # what Search-R1's _passages2string reads
        title, *text = doc["document"]["contents"].split("\n")
        assert title and text and isinstance(doc["score"], float)
    print(f"2,560 queries in one /retrieve request: {took:.2f} s")
    for topk in (0, None):
        plain = httpx.post(f"{url}/retrieve", json={"queries": ["companies", 5], "topk": topk}).json()
        assert len(plain["result"][0]) == 3 and plain["result"][1] == [] and plain["errors"][0]["index"] == 1
    assert httpx.post(f"{url}/retrieve", json={"queries": ["a"] * 10_001}).status_code == 413


BAD = [
    ("POST", "/episodes", b"{", 400), ("POST", "/episodes", b"[1]", 422), ("POST", "/episodes", b'{"task_id": 5}', 422),
    ("POST", "/episodes", b'{"task_id": "nope"}', 404), ("POST", "/episodes/ep_0/step", b"{}", 404),
    ("GET", "/episodes/nope", None, 404), ("DELETE", "/episodes/nope", None, 404), ("GET", "/nope", None, 404),
    ("PUT", "/episodes", b"{}", 405), ("POST", "/retrieve", b'{"queries": 3}', 422),
    ("POST", "/retrieve", b'{"queries": ["a"], "topk": -1}', 422), ("POST", "/tools/nope", b"{}", 404),
    ("POST", "/tools/web_search", b'{"query": ""}', 422), ("POST", "/episodes", b'{"task_id": "x"' + b" " * (2 << 20) + b"}", 413),
    ("POST", "/episodes", b"\xff\xfe\x00", 400), ("POST", "/episodes", b"[" * 100_000, 400),
    ("POST", "/tools/web_search", b'{"query": "a\\ud800b"}', 422),  # a lone surrogate: valid JSON, not Unicode text
    ("POST", "/tools/web_extractor", b'{"url": "https://ismerpedia.org/wiki/\\udcff"}', 422),
]


@pytest.mark.parametrize(("method", "path", "body", "status"), BAD)
def test_bad_requests_are_4xx_with_a_message(server, method, path, body, status):
    url, _ = server
    r = httpx.request(method, url + path, content=body)
    assert r.status_code == status and r.json()["error"]
    assert httpx.get(f"{url}/health").json()["status"] == "ok"


def test_bad_steps_are_4xx_or_error_results(server, small_run):
    url, _ = server
    _, _, dataset = small_run
    task = _rows(dataset, "rl")[0]["extra_info"]["instance_id"]
    with httpx.Client(base_url=url) as c:
        eid = c.post("/episodes", json={"task_id": task}).json()["episode_id"]
        for body, status in (({"tool_calls": 3}, 422), ({"tool_calls": [5]}, 422), ({"name": 5}, 422),
                             ({"content": 7}, 422), ({"tool_calls": [{"name": "x"}] * 65}, 422)):
            r = c.post(f"/episodes/{eid}/step", json=body)
            assert r.status_code == status and r.json()["error"]
        r = c.post(f"/episodes/{eid}/step", json={"tool_calls": [{"name": "web_search", "arguments": "{oops"},
                                                                 {"name": "nope", "arguments": {}},
                                                                 {"name": "web_extractor", "arguments": {"url": 3}}]}).json()
        assert [o["content"].startswith("Error") for o in r["observations"]] == [True, True, True] and not r["done"]
        r = c.post(f"/episodes/{eid}/step", content=b'{"tool_calls": [{"name": "web_search", "arguments": {"query": "a\\ud800"}}, '
                   b'{"name": "web_extractor", "arguments": {"url": "https://ismerpedia.org/wiki/\\udcff"}}]}')
        assert r.status_code == 200 and [o["content"][:6] for o in r.json()["observations"]] == ["Error:", "Error:"], r.text
        assert c.post(f"/episodes/{eid}/step", json={"name": "final_answer", "arguments": {"answer": "| x |"}}).json()["done"]
        assert c.post(f"/episodes/{eid}/step", json={"name": "web_search", "arguments": {"query": "a"}}).status_code == 409
        c.delete(f"/episodes/{eid}")


def test_an_answer_is_scored_off_the_event_loop_and_nobody_waits_on_it(server, small_run):
    """A final answer is scored in a worker thread while the server answers others: /health on
    another connection returns while the answer is still being scored (it was scored on the event
    loop: /health waited 55.7 s on a 0.5 MB answer), and the reward is the one scoring gives."""
    import threading

    import httpx

    from worldforge.rollout.env import Episode

    url, service = server
    task = next(t for t in service.tasks.values() if t.record["kind"] == "table")
    answer = task.gold_markdown()
    started, release, where = threading.Event(), threading.Event(), []
    real = Episode.score_of

    def slow(self, text):  # the scorer, held until /health has been answered
        where.append(threading.get_ident())
        started.set()
        assert release.wait(30)
        return real(self, text)

    Episode.score_of = slow
    try:
        with httpx.Client(base_url=url, timeout=60) as c, httpx.Client(base_url=url, timeout=5) as h:
            eid = c.post("/episodes", json={"task_id": task.id}).json()["episode_id"]
            out = {}
            t = threading.Thread(target=lambda: out.update(c.post(f"/episodes/{eid}/step", json={
                "name": "final_answer", "arguments": {"answer": answer}}).json()))
            t.start()
            assert started.wait(30)
            assert h.get("/health").json()["status"] == "ok" and t.is_alive()  # answered while the scorer runs
            release.set()
            t.join(30)
            c.delete(f"/episodes/{eid}")
    finally:
        Episode.score_of = real
        release.set()
    assert out["done"] and out["end"] == "answer" and out["reward"] == 1.0
    assert len(where) == 1  # scored once, ahead of the turn (the turn used that score)


def test_serve_splits_keeps_held_out_tasks_out_of_episodes(small_run):
    _, world, dataset = small_run
    service = _service(world, dataset, splits=("train",))
    try:
        split = {t["instance_id"]: t["split"] for t in map(json.loads, (world / "tasks" / "tasks.jsonl").read_text().splitlines())}
        assert set(service.tasks) == {k for k, v in split.items() if v == "train"} and len(service.tasks) < len(split)
        held = next(k for k, v in split.items() if v != "train")
        with pytest.raises(ServiceError, match=f"in the {split[held]} split, and this server serves only train"):
            service.create({"task_id": held})
        assert service.create({"task_id": next(iter(service.tasks))})["episode_id"]
    finally:
        service.close()


def test_kits_fail_in_one_line_when_no_server_answers(small_run, tmp_path):
    """A dead port, a host that does not resolve, an address that is no URL, and a port that
    accepts but never answers: each kit that needs the server exits 1 with one line naming the
    address and the fix, after a bounded wait, and no traceback."""
    import subprocess
    import sys

    _, _, dataset = small_run
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()
    cases = {f"http://127.0.0.1:{dead_port}": "Connection refused", "http://nohost.invalid:8000": "no worldforge server answers",
             "localhost:8000": "is not a server address", f"http://127.0.0.1:{silent.getsockname()[1]}": "did not answer in time"}
    try:
        for kit in (dataset / "kits" / "env.py", dataset / "kits" / "trl" / "grpo.py"):
            for url, said in cases.items():
                r = subprocess.run([sys.executable, str(kit), "MODEL"], capture_output=True, text=True, timeout=120,
                                   env={**os.environ, "WORLDFORGE_URL": url, "WORLDFORGE_WAIT": "2"})
                err = r.stderr.strip()
                assert r.returncode == 1 and said in err and "Traceback" not in err and len(err.splitlines()) == 1, (kit, url, err)
                assert err.startswith("error: ") and ("kits/serve.sh" in err or "http://127.0.0.1:8000" in err)
        shell = subprocess.run(["bash", str(dataset / "kits" / "verl" / "run_grpo.sh")], capture_output=True, text=True, timeout=120,
                               env={**os.environ, "MODEL": "m", "WORLDFORGE_URL": f"http://127.0.0.1:{dead_port}",
                                    "WORLDFORGE_WAIT": "2", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
        assert shell.returncode == 1 and "Traceback" not in shell.stderr and "no worldforge server answers" in shell.stderr
    finally:
        silent.close()


def test_open_episode_limit_and_expiry(small_run):
    from starlette.testclient import TestClient

    _, world, dataset = small_run
    now = [0.0]
    service = _service(world, dataset, limits=ServiceLimits(max_episodes=2, ttl=60), clock=lambda: now[0])
    task = next(iter(service.tasks))
    try:
        with TestClient(create_app(service, mcp=False)) as c:
            a = c.post("/episodes", json={"task_id": task}).json()["episode_id"]
            c.post("/episodes", json={"task_id": task, "sample": 1})
            r = c.post("/episodes", json={"task_id": task})
            assert r.status_code == 429 and "limit" in r.json()["error"]
            now[0] = 30.0
            assert c.get(f"/episodes/{a}").status_code == 200  # used: a's idle time restarts
            now[0] = 75.0  # b idle for 75 s: expired; a for 45 s: alive
            assert c.post("/episodes", json={"task_id": task}).status_code == 201
            now[0] = 200.0
            r = c.get(f"/episodes/{a}")
            assert r.status_code == 410 and "expired" in r.json()["error"]
    finally:
        service.close()
    with pytest.raises(ServiceError):
        service.create({"task_id": task, "seed": -1})


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                       lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4),
                       max_leaves=12)
KEYS = st.sampled_from(["task_id", "seed", "sample", "name", "arguments", "tool_calls", "content", "queries", "topk",
                        "return_scores", "query", "url", "offset"])


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH"]),
       path=st.sampled_from(["/episodes", "/episodes/{eid}/step", "/episodes/{eid}", "/episodes/{eid}/reward", "/retrieve",
                             "/tools/web_search", "/tools/web_extractor", "/tools/x", "/health", "/tasks", "/x/y"]),
       body=st.one_of(st.dictionaries(KEYS, JSONISH, max_size=5), JSONISH, st.binary(max_size=60)))
def test_fuzzed_requests_never_break_the_server(server, method, path, body):
    url, service = server
    eid = next(iter(service.episodes), "ep_none")
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = httpx.request(method, url + path.format(eid=eid), content=data, timeout=30)
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert r.json()["error"]


def test_parse_tool_calls_reads_model_text():
    content, calls = parse_tool_calls('Looking.\n<tool_call>\n{"name": "web_search", "arguments": {"query": "a"}}\n</tool_call>'
                                      '<tool_call>\n{"name": "web_extractor", "arguments": {"url": "https://x.org/"}}\n'
                                      '</tool_call><think>ignore <tool_call>{}</tool_call></think>'
                                      '<function=final_answer>\n<parameter=answer>\n| a |\n</parameter>\n</function>')
    assert content == "Looking."
    assert calls == [{"name": "web_search", "arguments": {"query": "a"}}, {"name": "web_extractor", "arguments": {"url": "https://x.org/"}},
                     {"name": "final_answer", "arguments": {"answer": "| a |"}}]
    assert parse_tool_calls("<tool_call>{oops</tool_call>")[1] == [{"name": "?", "arguments": "{oops"}]


def test_serve_from_manifest_rebuilds_the_same_world(small_run, tmp_path):
    from worldforge.plumbing import sha256_file
    from worldforge.serve.build import rebuild_from_manifest

    _, world, dataset = small_run
    man = json.loads((dataset / "manifest.json").read_text())
    said = []
    path, options, seed = rebuild_from_manifest(dataset / "manifest.json", tmp_path / "build", on_stage=said.append)
    assert sha256_file(path / "tasks" / "tasks.jsonl") == sha256_file(world / "tasks" / "tasks.jsonl") == man["tasks_sha256"]
    assert seed == man["seeds"]["perturbations"] and options.model_dump(mode="json") == man["rollout"]["options"]
    assert any("planning" in m for m in said)
    said.clear()
    assert rebuild_from_manifest(dataset / "manifest.json", tmp_path / "build", on_stage=said.append)[0] == path
    assert said and "already holds" in said[0]  # the second time, nothing is rebuilt
    service = EnvironmentService(path, options, seed=seed)
    try:
        r = _trajectories(dataset)[0]
        ep = service.create({"task_id": r["instance_id"], "sample": r["sample"]})
        first = next(m for m in r["messages"] if m["role"] == "assistant" and m["tool_calls"])
        out = service.step(ep["episode_id"], {"tool_calls": [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                                                             for c in first["tool_calls"]]})
        want = {m["tool_call_id"]: m["content"] for m in r["messages"] if m["role"] == "tool"}
        ids = [c["id"] for c in first["tool_calls"]]
        assert len(out["observations"]) == len(ids)
        assert all(o["content"] == want[i] for i, o in zip(ids, out["observations"]))
    finally:
        service.close()
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({k: v for k, v in man.items() if k != "world"}))
    with pytest.raises(Exception, match="holds no world"):
        rebuild_from_manifest(bad, tmp_path / "b2")


def test_from_manifest_never_replaces_a_folder_it_did_not_make(small_run, tmp_path):
    """A world folder of the same name made from another spec (a run's, with its trajectories)
    is left alone: a clear error names it and the fix, before any work; --force replaces it. A
    device, an oversized or a mistyped manifest is refused before anything is built."""
    from worldforge.errors import ExportError
    from worldforge.serve.build import MAX_MANIFEST_BYTES, rebuild_from_manifest

    _, world, dataset = small_run
    man = json.loads((dataset / "manifest.json").read_text())
    theirs = tmp_path / "build" / world.name
    (theirs / "rollout").mkdir(parents=True)
    (theirs / "rollout" / "trajectories.jsonl").write_text("{}\n")
    (theirs / "run.json").write_text("{}")
    with pytest.raises(ExportError, match=r"holds another world .* another --build-dir, or --force"):
        rebuild_from_manifest(dataset / "manifest.json", tmp_path / "build")
    assert (theirs / "rollout" / "trajectories.jsonl").read_text() == "{}\n" and (theirs / "run.json").is_file()
    for field, value in (("tasks_sha256", 12345), ("tasks_sha256", "abc"), ("seeds", {"perturbations": "7"}),
                         ("rollout", {"options": None})):
        bad = tmp_path / "typed.json"
        bad.write_text(json.dumps(dict(man, **{field: value})))
        with pytest.raises(ExportError, match=f"`{field}"):
            rebuild_from_manifest(bad, tmp_path / "other")
    assert not (tmp_path / "other").exists()
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(MAX_MANIFEST_BYTES + 10)  # (sparse: nothing is written)
    for path in (huge, Path("/dev/zero"), tmp_path):
        with pytest.raises(ExportError, match="larger than|is not a file"):
            rebuild_from_manifest(path, tmp_path / "other")
    path, _, _ = rebuild_from_manifest(dataset / "manifest.json", tmp_path / "build", force=True)
    assert path == theirs and not (theirs / "rollout").exists()
    assert rebuild_from_manifest(dataset / "manifest.json", tmp_path / "build")[0] == path  # its own folder: no --force


def test_a_tampered_manifest_is_refused_without_writing_outside_the_build(small_run, tmp_path):
    """Pack names in a manifest become file names: `../../x` or an absolute name would write
    outside --build-dir; a null, object or non-JSON `world` gave a traceback."""
    from worldforge.errors import ExportError
    from worldforge.serve.build import rebuild_from_manifest

    _, _, dataset = small_run
    man = json.loads((dataset / "manifest.json").read_text())
    world = json.loads(man["world"])
    outside = tmp_path / "outside"
    for name in ("../../outside/x", str(outside / "y"), "Sport", ""):
        bad = tmp_path / "bad.json"
        w = dict(world, pack_yaml={name: "pack: x\n", **world["pack_yaml"]})
        bad.write_text(json.dumps(dict(man, world=json.dumps(w))))
        with pytest.raises(ExportError, match="is not a pack name"):
            rebuild_from_manifest(bad, tmp_path / "build" / "deep")
    assert not outside.exists() and not (tmp_path / "x.yaml").exists()
    for value in (None, {"spec": {}}, "{not json", json.dumps([1]), json.dumps({"spec": {}, "pack_yaml": {"sport": 3}})):
        bad.write_text(json.dumps(dict(man, world=value)))
        with pytest.raises(ExportError, match="`world` field is damaged"):
            rebuild_from_manifest(bad, tmp_path / "build")


def test_serve_says_why_it_cannot_listen(small_run):
    """A port in use or a host that does not resolve is a one-line error, exit 1 (uvicorn exited
    3, a code the README did not name, after its own log line)."""
    import socket

    from typer.testing import CliRunner

    from worldforge.cli import app

    _, world, _ = small_run
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = CliRunner().invoke(app, ["serve", str(world), "--port", str(port)])
        assert r.exit_code == 1 and "cannot listen on 127.0.0.1" in r.output and "choose another --port" in r.output, r.output
    r = CliRunner().invoke(app, ["serve", str(world), "--host", "no-such-host.invalid", "--port", str(port)])
    assert r.exit_code == 1 and "does not resolve" in r.output, r.output

"""Load benchmark of the environment server (`worldforge serve`).

Starts the server in its own process on a world (the demo world, built first with
`worldforge run worlds/demo.yaml` unless --world is given), then drives N concurrent
episodes for D seconds from this process: each episode replays one of the world's stored
oracle trajectories over HTTP, one request per assistant turn with that turn's tool calls
(`POST /episodes`, then `POST /episodes/ID/step` per turn, `DELETE` at the end), and a new episode starts when one
ends. Agents think between turns: `--think` seconds per episode (default 0.25, a fast LLM
turn); `--think 0` is a closed loop that measures
the server's saturation. A malformed-request storm runs alongside (`--storm` requests/s of
bad JSON, wrong types, unknown episodes, oversized bodies, unknown routes; every answer must
be a 4xx, GET /mcp included). Halfway through, a Search-R1 client posts one /retrieve batch of
`--retrieve` queries (default 2,560, its largest batch), answered in 5 ms slices between the
episodes' requests. Prints requests/s, p50/p99 latency per tool, the batch's time, and errors. Then two hostile
final answers (5,000 junk rows; the gold's keys with numbers for every value) are scored while
another connection polls /health: the step's time and the slowest /health (scoring runs in a
worker thread, so no request waits on it).

    python benchmarks/serve.py                              # demo world, 64 episodes, 60 s
    python benchmarks/serve.py --world build/demo --think 0 --seconds 20

The client is a minimal HTTP/1.1 keep-alive client over asyncio streams (one connection per
episode), so the client's own cost stays small beside the server's on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]
CLI = [sys.executable, "-m", "worldforge"]


class Connection:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: bytes | None = None, raw_headers: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n".encode() + raw_headers
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n"
        self.writer.write(head + b"\r\n" + (body or b""))
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("server closed the connection")
        status = int(status_line.split()[1])
        length, close = 0, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"connection" and v.strip().lower() == b"close":
                close = True
        data = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = self.reader = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def episodes_of(world: Path) -> list[tuple[str, int, list[tuple[str, bytes]]]]:
    """(task id, sample, [(request kind, step body)]) per stored trajectory: one step per
    assistant turn with that turn's calls, labelled by its tool (`web_extractor x3` for a turn
    opening three pages)."""
    out = []
    for line in (world / "rollout" / "trajectories.jsonl").read_text().splitlines():
        t = json.loads(line)
        steps = []
        for m in t["messages"]:
            if m["role"] != "assistant" or not m.get("tool_calls"):
                continue
            calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in m["tool_calls"]]
            names = sorted({c["name"] for c in calls})
            kind = names[0] if len(names) == 1 else "mixed"
            steps.append((kind, len(calls), json.dumps({"content": m["content"], "tool_calls": calls}).encode()))
        out.append((t["instance_id"], t["sample"], steps))
    return out


def bad_requests(rng: random.Random, big: bytes) -> list[tuple[str, str, bytes | None, bytes]]:
    junk = [b"{", b"[1, 2]", b'"text"', b"null", b"{\"task_id\": 5}", b"{\"task_id\": \"nope\"}", b"\xff\xfe",
            b'{"task_id": "x", "seed": -1}', b'{"tool_calls": "x"}', b'{"name": 3}', b"{" * 5000, b'{"queries": 7}']
    return [
        ("POST", "/episodes", rng.choice(junk), b""),
        ("POST", f"/episodes/ep_{rng.randrange(1 << 30):x}/step", b'{"name": "web_search", "arguments": {"query": "x"}}', b""),
        ("POST", "/episodes/x/step", rng.choice(junk), b""),
        ("GET", f"/episodes/nope{rng.randrange(100)}", None, b""),
        ("POST", "/retrieve", rng.choice(junk), b""),
        ("POST", "/tools/web_extractor", b'{"url": "ftp://nowhere"}', b""),
        ("POST", "/tools/nope", b"{}", b""),
        ("PUT", "/episodes", b"{}", b""),
        ("GET", "/no/such/route", None, b""),
        ("POST", "/episodes", big, b""),
        ("GET", "/mcp", None, b"Accept: text/event-stream\r\n"),  # was a stream held open forever
    ]


def retrieve_batch(eps: list, n: int) -> bytes:
    """A Search-R1 batch of `n` queries: the trajectories' searches, numbered so none repeats (no cache hits)."""
    qs = sorted({json.loads(a)["query"] if isinstance(a, str) else a["query"] for _, _, steps in eps for _, _, body in steps
                 for c in json.loads(body)["tool_calls"] if c["name"] == "web_search"
                 for a in [c["arguments"]] if "query" in (json.loads(a) if isinstance(a, str) else a)})
    return json.dumps({"queries": [f"{qs[i % len(qs)]} {i}" for i in range(n)], "topk": 3, "return_scores": True}).encode()


async def drive(port: int, eps: list, n: int, seconds: float, think: float, storm: float, seed: int,
                retrieve: int = 0) -> dict:
    lat: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    calls = 0
    storm_stats = {"sent": 0, "4xx": 0, "other": []}
    stop = time.perf_counter() + seconds
    rng = random.Random(seed)

    async def episode_loop(k: int) -> None:
        nonlocal calls
        conn = Connection("127.0.0.1", port)
        r = random.Random(seed * 1000 + k)
        await asyncio.sleep(r.random() * max(think, 0.01))  # spread the starts
        while time.perf_counter() < stop:
            task, sample, steps = eps[r.randrange(len(eps))]
            t0 = time.perf_counter()
            st, body = await conn.request("POST", "/episodes", json.dumps({"task_id": task, "sample": sample}).encode())
            lat["create"].append(time.perf_counter() - t0)
            if st != 201 and st != 200:
                errors.append(f"create {st} {body[:120]!r}")
                continue
            eid = json.loads(body)["episode_id"]
            for kind, n_calls, payload in steps:
                if time.perf_counter() >= stop:
                    break
                if think:
                    await asyncio.sleep(think * (0.5 + r.random()))
                t0 = time.perf_counter()
                st, body = await conn.request("POST", f"/episodes/{eid}/step", payload)
                lat[kind].append(time.perf_counter() - t0)
                lat[f"{kind} x{'1' if n_calls == 1 else '2+'}"].append(lat[kind][-1])
                calls += n_calls
                if st != 200:
                    errors.append(f"{kind} {st} {body[:120]!r}")
            t0 = time.perf_counter()
            st, body = await conn.request("DELETE", f"/episodes/{eid}")
            lat["close"].append(time.perf_counter() - t0)
            if st != 200:
                errors.append(f"close {st} {body[:120]!r}")
        conn.close()

    async def storm_loop() -> None:
        conn = Connection("127.0.0.1", port)
        big = b'{"task_id": "' + b"x" * (2 << 20) + b'"}'
        while time.perf_counter() < stop:
            await asyncio.sleep(1.0 / storm)
            method, path, body, headers = rng.choice(bad_requests(rng, big))
            try:
                st, data = await conn.request(method, path, body, headers)
            except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:  # the server may close after a 413
                conn.close()
                if body is not big:
                    storm_stats["other"].append(f"{method} {path}: {exc}")
                continue
            storm_stats["sent"] += 1
            ok = 400 <= st < 500 and "error" in json.loads(data or b"{}")
            storm_stats["4xx"] += ok
            if not ok:
                storm_stats["other"].append(f"{method} {path} -> {st} {data[:100]!r}")

    t0 = time.perf_counter()
    batch = {}

    async def retrieve_once() -> None:
        await asyncio.sleep(seconds / 2)
        body = retrieve_batch(eps, retrieve)
        t0 = time.perf_counter()
        st, data = await Connection("127.0.0.1", port).request("POST", "/retrieve", body)
        batch.update(status=st, seconds=time.perf_counter() - t0, queries=retrieve,
                     answered=len(json.loads(data).get("result", [])) if st == 200 else 0)

    await asyncio.gather(*(episode_loop(k) for k in range(n)), *([storm_loop()] if storm else []),
                         *([retrieve_once()] if retrieve else []))
    wall = time.perf_counter() - t0
    return {"lat": lat, "errors": errors, "calls": calls, "wall": wall, "storm": storm_stats, "retrieve": batch}


def hostile_answers(world: Path) -> tuple[str, list[tuple[str, str]]]:
    """(task id, [(label, answer)]): answers a degenerate policy writes, for the widest table task:
    the gold table plus 5,000 junk rows (about half the 1 MiB body limit), and the gold's keys with
    a number in every other cell (each cell of a date column is one that dateparser cannot read, the
    scorer's slowest)."""
    import csv

    tasks = [json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()]
    def gold(t):
        return list(csv.reader((world / "tasks" / "gold" / f"{t['instance_id']}.csv").open(encoding="utf-8")))
    t = max((t for t in tasks if t["kind"] == "table"), key=lambda t: len(gold(t)))
    header, *rows = gold(t)
    rng = random.Random(0)

    def md(rs):
        return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rs)])
    junk = [[f"Junk {i} {rng.random():.6f}" for _ in header] for i in range(5000)]
    keyed = [[r[0], *(f"{rng.random() * 1e6:.4f}" for _ in header[1:])] for r in rows]
    return t["instance_id"], [(f"gold + 5,000 junk rows ({len(md(rows + junk)) / 1e6:.2f} MB)", md(rows + junk)),
                              (f"the gold's {len(rows)} keys, numbers in every other cell", md(keyed))]


async def _poll_health(port: int, done: asyncio.Event) -> tuple[float, int]:
    """GET /health every 20 ms until `done`: (the slowest answer's seconds, answers)."""
    h, worst, polls = Connection("127.0.0.1", port), 0.0, 0
    while not done.is_set():
        t0 = time.perf_counter()
        await h.request("GET", "/health")
        worst, polls = max(worst, time.perf_counter() - t0), polls + 1
        await asyncio.sleep(0.02)
    h.close()
    return worst, polls


async def hostile(port: int, world: Path) -> list[tuple[str, float, float, int]]:
    """Each hostile answer submitted while another connection polls /health: (label, the step's
    seconds, the slowest /health's seconds, health requests answered meanwhile)."""
    task_id, answers = hostile_answers(world)
    out = []
    for label, answer in answers:
        c = Connection("127.0.0.1", port)
        _, data = await c.request("POST", "/episodes", json.dumps({"task_id": task_id}).encode())
        eid = json.loads(data)["episode_id"]
        body = json.dumps({"name": "final_answer", "arguments": {"answer": answer}}).encode()
        done = asyncio.Event()
        poller = asyncio.create_task(_poll_health(port, done))
        t0 = time.perf_counter()
        await c.request("POST", f"/episodes/{eid}/step", body)
        took = time.perf_counter() - t0
        done.set()
        worst, polls = await poller
        await c.request("DELETE", f"/episodes/{eid}")
        c.close()
        out.append((label, took, worst, polls))
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


def build_demo(tmp: Path) -> Path:
    res = subprocess.run([*CLI, "run", str(REPO / "worlds" / "demo.yaml"), "--build-dir", str(tmp / "build"),
                          "--out", str(tmp / "exports")], capture_output=True, text=True, check=False)
    if res.returncode:
        sys.exit(f"worldforge run failed:\n{res.stderr[-2000:]}")
    return tmp / "build" / "demo"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=Path, help="a world with tasks and trajectories (default: build the demo world)")
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--think", type=float, default=0.25, help="mean seconds an agent thinks between calls (0: closed loop)")
    ap.add_argument("--storm", type=float, default=50.0, help="malformed requests per second alongside (0: none)")
    ap.add_argument("--search-cache", type=int, default=8192, help="the server's search cache (0: off)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--retrieve", type=int, default=2560, help="queries in the Search-R1 /retrieve batch sent halfway (0: none)")
    ap.add_argument("--no-hostile", dest="hostile", action="store_false",
                    help="skip the hostile answers scored while /health is polled (after the load)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        world = a.world or build_demo(Path(tmp))
        eps = episodes_of(world)
        port = free_port()
        server = subprocess.Popen([*CLI, "serve", str(world), "--port", str(port), "--max-episodes", str(4 * a.episodes),
                                   "--search-cache", str(a.search_cache)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env={**os.environ})
        try:
            for _ in range(600):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if server.poll() is not None:
                        sys.exit(f"the server did not start:\n{server.stderr.read().decode()[-2000:]}")
                    time.sleep(0.1)
            r = asyncio.run(drive(port, eps, a.episodes, a.seconds, a.think, a.storm, a.seed, a.retrieve))
            bad = asyncio.run(hostile(port, world)) if a.hostile else []
            alive = server.poll() is None
            health = json.loads(asyncio.run(Connection("127.0.0.1", port).request("GET", "/health"))[1]) if alive else {}
        finally:
            server.terminate()
            server.wait(10)
    lat, st = r["lat"], r["storm"]
    print(f"world {world.name}: {len(eps)} trajectories replayed by {a.episodes} concurrent episodes for {r['wall']:.1f} s "
          f"(think {a.think} s, storm {a.storm}/s, search cache {a.search_cache})\n")
    print("| request (one assistant turn) | count | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|")
    kinds = ("web_search x1", "web_search x2+", "web_extractor x1", "web_extractor x2+", "final_answer x1", "mixed x2+",
             "create", "close")
    for k in kinds:
        if lat.get(k):
            print(f"| {k.replace(' x1', '').replace(' x2+', ' (several calls)')} | {len(lat[k]):,} | {pct(lat[k], 0.5):.2f} | "
                  f"{pct(lat[k], 0.99):.2f} | {max(lat[k]) * 1000:.2f} |")
    steps = [x for k in ("web_search", "web_extractor", "final_answer", "mixed") for x in lat.get(k, [])]
    print(f"| all steps | {len(steps):,} | {pct(steps, 0.5):.2f} | {pct(steps, 0.99):.2f} | {max(steps, default=0) * 1000:.2f} |")
    total = sum(len(lat.get(k, [])) for k in ("web_search", "web_extractor", "final_answer", "mixed", "create", "close"))
    print(f"\ntool calls/s {r['calls'] / r['wall']:,.0f}; all requests/s {(total + st['sent']) / r['wall']:,.0f}; "
          f"errors {len(r['errors'])}" + (f" (first: {r['errors'][0]})" if r["errors"] else ""))
    print(f"malformed requests {st['sent']:,}: {st['4xx']:,} answered 4xx with a message, {len(st['other'])} otherwise"
          + (f" (first: {st['other'][0]})" if st["other"] else "") + f"; server alive after the run: {alive}")
    b = r["retrieve"]
    if b:
        print(f"Search-R1 batch: {b['queries']:,} queries in one /retrieve request -> HTTP {b['status']}, {b['answered']:,} "
              f"answered in {b['seconds']:.2f} s ({b['queries'] / b['seconds']:,.0f} queries/s), alongside the episodes")
    if bad:
        print("\n| hostile final_answer (widest task) | step s | slowest /health ms | /health answered meanwhile |\n|---|---:|---:|---:|")
        for label, took, worst, polls in bad:
            print(f"| {label} | {took:.2f} | {worst * 1000:.1f} | {polls:,} |")
    cache = health.get("search_cache", {})
    if cache:
        print(f"search cache: {cache['hits']:,} hits, {cache['misses']:,} misses (the replay repeats the oracle's queries)")


if __name__ == "__main__":
    main()

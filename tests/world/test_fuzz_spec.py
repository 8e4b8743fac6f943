"""Property-based fuzzing of world specs and domain packs (hypothesis).

Each example mutates the demo spec and the shipped packs structurally (keys deleted,
renamed or duplicated; values replaced by other types, extreme or non-finite numbers,
huge strings, empty containers, bad dates, bad bounds, SQL and phrases that break, names
that collide), or mutates their YAML text, on a tiny world; then runs `validate` and, if
the spec is valid, `plan`, through the CLI in a worker process. The example fails on any
traceback, any exit code other than 0/1/2, a failed plan that leaves files behind, a
worker that dies (a signal, memory) or an example that takes longer than EXAMPLE_TIMEOUT.

The worker is one long-lived subprocess (imports paid once, restarted after a hang or a
death) with a memory limit. Inside it the SQL time limits are scaled down (2 s to compile,
5 s per query) so that the hang bound tests that they work rather than their size, and
valid worlds too big to plan in a second or two (more than 20,000 entities, 200,000
links or 20,000 faker values; validation caps real worlds far higher) are validated only.

    pytest tests/world/test_fuzz_spec.py                                  # CI: 150 examples, derandomized
    WORLDFORGE_FUZZ_EXAMPLES=1000 pytest tests/world/test_fuzz_spec.py    # a longer local run
"""

from __future__ import annotations

import copy
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
EXAMPLES = int(os.environ.get("WORLDFORGE_FUZZ_EXAMPLES", "150"))
EXAMPLE_TIMEOUT = float(os.environ.get("WORLDFORGE_FUZZ_TIMEOUT", "20"))
MEMORY_LIMIT = 6 * 2**30  # bytes of address space for the worker

TINY_COUNTS = {"country": 1, "person": 24, "company": 5, "university": 2, "researcher": 5, "award": 2,
               "publication": 5, "club": 2, "player": 5}
PACK_TYPES = {"geography": ["country"], "organisations": ["person", "company"],
              "academia": ["university", "researcher", "award", "publication"], "sport": ["club", "player"]}

WORKER = r'''
import json, os, resource, sys, traceback
from pathlib import Path

limit = int(os.environ["WORLDFORGE_FUZZ_MEMORY"])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from typer.testing import CliRunner

import worldforge.world.invariants as invariants
import worldforge.world.validate as validate
from worldforge.cli import app
from worldforge.world.pack import FakerAttr
from worldforge.world.spec import expected_counts

validate.COMPILE_TIME_LIMIT = 2.0
invariants.QUERY_TIME_LIMIT = 5.0
runner = CliRunner()
out, sys.stdout = sys.stdout, sys.stderr


def report(**kw):
    out.write("@@ " + json.dumps(kw) + "\n")
    out.flush()


def run(*args):
    r = runner.invoke(app, [str(a) for a in args])
    tb = None
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        tb = "".join(traceback.format_exception(r.exception))[-4000:]
    return r.exit_code, r.output[-3000:], tb


def too_big(world):
    ents = sum(hi for _, _, hi in expected_counts(world).values())
    links = sum(validate.planned_links(world).values())
    pools = sum(p.pool for et in world.types.values() for p in et.name.parts.values() if p.faker)
    pools += sum(a.pool for et in world.types.values() for a in et.attributes.values() if isinstance(a, FakerAttr))
    if ents > 20_000 or links > 200_000 or pools > 20_000:
        return f"{ents:,.0f} entities, {links:,.0f} links, {pools:,} faker values"
    return None


report(ready=True)
for line in sys.stdin:
    d = Path(json.loads(line)["dir"])
    res = {}
    code, output, tb = run("validate", d / "spec.yaml")
    res.update(validate=code, output=output, traceback=tb)
    if code == 0 and tb is None:
        try:
            res["skipped"] = too_big(validate.load_world(d / "spec.yaml"))
        except BaseException:
            res["traceback"] = traceback.format_exc()[-4000:]
        if not res.get("skipped") and not res.get("traceback"):
            code, output, tb = run("plan", d / "spec.yaml", "--build-dir", d / "build")
            res.update(plan=code, output=output, traceback=tb)
            build = d / "build"
            res["leftovers"] = sorted(p.name for p in build.iterdir()) if code != 0 and build.exists() else []
    report(**res)
'''


class Worker:
    """One worldforge process that runs examples sent on stdin; killed and restarted on a hang."""

    def __init__(self, log: Path):
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.replies: queue.Queue = queue.Queue()

    def start(self) -> None:
        env = {**os.environ, "WORLDFORGE_FUZZ_MEMORY": str(MEMORY_LIMIT)}
        with open(self.log, "a") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", WORKER], cwd=REPO, env=env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        self.replies = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.replies), daemon=True).start()
        ready = self.replies.get(timeout=300)
        assert ready and ready.get("ready"), f"fuzz worker did not start; see {self.log}"

    @staticmethod
    def _read(proc: subprocess.Popen, replies: queue.Queue) -> None:
        for line in proc.stdout:
            if line.startswith("@@ "):
                replies.put(json.loads(line[3:]))
        replies.put(None)

    def run(self, folder: Path) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps({"dir": str(folder)}) + "\n")
            self.proc.stdin.flush()
            reply = self.replies.get(timeout=EXAMPLE_TIMEOUT)
        except queue.Empty:
            self.stop()
            return {"hang": f"no answer within {EXAMPLE_TIMEOUT:g} s"}
        except BrokenPipeError:
            reply = None
        if reply is None:
            code = self.proc.wait()
            self.proc = None
            return {"died": f"worker exited with {code}" + (f" ({signal.Signals(-code).name})" if code < 0 else "")}
        return reply

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker's own session: only what this test started
            self.proc.wait()
        self.proc = None


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    w = Worker(tmp_path_factory.mktemp("fuzz-log") / "worker.log")
    yield w
    w.stop()
    print("\nfuzz outcomes:", ", ".join(f"{k}: {n}" for k, n in sorted(OUTCOMES.items())), file=sys.stderr)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


# --------------------------------------------------------------------------- the base world


def _shrink_pools(x) -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "pool" and isinstance(v, int):
                x[k] = 16
            else:
                _shrink_pools(v)
    elif isinstance(x, list):
        for v in x:
            _shrink_pools(v)


def _load_base() -> tuple[dict, dict]:
    spec = yaml.safe_load((REPO / "worlds" / "demo.yaml").read_text())
    packs = {p.stem: yaml.safe_load(p.read_text()) for p in sorted(SCHEMAS.glob("*.yaml"))}
    _shrink_pools(packs)
    return spec, packs


BASE_SPEC, BASE_PACKS = _load_base()


def _keys(x, out: set) -> set:
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(str(k))
            _keys(v, out)
    elif isinstance(x, list):
        for v in x:
            _keys(v, out)
    return out


# Names from the packs (collisions, cross references) and names the store or DuckDB use.
VOCAB = sorted(_keys(BASE_PACKS, set()) | {"aliases", "facts", "timeline", "rel_city_in", "rel_", "id", "name", "frame",
                                            "__row", "select", "as_of", "span_start", "valid_from", "source", "target", "x" * 70})
STRINGS = [
    "", " ", "x" * 5000, "\u00e9\u00df\u4e2d\U0001F600", "\x00", "a\nb", "{", "}", "{value:>9}", "{subject!r}", "{}", "{0}", "{value.real}",
    "{subject} {value}", "{object}", "{group}",
    "9999-12-31", "0001-01-01", "1000-01-01", "2025-02-30", "1969-12-31", "2025-06-30",
    "as_of", "as_of - 30d", "as_of + 30d", "as_of - 100000y", "span_start - 99999999d", "span_start + 9000y", "founded",
    "founded_by.birth_date + 20y", "source.founded", "target.birth_date - 1d", "valid_from", "x.y.z", "birth_date",
    "SELECT 1", "SELECT id FROM company", "name || 'x'", "1/0", "CAST(name AS INTEGER)", "'inf'::DOUBLE", "'nan'::DOUBLE",
    "unnest([1, 2])", "(SELECT count(*) FROM range(100000000000))", "1); SELECT (1", "error('boom')", "name -- comment",
    "binary", "pylist", "paragraphs", "first_name", "seed_instance", "random_int", "date_object", "profile",
    "N:M", "1:1", "1:N", "N:1", "uniform", "preferential", "lognormal", "poisson", "faker", "date", "derived", "lookup",
    "geography", "organisations", "packs/../x.yaml", "/dev/zero", "y" * 300 + ".yaml", "en_US", "xx_YY",
]
NUMBERS = [0, 1, -1, 2, 7, 16, 1000, 200_000, 10**9, 2**31, 2**63, -(2**63), 10**30, 10**400, 0.5, 1e-300, 1e15, 1e300,
           -1e300, float("nan"), float("inf"), float("-inf")]

nasty_values = st.one_of(
    st.sampled_from(STRINGS),
    st.sampled_from(NUMBERS),
    st.sampled_from(VOCAB),
    st.sampled_from([None, True, False, [], {}, [[]], [{}], {"": None}, [None], ["x"] * 3]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.dates(),
)


def _retyped(v):
    """The same content in another shape: a list where a mapping was, a string where a number was."""
    if isinstance(v, dict):
        return list(v.values()) or [None]
    if isinstance(v, list):
        return {str(i): x for i, x in enumerate(v)} or {"x": 1}
    if isinstance(v, bool):
        return "yes"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return [v]
    return {"value": v}


def _extreme(data, v):
    if isinstance(v, bool):
        return data.draw(st.sampled_from([None, 2, "true"]))
    if isinstance(v, (int, float)):
        return data.draw(st.sampled_from(NUMBERS + [v * 10**9, -v, v + 1, v - 1]))
    if isinstance(v, str):
        return data.draw(st.sampled_from([v * 2000, v + " - 1d", v + ".x", v.upper(), v[: len(v) // 2], "x" * 200_000]))
    return data.draw(nasty_values)


def _slots(root) -> list[tuple]:
    """Every (container, key) in a document, in a stable order."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        items = sorted(node.items(), key=lambda kv: str(kv[0])) if isinstance(node, dict) else \
            list(enumerate(node)) if isinstance(node, list) else []
        for k, v in items:
            out.append((node, k))
            stack.append(v)
    return out


def _leaves(root, kind) -> list:
    return [p[k] for p, k in _slots(root) if isinstance(p[k], kind) and not isinstance(p[k], bool)]


def _BOUNDISH(x: str) -> bool:
    return x.startswith(("as_of", "span_start", "source.", "target.", "valid_from")) or x.endswith(("y", "d")) and " " in x and "{" not in x


OPS = ["delete", "replace", "extreme", "retype", "empty", "duplicate", "rename", "swap", "nudge", "nudge", "nudge"]


def mutate(data, rnd, doc: dict, log: list) -> None:
    """One structural change at a node drawn uniformly from the whole document (below its
    two roots, the spec and the mapping of packs)."""
    slots = [(p, k) for p, k in _slots(doc) if p is not doc]
    if not slots:
        return
    parent, key = slots[rnd.randrange(len(slots))]  # uniform (hypothesis' own integers favour the ends)
    op = rnd.choice(OPS)
    old = parent[key]
    if op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = data.draw(nasty_values)
    elif op == "extreme":
        parent[key] = _extreme(data, old)
    elif op == "retype":
        parent[key] = _retyped(old)
    elif op == "empty":
        parent[key] = type(old)() if isinstance(old, (dict, list, str)) else None
    elif op == "duplicate" and isinstance(parent, dict):
        parent[data.draw(st.sampled_from(VOCAB))] = copy.deepcopy(old)
    elif op == "duplicate":
        parent.insert(key, copy.deepcopy(old))
    elif op == "rename" and isinstance(parent, dict):
        parent[data.draw(st.sampled_from(VOCAB + STRINGS[:3]))] = parent.pop(key)
    elif op == "nudge" and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[key] = rnd.choice([0, 1, -1, old + 1, old - 1, old * 2, old // 2 if isinstance(old, int) else old / 2, -old, old * 1000])
    elif op == "nudge" and isinstance(old, str):
        # Another string of the same document, of the same kind when it is a name or a date bound
        # (a relation's target becomes another type, a bound another bound): mostly still valid.
        names = _keys(doc.get("packs", {}), set())
        strings = sorted(set(_leaves(doc, str)))
        same = [x for x in strings if x in names] if old in names else [x for x in strings if _BOUNDISH(x)] if _BOUNDISH(old) else []
        parent[key] = rnd.choice(same if same and rnd.random() < 0.7 else strings)
    else:  # swap with a value drawn from elsewhere in the document
        other = copy.deepcopy(slots[rnd.randrange(len(slots))])
        parent[key] = other[0][other[1]]
    new = parent.get(key) if isinstance(parent, dict) else parent[key] if key < len(parent) else None
    log.append(f"{op} {key!r}: {_short(old)} -> {_short(new)}")


def _short(v) -> str:
    import reprlib

    return reprlib.repr(v)


def base_document(data) -> tuple[dict, list[str]]:
    """The demo spec (tiny counts) with a random subset of the packs (geography always)."""
    extra = data.draw(st.lists(st.sampled_from(["organisations", "academia", "sport"]), unique=True, max_size=3))
    names = ["geography", *sorted(extra)]
    spec = copy.deepcopy(BASE_SPEC)
    spec["packs"] = [f"packs/{n}.yaml" for n in names]
    spec["counts"] = {t: TINY_COUNTS[t] for n in names for t in PACK_TYPES[n]}
    for t in data.draw(st.lists(st.sampled_from(sorted(spec["counts"])), unique=True, max_size=2)):
        spec["counts"][t] = 0  # types without entities
    return {"spec": spec, "packs": {n: copy.deepcopy(BASE_PACKS[n]) for n in names}}, names


def write_document(folder: Path, doc: dict, texts: dict[str, bytes] | None = None) -> None:
    (folder / "packs").mkdir(parents=True)
    files = {"spec.yaml": doc["spec"], **{f"packs/{n}.yaml": body for n, body in doc["packs"].items()}}
    for rel, body in files.items():
        if texts and rel in texts:
            (folder / rel).write_bytes(texts[rel])
            continue
        try:
            text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
        except (yaml.YAMLError, ValueError, OverflowError):
            text = yaml.dump(body)
        (folder / rel).write_text(text, encoding="utf-8")
    for n in doc["packs"]:  # packs the mutated spec might name without a path
        if not (folder / "packs" / f"{n}.yaml").exists():
            (folder / "packs" / f"{n}.yaml").write_text("{}\n")


def check(reply: dict, log: list[str], folder: Path) -> None:
    try:
        _check(reply, log, folder)
    except AssertionError as exc:
        if not os.environ.get("WORLDFORGE_FUZZ_KEEP_GOING"):
            raise
        OUTCOMES["FAILED"] = OUTCOMES.get("FAILED", 0) + 1
        with open(os.environ.get("WORLDFORGE_FUZZ_LOG", "fuzz-failures.jsonl"), "a") as f:
            f.write(json.dumps({"FAILED": str(exc)[:6000], "mutations": log}) + "\n")
        return
    shutil.rmtree(folder, ignore_errors=True)


def _check(reply: dict, log: list[str], folder: Path) -> None:
    what = "; ".join(log) or "no mutation"
    key = (f"validate {reply.get('validate')}" + (f", plan {reply['plan']}" if "plan" in reply else "")
           + (", too big to plan" if reply.get("skipped") else "") if "validate" in reply else next(iter(reply)))
    OUTCOMES[key] = OUTCOMES.get(key, 0) + 1
    if os.environ.get("WORLDFORGE_FUZZ_LOG"):
        with open(os.environ["WORLDFORGE_FUZZ_LOG"], "a") as f:
            f.write(json.dumps({"mutations": log, "key": key, "output": reply.get("output", "")[-1500:]}) + "\n")
    assert not reply.get("hang"), f"hang ({reply['hang']}) after {what}; files in {folder}"
    assert not reply.get("died"), f"{reply['died']} after {what}; files in {folder}"
    assert not reply.get("traceback"), f"traceback after {what}; files in {folder}\n{reply['traceback']}"
    for step in ("validate", "plan"):
        code = reply.get(step)
        assert code in (None, 0, 1, 2), f"{step} exited {code} after {what}\n{reply.get('output')}"
    assert "Traceback" not in reply.get("output", ""), f"traceback in the output after {what}\n{reply['output']}"
    assert not reply.get("leftovers"), f"a failed plan left {reply['leftovers']} after {what}; files in {folder}"


# No shrinking unless asked (WORLDFORGE_FUZZ_SHRINK=1): each step replays a whole plan, and
# the failure message already names the mutations and keeps their files.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("WORLDFORGE_FUZZ_SHRINK") else [])
# CI replays one fixed sequence; WORLDFORGE_FUZZ_RANDOM=1 draws new examples on every run, and
# WORLDFORGE_FUZZ_KEEP_GOING=1 logs failures (to WORLDFORGE_FUZZ_LOG) instead of stopping at the first.
SETTINGS = dict(deadline=None, derandomize=not os.environ.get("WORLDFORGE_FUZZ_RANDOM"), database=None, print_blob=False, phases=PHASES,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
OUTCOMES: dict[str, int] = {}


@settings(max_examples=max(1, EXAMPLES * 4 // 5), **SETTINGS)
@given(data=st.data())
def test_fuzz_spec_and_packs_structurally(worker, scratch, data):
    doc, _ = base_document(data)
    rnd = data.draw(st.randoms(use_true_random=False))
    log: list[str] = []
    for _ in range(rnd.choice([1, 1, 1, 2, 3, 5])):
        mutate(data, rnd, doc, log)
    folder = Path(os.path.join(scratch, f"ex{len(os.listdir(scratch))}"))
    write_document(folder, doc)
    check(worker.run(folder), log, folder)


RAW_SNIPPETS = [
    "bomb:\n" + "\n".join(["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] +
                          [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]) + "\n",
    "loop: &loop [1, *loop]\n", "deep: " + "[" * 300 + "]" * 300 + "\n", "date: 2025-02-30\n", "n: " + "9" * 5000 + "\n",
    "\t- tab\n", "key: [unclosed\n", "&a b: *a\n", "? [complex, key]\n: v\n", "x: !!python/object:os.system ls\n",
    "x: !!binary aGVsbG8=\n", "<<: *nowhere\n", "---\nsecond: document\n", "%YAML 9.9\n", "\xff\xfe".encode("latin-1").decode("latin-1"),
]


@settings(max_examples=max(1, EXAMPLES // 5), **SETTINGS)
@given(data=st.data())
def test_fuzz_yaml_text(worker, scratch, data):
    doc, names = base_document(data)
    rel = data.draw(st.sampled_from(["spec.yaml", *[f"packs/{n}.yaml" for n in names]]))
    body = doc["spec"] if rel == "spec.yaml" else doc["packs"][Path(rel).stem]
    text = yaml.safe_dump(body, sort_keys=False).encode()
    op = data.draw(st.sampled_from(["append", "insert", "truncate", "bytes"]))
    if op == "append":
        text += data.draw(st.sampled_from(RAW_SNIPPETS)).encode("utf-8", "surrogateescape")
    elif op == "insert":
        i = data.draw(st.integers(0, len(text)))
        text = text[:i] + data.draw(st.sampled_from([b":", b"- ", b"\t", b"'", b'"', b"&a ", b"*a", b"{", b"]", b"\n  ", b"!!"])) + text[i:]
    elif op == "truncate":
        text = text[: data.draw(st.integers(0, len(text)))]
    else:
        i = data.draw(st.integers(0, len(text)))
        text = text[:i] + data.draw(st.binary(min_size=1, max_size=8)) + text[i:]
    folder = Path(os.path.join(scratch, f"ex{len(os.listdir(scratch))}"))
    write_document(folder, doc, {rel: text})
    check(worker.run(folder), [f"{op} in {rel}"], folder)

"""Scale-out benchmark: a large world end to end, one process vs Ray (local cluster of N
workers), per stage, in the same run; then a farm of small worlds on Ray.

    python benchmarks/scale.py                          # 1M-entity world (worlds/large.yaml), farm of 8 demo-size worlds
    python benchmarks/scale.py --entities 100000        # worlds/large.yaml scaled to about 100k entities
    python benchmarks/scale.py --entities 100000 --farm 0 --workers 2
    python benchmarks/scale.py --entities 0 --farm 8 --farm-one-process   # only the farm, both ways
    python benchmarks/scale.py --only ray --farm 0       # the 1M world on Ray only
    python benchmarks/scale.py --entities 100000 --pool  # one process vs 2 worker processes (the command line's default)

Each configuration runs `worldforge run` in a fresh process (so the peak memory is that
process's: the driver's; Ray workers are separate processes), in a scratch folder under
--work (default build/scale). The two runs' outputs are digested (benchmarks/digest_run.py)
and must be identical. Prints the machine's load (`uptime`) with the figures: the machine
may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
LARGE = REPO / "worlds" / "large.yaml"
DEMO = REPO / "worlds" / "demo.yaml"
LARGE_ENTITIES = 1_000_000

CHILD = r"""
import json, resource, sys, threading, time
from pathlib import Path
tree_peak = [0]
stage = ["start"]
stage_peak = {}  # per stage: (driver RSS, whole process tree RSS), the largest sampled
def sample():  # the whole process tree's RSS (driver, Ray's processes and workers), every half second
    try:
        import psutil
    except ImportError:
        return
    me = psutil.Process()
    while True:
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        tree_peak[0] = max(tree_peak[0], total)
        d, t = stage_peak.get(stage[0], (0, 0))
        stage_peak[stage[0]] = (max(d, me.memory_info().rss), max(t, total))
        time.sleep(0.5)
threading.Thread(target=sample, daemon=True).start()
from worldforge.cluster import use_cluster
from worldforge.run import run_pipeline
spec, build, out, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
with use_cluster(ray=workers > 0, num_cpus=workers if workers > 0 else None, workers=max(1, -workers)):  # < 0: worker processes
    t1 = time.perf_counter()
    # stages, and the render's later phases (progress names "store", "index") on their own
    r = run_pipeline(spec, build, out, force=True, on_stage=lambda name: stage.__setitem__(0, name),
                     on_progress=lambda name, done, total: stage.__setitem__(0, "render " + name) if name in ("store", "index") else None)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
phases = json.loads((Path(r.world) / "web" / "render.json").read_text())["report"].get("phases", {})
print(json.dumps({"wall": wall, "cluster_start": t1 - t0, "peak": peak, "tree_peak": tree_peak[0], "world": str(r.world), "dataset": str(r.dataset),
                  "stages": {s.stage: [s.seconds, s.summary] for s in r.stages}, "stage_peak": stage_peak, "render_phases": phases}))
"""

FARM_CHILD = r"""
import json, resource, sys, threading, time
tree_peak = [0]
def sample():  # the whole process tree's RSS (driver, Ray's processes and workers), every half second
    try:
        import psutil
    except ImportError:
        return
    me = psutil.Process()
    while True:
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        tree_peak[0] = max(tree_peak[0], total)
        time.sleep(0.5)
threading.Thread(target=sample, daemon=True).start()
from worldforge.cluster import use_cluster
from worldforge.farm import run_farm
spec, build, out, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
with use_cluster(ray=workers > 0, num_cpus=workers if workers > 0 else None, workers=max(1, -workers)):  # < 0: worker processes
    r = run_farm(spec, build, out)
print(json.dumps({"wall": time.perf_counter() - t0, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "path": str(r.path), "rows": r.rows, "fingerprint": r.fingerprint}))
"""


def _child(code: str, *args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    res = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=False, env=env, cwd=REPO)
    if res.returncode != 0:
        sys.exit(f"benchmark run failed ({' '.join(map(str, args))}):\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _digests(*roots: str) -> list:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from digest_run import digest

    return [(h, f"{i}/{rel}") for i, r in enumerate(roots) for h, rel in digest(Path(r))]


def scaled_spec(entities: int, work: Path) -> Path:
    spec = yaml.safe_load(LARGE.read_text())
    factor = entities / LARGE_ENTITIES
    spec["name"] = f"scale{entities}"
    spec["counts"] = {t: max(2, round(c * factor)) for t, c in spec["counts"].items()}
    path = work / f"scale{entities}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "uptime unavailable"


def _memory_and_phases(label: str, r: dict) -> None:
    """Where the render stage's time went, and each stage's peak memory (driver, whole tree);
    "render" is its pages phase, "render store" its store and report phases, "render index" the index."""
    if r.get("render_phases"):
        ph = r["render_phases"]
        print(f"{label}: render phases " + ", ".join(f"{k} {ph[k]:.1f}s" for k in ("pages", "store", "report", "index") if k in ph))
    peaks = r.get("stage_peak", {})
    if peaks:
        print(f"{label}: peak RSS per stage (driver / all processes, GiB) "
              + ", ".join(f"{st} {d / 2**30:.2f}/{t / 2**30:.2f}" for st, (d, t) in peaks.items() if st != "start"))


def _scaled_label(workers: int, pool: bool) -> tuple[str, int]:
    """The scaled-out configuration: Ray with `workers` CPUs, or (`pool`) as many worker processes."""
    return (f"{workers} processes", -workers) if pool else (f"Ray, {workers} workers", workers)


def bench_world(entities: int, workers: int, work: Path, only: str | None = None, pool: bool = False) -> None:
    spec = scaled_spec(entities, work)
    runs = {}
    for label, w in (("one process", 0), _scaled_label(workers, pool)):
        if only and only != ("one" if w == 0 else "ray"):
            continue
        d = work / ("one" if w == 0 else "ray")
        shutil.rmtree(d, ignore_errors=True)
        print(f"[{time.strftime('%H:%M:%S')}] world of ~{entities:,} entities, {label} ... ({_uptime()})", flush=True)
        runs[label] = _child(CHILD, spec, d / "build", d / "out", w)
    if len(runs) == 1:
        (a, ra), = runs.items()
        print(f"\nworld {spec.name} (~{entities:,} entities), {a} only; load after: {_uptime()}")
        for st, (sec, summary) in ra["stages"].items():
            print(f"{st:<9} {sec:>8.1f}s  {summary}")
        print(f"{'total':<9} {ra['wall']:>8.1f}s  driver peak RSS {ra['peak'] / 2**30:.2f} GiB, "
              f"all processes {ra['tree_peak'] / 2**30:.2f} GiB")
        _memory_and_phases(a, ra)
        return
    (a, ra), (b, rb) = runs.items()
    same = _digests(ra["world"], ra["dataset"]) == _digests(rb["world"], rb["dataset"])
    print(f"\nworld {spec.name} (~{entities:,} entities); load after: {_uptime()}")
    print(f"{'stage':<9} {a:>13} {b:>20} {'speed-up':>9}  result")
    for st in ra["stages"]:
        sa, sb = ra["stages"][st][0], rb["stages"][st][0]
        print(f"{st:<9} {sa:>12.1f}s {sb:>19.1f}s {sa / sb if sb else 0:>8.2f}x  {ra['stages'][st][1]}")
    print(f"{'total':<9} {ra['wall']:>12.1f}s {rb['wall']:>19.1f}s {ra['wall'] / rb['wall']:>8.2f}x  "
          f"(Ray's includes {rb['cluster_start']:.1f} s to start the cluster)")
    pages = int(ra["stages"]["render"][1].split()[0].replace(",", ""))
    tasks = sum(int(x.split()[0].replace(",", "")) for x in ra["stages"]["tasks"][1].split(", "))
    for label, r in runs.items():
        print(f"{label}: render {pages / r['stages']['render'][0]:,.0f} pages/s, tasks {tasks / r['stages']['tasks'][0]:,.1f} tasks/s, "
              f"driver peak RSS {r['peak'] / 2**30:.2f} GiB, all processes {r['tree_peak'] / 2**30:.2f} GiB")
        _memory_and_phases(label, r)
    print(f"outputs identical in one process and scaled out: {'yes' if same else 'NO'}")


def bench_farm(n: int, workers: int, work: Path, one_process: bool, pool: bool = False) -> None:
    demo = yaml.safe_load(DEMO.read_text())
    farm = {"farm_version": 1, "name": "scalefarm", "release": "v1", "seed": 1,
            "worlds": [{"spec": str(DEMO), "name": f"w{i}", "seed": demo["seed"] + i} for i in range(n)]}
    path = work / "scalefarm.farm.yaml"
    path.write_text(yaml.safe_dump(farm, sort_keys=False))
    runs = {}
    for label, w in ((("one process", 0),) if one_process else ()) + (_scaled_label(workers, pool),):
        d = work / ("farm-one" if w == 0 else "farm-ray")
        shutil.rmtree(d, ignore_errors=True)
        print(f"[{time.strftime('%H:%M:%S')}] farm of {n} demo-size worlds, {label} ... ({_uptime()})", flush=True)
        runs[label] = _child(FARM_CHILD, path, d / "build", d / "out", w)
    print(f"\nfarm of {n} demo-size worlds; load after: {_uptime()}")
    for label, r in runs.items():
        print(f"{label:<20} {r['wall']:>7.1f}s  rows {json.dumps(r['rows'])}  fingerprint {r['fingerprint']}")
    if len(runs) == 2:
        fps = {r["fingerprint"] for r in runs.values()}
        print(f"release identical in one process and scaled out: {'yes' if len(fps) == 1 else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=LARGE_ENTITIES, help="world size (worlds/large.yaml scaled); 0 skips it")
    ap.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray cluster (or worker processes, --pool)")
    ap.add_argument("--pool", action="store_true", help="scale out to worker processes of this machine (the command "
                    "line's default), not a Ray cluster")
    ap.add_argument("--farm", type=int, default=8, metavar="N",
                    help="demo-size worlds in the farm (the demo's seed and the next ones); 0 skips it")
    ap.add_argument("--only", choices=("one", "ray"), help="the world in one configuration only (a 1M world both ways "
                    "takes long on a small machine)")
    ap.add_argument("--farm-one-process", action="store_true", help="also build the farm in one process")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "scale")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} CPUs; {_uptime()}")
    if args.entities:
        bench_world(args.entities, args.workers, args.work, args.only, args.pool)
    if args.farm:
        bench_farm(args.farm, args.workers, args.work, args.farm_one_process, args.pool)


if __name__ == "__main__":
    main()

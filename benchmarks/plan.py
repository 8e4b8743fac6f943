"""Planner benchmark: wall seconds, entities/s, facts/s and peak memory for worlds of
about 10k, 100k and 1M entities (worlds/large.yaml scaled), each planned, checked and
written in a fresh process.

    python benchmarks/plan.py                # 10k, 100k, 1M
    python benchmarks/plan.py --sizes 10000  # just one size
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
LARGE = REPO / "worlds" / "large.yaml"
LARGE_ENTITIES = 1_000_000  # worlds/large.yaml is sized for about this many

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from worldforge.world.validate import load_world
from worldforge.world.planner import plan_world
world = load_world(sys.argv[1])
t0 = time.perf_counter()
info = plan_world(world, Path(sys.argv[2]), force=True)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"wall": wall, "entities": sum(info.manifest["counts"].values()),
                  "facts": info.manifest["facts"], "links": sum(info.manifest["relations"].values()), "peak": peak}))
"""


def scaled_spec(target: int, out_dir: Path) -> Path:
    spec = yaml.safe_load(LARGE.read_text())
    factor = target / LARGE_ENTITIES
    spec["name"] = f"bench{target}"
    spec["counts"] = {t: max(2, round(c * factor)) for t, c in spec["counts"].items()}
    path = out_dir / f"bench{target}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for size in args.sizes:
            spec = scaled_spec(size, tmp)
            res = subprocess.run([sys.executable, "-c", CHILD, str(spec), str(tmp / "build")],
                                 capture_output=True, text=True, check=False)
            if res.returncode != 0:
                sys.exit(f"plan of {size} entities failed:\n{res.stderr}")
            r = json.loads(res.stdout.strip().splitlines()[-1])
            rows.append((size, r))
    print(f"{'target':>9} {'entities':>10} {'facts':>11} {'links':>10} {'wall s':>7} {'entities/s':>11} {'facts/s':>11} {'peak MiB':>9}")
    for size, r in rows:
        print(f"{size:>9,} {r['entities']:>10,} {r['facts']:>11,} {r['links']:>10,} {r['wall']:>7.1f} "
              f"{r['entities'] / r['wall']:>11,.0f} {r['facts'] / r['wall']:>11,.0f} {r['peak'] / 2**20:>9,.0f}")


if __name__ == "__main__":
    main()

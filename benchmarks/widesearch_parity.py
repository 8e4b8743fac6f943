"""Parity with WideSearch's own evaluator, measured on the shipped worlds' exports.

    python benchmarks/widesearch_parity.py --widesearch ~/src/WideSearch --python ~/src/WideSearch/.venv/bin/python
    python benchmarks/widesearch_parity.py --widesearch ... --python ... --worlds demo --max-tasks 40

WideSearch (github.com/ByteDance-Seed/WideSearch) is not a package: give a checkout of it and a
Python environment with its requirements installed (its `uv sync`, or `pip install -r
requirements.txt datasets tenacity`). Nothing of it is copied here; it is run as it is.

Per world (built into build/bench-parity/ unless up to date) this:

1. writes, for every exported task (all splits), the gold answer in several forms and one
   damaged answer per kind of mistake (`worldforge.tasks.damage`);
2. scores every answer with WideSearch's `evaluate_single_query` (its LLM replaced by a stub:
   key alignment maps nothing, the column judge accepts a cell only when it equals the
   reference) and with worldforge's port (`worldforge.tasks.widesearch`) under the same stub;
3. prints, per kind of answer, how many answers agree on all seven metrics, and how many
   `worldforge score` scores differently because of its two LLM stand-ins (world aliases for
   key alignment, `set_match` for list columns): the classes that need upstream's LLM;
4. runs WideSearch's entry script (`scripts/run_infer_and_eval_batching.py --stage eval`) on each
   split of the export with gold answers, changing only the data path: the published-dataset
   layout through `WideSearchDataLoaderHF(repo_id=<folder>)` (the Hub download pointed at the
   folder), and prints the score it averages.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("score", "precision_by_row", "recall_by_row", "f1_by_row", "precision_by_item", "recall_by_item", "f1_by_item")

# Run with WideSearch's Python, from its checkout. Scores (instance, response) cases with its evaluator,
# or runs its entry script's eval stage.
DRIVER = r'''
import ast, json, os, re, sys, types
root, mode = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
os.chdir(root)

def llm_completion(messages, model_config_name=None, **kw):
    """Key alignment: no answer (keys stay as written). Column judge: 1 exactly when a cell is its reference."""
    text = messages if isinstance(messages, str) else json.dumps(messages, ensure_ascii=False)
    m = re.search(r"====== response-start ======\n(.*)\n====== response-end ======", text, re.S)
    if not m:
        return None
    pairs = ast.literal_eval(m.group(1).strip())
    return types.SimpleNamespace(content="```json\n" + json.dumps({k: int(v["response"] == v["target"]) for k, v in pairs.items()}) + "\n```")

import src.utils.llm
src.utils.llm.llm_completion = llm_completion
from loguru import logger
logger.remove()

if mode == "cases":
    from copy import deepcopy
    from src.evaluation.data_loader import WideSearchDataLoader, WideSearchResponse
    from src.evaluation.evaluation import evaluate_single_query
    loaders = {}
    for line in open(sys.argv[3]):
        c = json.loads(line)
        d = c["folder"]
        if d not in loaders:
            loaders[d] = WideSearchDataLoader(f"{d}/tasks.jsonl", f"{d}/gold")
        q = deepcopy(loaders[d].load_query_by_instance_id(c["instance_id"]))
        r = evaluate_single_query(q, WideSearchResponse(c["instance_id"], c["response"]), None)
        out = {k: float(getattr(r, k)) for k in ("score", "precision_by_row", "recall_by_row", "f1_by_row",
                                                 "precision_by_item", "recall_by_item", "f1_by_item")}
        out["case"] = c["case"]
        out["msg"] = (r.msg or "").strip().splitlines()[-1][:200] if r.msg else ""
        print(json.dumps(out), flush=True)
else:  # the entry script, its data path changed to the folder (published-dataset layout)
    folder, responses, results = sys.argv[3:6]
    import huggingface_hub
    huggingface_hub.snapshot_download = lambda repo_id, **kw: repo_id  # the "Hub" is the folder
    huggingface_hub.try_to_load_from_cache = lambda repo_id, filename, **kw: (
        os.path.join(repo_id, filename) if os.path.exists(os.path.join(repo_id, filename)) else None)
    script = os.path.join(root, "scripts", "run_infer_and_eval_batching.py")
    src_text = open(script).read()
    assert "WideSearchDataLoaderHF()" in src_text, "the entry script no longer builds WideSearchDataLoaderHF()"
    src_text = src_text.replace("WideSearchDataLoaderHF()", f"WideSearchDataLoaderHF(repo_id={folder!r})")
    sys.argv = [script, "--stage", "eval", "--model_config_name", "worldforge", "--response_root", responses,
                "--result_save_root", results, "--trial_num", "1", "--thread_num", "2"]
    exec(compile(src_text, script, "exec"), {"__name__": "__main__", "__file__": script})
'''


def _exact_judge(col):
    return lambda r, t, c: float(r == t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--widesearch", type=Path, required=True, help="a checkout of ByteDance-Seed/WideSearch")
    ap.add_argument("--python", type=Path, required=True, help="a Python with WideSearch's requirements")
    ap.add_argument("--worlds", nargs="+", default=["demo", "demo_zh", "aviation_music"])
    ap.add_argument("--build", type=Path, default=ROOT / "build" / "bench-parity")
    ap.add_argument("--max-tasks", type=int, default=0, help="tasks per world (0: all)")
    ap.add_argument("--show", type=int, default=3, help="disagreements to show per kind")
    args = ap.parse_args()
    if not (args.widesearch / "src" / "evaluation" / "evaluation.py").is_file():
        sys.exit(f"{args.widesearch} is not a WideSearch checkout (no src/evaluation/evaluation.py)")
    commit = subprocess.run(["git", "-C", str(args.widesearch), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    sys.path.insert(0, str(ROOT))
    from worldforge.run import run_pipeline
    from worldforge.tasks import widesearch as ws
    from worldforge.tasks.damage import answers
    from worldforge.tasks.scoring import WIDESEARCH, Evaluation, alias_names, read_gold_csv, score_table, task_aliases, world_aliases

    print(f"WideSearch {commit or '(not a git checkout)'}; worldforge's port follows {ws.UPSTREAM}")
    summary = []
    for name in args.worlds:
        r = run_pipeline(ROOT / "worlds" / f"{name}.yaml", args.build / "build", args.build / "exports", force=True)
        world = args.build / "build" / name
        export = r.dataset / "widesearch"
        names = alias_names(world)
        aliases = world_aliases(world)
        cases, ours = [], {}
        n_tasks = 0
        for split in sorted(p.name for p in export.iterdir() if p.is_dir()):
            folder = export / split
            for line in (folder / "tasks.jsonl").read_text().splitlines():
                if args.max_tasks and n_tasks >= args.max_tasks:
                    break
                t = json.loads(line)
                n_tasks += 1
                iid, ev = t["instance_id"], t["evaluation"]
                header, rows = read_gold_csv((folder / "gold" / f"{iid}.csv").read_text())
                gold = ws.gold_frame(header, rows, ev["required"])
                mine = task_aliases(Evaluation.model_validate(ev), header, rows, aliases)
                for kind, text in answers(header, rows, ev, names):
                    case = f"{iid}/{kind}"
                    o = ws.evaluate(ev, gold, text, judge=_exact_judge)
                    full = score_table(iid, Evaluation.model_validate(ev), header, rows, text, mine, WIDESEARCH, t.get("language", "en"))
                    stand_in = abs(full.item_f1 - o.item_f1) > 1e-9 or full.success != o.success
                    ours[case] = (kind, [o.success, o.row_precision, o.row_recall, o.row_f1, o.item_precision, o.item_recall,
                                         o.item_f1], stand_in, o.message)
                    cases.append({"case": case, "folder": str(folder), "instance_id": iid, "response": text})
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
            (Path(tmp) / "driver.py").write_text(DRIVER)
            t0 = time.perf_counter()
            p = subprocess.run([str(args.python), str(Path(tmp) / "driver.py"), str(args.widesearch.resolve()), "cases",
                                str(Path(tmp) / "cases.jsonl")], capture_output=True, text=True)
            up_seconds = time.perf_counter() - t0
            if p.returncode:
                sys.exit(f"WideSearch's evaluator failed:\n{p.stderr[-3000:]}")
            upstream = {x["case"]: x for x in map(json.loads, (ln for ln in p.stdout.splitlines() if ln.startswith("{")))}
            # the entry script's eval stage, on every split's gold answers, through the published-dataset layout
            from worldforge.tasks.damage import markdown

            entry_scores, n_entry = [], 0
            for folder in sorted(p for p in export.iterdir() if p.is_dir()):
                resp_dir, res_dir = Path(tmp) / folder.name / "responses", Path(tmp) / folder.name / "results"
                resp_dir.mkdir(parents=True)
                for line in (folder / "tasks.jsonl").read_text().splitlines():
                    iid = json.loads(line)["instance_id"]
                    header, rows = read_gold_csv((folder / "gold" / f"{iid}.csv").read_text())
                    (resp_dir / f"worldforge_{iid}_0_response.jsonl").write_text(json.dumps(
                        {"instance_id": iid, "response": markdown(header, rows), "messages": None, "trial_idx": 0},
                        ensure_ascii=False) + "\n")
                    n_entry += 1
                e = subprocess.run([str(args.python), str(Path(tmp) / "driver.py"), str(args.widesearch.resolve()), "entry",
                                    str(folder.resolve()), str(resp_dir), str(res_dir)], capture_output=True, text=True)
                got = res_dir / "worldforge_trial_num_1_summary.json"
                if e.returncode or not got.is_file():
                    print(f"  entry script failed on {folder.name}:\n{e.stderr[-2000:]}")
                    entry_scores = None
                    break
                n = sum(1 for _ in (folder / "tasks.jsonl").read_text().splitlines())
                entry_scores.append((json.loads(got.read_text())["score"]["avg_n"], n))
            entry = (sum(a * n for a, n in entry_scores) / sum(n for _, n in entry_scores)) if entry_scores else None
        by_kind: dict[str, list] = defaultdict(lambda: [0, 0, 0, []])
        for case, (kind, mine, stand_in, msg) in ours.items():
            up = upstream.get(case)
            agree = up is not None and all(abs(a - up[m]) < 1e-9 for a, m in zip(mine, METRICS))
            k = by_kind[kind]
            k[0] += 1
            k[1] += agree
            k[2] += stand_in
            if not agree and len(k[3]) < args.show:
                k[3].append((case, [round(x, 3) for x in mine], [round(up[m], 3) for m in METRICS] if up else None,
                             msg, up.get("msg") if up else None))
        print(f"\n{name}: {n_tasks} tasks, {len(cases)} answers; WideSearch's evaluator took {up_seconds:.0f} s")
        print(f"  {'answer kind':34} {'answers':>8} {'agree (7 metrics)':>18} {'stand-ins change it':>20}")
        total = [0, 0, 0]
        for kind, (n, a, s, bad) in by_kind.items():
            print(f"  {kind:34} {n:8d} {a:18d} {s:20d}")
            for b in bad:
                print(f"      differs: {b[0]}\n        worldforge {b[1]} ({b[3]})\n        WideSearch {b[2]} ({b[4]})")
            total = [total[0] + n, total[1] + a, total[2] + s]
        print(f"  {'all':34} {total[0]:8d} {total[1]:18d} {total[2]:20d}")
        print(f"  entry script, eval stage, every split ({n_entry} gold answers, data path changed only): "
              f"mean score {entry if entry is not None else 'FAILED'}")
        summary.append((name, n_tasks, *total, entry))
    print(f"\n{'world':16} {'tasks':>6} {'answers':>8} {'agree':>8} {'stand-ins':>10} {'entry gold':>11}")
    for name, n, a, g, s, entry in summary:
        print(f"{name:16} {n:6d} {a:8d} {g:8d} {s:10d} {entry if entry is not None else 'FAILED':>11}")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()

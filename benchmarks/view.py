"""Response times of the browser view (`worldforge view`), over HTTP to a real uvicorn server.

    python benchmarks/view.py build/demo                        # every view, 40 requests each
    python benchmarks/view.py build/scale100000 -n 100
    python benchmarks/view.py build/demo --screenshots docs/images   # and a screenshot of each view (Debian's chromium)

Pages, searches, tasks and trajectories are drawn with a fixed seed from the world; each is
requested once (a first visit: the engine's page and search caches are cleared before each
request). Prints the time to open the world and to warm it, then p50, p95 and max per view.
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _serve(app):
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    threading.Thread(target=srv.run, daemon=True).start()
    while not srv.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", srv


def requests(data, n: int, rng: random.Random) -> dict[str, list[str]]:
    con = data.engine.pages
    total = con.execute("SELECT count(*) FROM pages").fetchone()[0]
    picks = sorted(rng.sample(range(total), min(n, total)))
    urls = [r[0] for r in con.execute("SELECT url FROM (SELECT url, row_number() OVER () - 1 AS i FROM pages) "
                                      "WHERE i IN (SELECT unnest(?::BIGINT[]))", [picks]).fetchall()]
    titles = [r[0] for r in con.execute("SELECT title FROM (SELECT title, row_number() OVER () - 1 AS i FROM pages) "
                                        "WHERE i IN (SELECT unnest(?::BIGINT[]))", [picks]).fetchall()]
    words = [t.split()[0] for t in titles if t.split()]
    out = {
        "page": [f"/view/page?url={quote(u)}" for u in urls],
        "page + provenance": [f"/view/page?url={quote(u)}&facts=1" for u in urls],
        "search (a title)": [f"/view/search?q={quote(t)}" for t in titles],
        "search (one word, page 2)": [f"/view/search?q={quote(w)}&offset=10" for w in words],
    }
    tasks = list(data.tasks)
    if tasks:
        out["task"] = [f"/view/task/{quote(t)}" for t in rng.sample(tasks, min(n, len(tasks)))]
        kinds = sorted({t.record["kind"] for t in data.tasks.values()})
        out["task list (filtered)"] = [f"/view/tasks?kind={rng.choice(kinds)}&split=train&offset={rng.randrange(0, 100)}"
                                       for _ in range(n)]
    trajs = list(data.trajectory_index.values())
    if trajs:
        out["trajectory"] = [f"/view/trajectory/{quote(e.instance_id)}?sample={e.sample}" for e in rng.sample(trajs, min(n, len(trajs)))]
    fact_ids = [f for u in urls[: max(4, n // 4)] for f in data.page_fact_ids(u)[:1]]
    out["fact (every page stating it)"] = [f"/view/fact?id={quote(f)}" for f in fact_ids]
    out["export"] = ["/view/export"] * min(n, 5)
    return out


def screenshots(base: str, data, folder: Path) -> None:
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    con = data.engine.pages
    article = con.execute("SELECT url FROM pages WHERE kind = 'article' ORDER BY length(markdown) DESC LIMIT 1 OFFSET 40").fetchone()[0]
    news = con.execute("SELECT url FROM pages WHERE kind = 'news' ORDER BY length(markdown) DESC LIMIT 1 OFFSET 10").fetchone()[0]
    directory = con.execute("SELECT url FROM pages WHERE kind = 'directory' ORDER BY url LIMIT 1 OFFSET 30").fetchone()[0]
    title = con.execute("SELECT title FROM pages WHERE url = ?", [article]).fetchone()[0]
    # a table the agent got mostly right: the scored table shows right and wrong cells side by side
    e = min((e for e in data.trajectory_index.values() if e.instance_id in data.tasks
             and data.tasks[e.instance_id].record["kind"] == "table" and 0.5 < (e.reward or 0) < 1),
            key=lambda e: (abs((e.reward or 0) - 0.9), e.instance_id), default=None) or next(iter(data.trajectory_index.values()))
    shots = [("home", "/view/", None), ("web", "/view/web", None),
             ("page-provenance", f"/view/page?url={quote(article)}&facts=1", None),
             ("page-news", f"/view/page?url={quote(news)}", None),
             ("page-directory", f"/view/page?url={quote(directory)}", None),
             ("search", f"/view/search?q={quote(title)}", None),
             ("tasks", "/view/tasks?kind=table", None),
             ("task", f"/view/task/{quote(e.instance_id)}", None),
             ("trajectory", f"/view/trajectory/{quote(e.instance_id)}?sample={e.sample}&step=4", "details.res"),
             ("trajectory-scored", f"/view/trajectory/{quote(e.instance_id)}?sample={e.sample}", "#scored"),
             ("export", "/view/export", None)]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                                               "--disable-background-networking", "--disable-component-update"])
        page = b.new_page(viewport={"width": 1280, "height": 800})
        for name, path, then in shots:
            page.goto(base + path)
            if then == "details.res":
                page.locator("section.turn.current details.res summary").first.click()
                page.wait_for_timeout(300)
            elif then:
                page.locator(then).scroll_into_view_if_needed()
            page.screenshot(path=str(folder / f"view-{name}.png"))
            print(f"  {folder / f'view-{name}.png'}")
        b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("world", type=Path)
    ap.add_argument("-n", type=int, default=40, help="requests per view")
    ap.add_argument("--export", type=Path, default=None)
    ap.add_argument("--screenshots", type=Path, default=None, help="save a screenshot of each view here")
    args = ap.parse_args()
    import httpx

    from worldforge.view.data import ViewData
    from worldforge.view.routes import create_view_app

    t = time.perf_counter()
    data = ViewData(args.world, export=args.export)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    data.warm()
    warmed = time.perf_counter() - t
    pages = data.engine.pages.execute("SELECT count(*) FROM pages").fetchone()[0]
    base, srv = _serve(create_view_app(data))
    rng = random.Random(20261128)
    todo = requests(data, args.n, rng)
    print(f"{args.world}: {pages:,} pages, {len(data.tasks):,} tasks, {len(data.trajectory_index):,} trajectories; "
          f"open {opened:.2f} s, warm {warmed:.2f} s")
    print(f"{'view':32} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'KB p50':>8}")
    with httpx.Client(base_url=base, timeout=60) as client:
        client.get("/view/")
        for name, paths in todo.items():
            times, sizes = [], []
            for p in paths:
                data.engine._pages.clear()
                data.engine._searches.clear()
                t = time.perf_counter()
                r = client.get(p)
                times.append(1000 * (time.perf_counter() - t))
                sizes.append(len(r.content) / 1024)
                if r.status_code != 200:
                    print(f"  {r.status_code} {p[:120]}")
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            print(f"{name:32} {len(times):>4} {statistics.median(times):>8.1f} {p95:>8.1f} {times[-1]:>8.1f} {statistics.median(sizes):>8.0f}")
    if args.screenshots:
        screenshots(base, data, args.screenshots)
    srv.should_exit = True
    data.close()


if __name__ == "__main__":
    main()

"""gitckpt benchmarks: saves and resume against git's own plumbing, on synthetic workspaces.

Usage: python bench/bench.py [--sizes 1000,10000,100000] [--repeat 5] [--out FILE]

Each workspace has N files of 4 KiB average, 50 per directory, inside a git repository with a
first commit. Every figure is the median of --repeat runs, in milliseconds. "git" is the same
save done by git's plumbing with a warm private index:
    GIT_INDEX_FILE=<private> git add -A; git write-tree; git commit-tree; git update-ref
gitckpt's save includes its snapshot, commit, JSON note and refs; "cli" is the same save through
the `gitckpt` command (process start-up and imports included).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ops import service

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watchbench import QUIET, bench_watch


def compiled() -> None:
    """gitckpt's modules compiled to bytecode, as `pip install` leaves an installed package:
    an editable install under PYTHONDONTWRITEBYTECODE=1 (this machine's environment) would
    otherwise compile some 170 modules from source at every process start, about 70 ms that
    no user's install pays. py_compile writes the files whatever that variable says."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "gitckpt"), quiet=1)


compiled()

ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
ENV.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
           GIT_CONFIG_NOSYSTEM="1")


def git(root: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], env=env or ENV, check=True,
                          capture_output=True, text=True).stdout.strip()


def make_workspace(root: Path, n: int, seed: int = 1, with_git: bool = True) -> list[Path]:
    """N text files of 1-7 KiB (4 KiB average), 50 per directory, committed once."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    if with_git:
        git(root, "init", "-q", "-b", "main")
    files = []
    for i in range(n):
        d = root / f"d{i // 2500:03d}" / f"s{(i // 50) % 50:02d}"
        if i % 50 == 0:
            d.mkdir(parents=True, exist_ok=True)
        f = d / f"f{i:06d}.txt"
        size = rng.randint(1024, 7168)
        line = f"{i:08d} " + "".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=63)) + "\n"
        f.write_text(line * (size // len(line) + 1))
        files.append(f)
    if with_git:
        git(root, "add", "-A")
        # No background auto-gc: it would pack the repository while the timings run.
        git(root, "-c", "gc.auto=0", "commit", "-q", "-m", "first")
        git(root, "config", "gc.auto", "0")
    return files


def du(path: Path, skip: set[str] = frozenset()) -> int:
    """Bytes on disk under `path` (allocated blocks), leaving out top-level names in `skip`."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        if Path(dirpath) == path:
            dirnames[:] = [d for d in dirnames if d not in skip]
            filenames = [f for f in filenames if f not in skip]
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return total


def bench_plain(root: Path, files: list[Path], repeat: int, first_repeat: int
                ) -> dict[str, float]:
    """DirStore on a plain folder, and the peer task-checkpoint-mcp on the same folder, run by
    run. Both keep their stores outside the folder, so neither scans the other's."""
    try:
        from tc import TaskCheckpoint  # task-checkpoint-mcp, see bench/requirements.txt
    except ImportError:
        TaskCheckpoint = None
        print("task-checkpoint-mcp is not installed: no peer figures "
              "(pip install -r bench/requirements.txt)", file=sys.stderr)
    store = root.parent / f"{root.name}-gitckpt"
    peer_store = root.parent / f"{root.name}-peer"
    counter = iter(range(10**9))
    first, peer_first = [], []
    peer = None
    for _ in range(first_repeat):
        shutil.rmtree(store, ignore_errors=True)
        (root / ".gitckpt").unlink(missing_ok=True)
        first.append(timed(lambda: service.init(root, "bench", store=str(store))))
        if TaskCheckpoint is not None:
            shutil.rmtree(peer_store, ignore_errors=True)
            peer = TaskCheckpoint(str(root), store=str(peer_store))
            peer.init(str(root), "bench", store=str(peer_store))
            peer_first.append(timed(partial(peer.save, str(root), f"first {next(counter)}")))
    nochange, ten, peer_nochange, peer_ten = [], [], [], []
    for _ in range(repeat):
        nochange.append(timed(lambda: service.save(root, f"nochange {next(counter)}")))
        if peer is not None:
            peer_nochange.append(timed(lambda: peer.save(str(root), f"n {next(counter)}")))
    for r in range(repeat):
        touch_files(files, 10, f"ckpt{r}")
        ten.append(timed(lambda: service.save(root, f"ten {next(counter)}")))
        if peer is not None:
            touch_files(files, 10, f"peer{r}")
            peer_ten.append(timed(lambda: peer.save(str(root), f"t {next(counter)}")))
    out = {"first": median_ms(first), "nochange": median_ms(nochange), "ten": median_ms(ten),
           "store": du(store), "workspace": du(root, {".gitckpt", ".task-checkpoint-store.json"})}
    if peer is not None:
        out.update(peer_first=median_ms(peer_first), peer_nochange=median_ms(peer_nochange),
                   peer_ten=median_ms(peer_ten))
    shutil.rmtree(store, ignore_errors=True)
    shutil.rmtree(peer_store, ignore_errors=True)
    return out


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn) -> float:
    """Wall time of one call, as timeit takes it: the bench's own garbage (10^5 Path objects)
    is collected first and the collector is off while the call runs."""
    gc.collect()
    gc.disable()
    try:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    finally:
        gc.enable()


def touch_files(files: list[Path], k: int, tag: str) -> None:
    for f in files[:k]:
        with open(f, "a") as fh:
            fh.write(f"edit {tag}\n")


class GitPlumbing:
    """git's plumbing doing the same save as gitckpt, with its own warm private index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index = root / ".git" / "bench-index"
        self.env = {**ENV, "GIT_INDEX_FILE": str(self.index)}
        self.parent = git(root, "rev-parse", "HEAD")

    def save(self) -> None:
        subprocess.run(["git", "-C", str(self.root), "add", "-A"], env=self.env, check=True)
        tree = git(self.root, "write-tree", env=self.env)
        self.parent = git(self.root, "commit-tree", tree, "-p", self.parent, "-m", "bench",
                          env=self.env)
        git(self.root, "update-ref", "refs/bench/head", self.parent, env=self.env)

    def close(self) -> None:
        self.index.unlink(missing_ok=True)
        git(self.root, "update-ref", "-d", "refs/bench/head")


def bench_pair(root: Path, files: list[Path], repeat: int, first_repeat: int
               ) -> tuple[dict[str, float], dict[str, float]]:
    """gitckpt and git timed alternately, run by run, so both see the same machine."""
    g = GitPlumbing(root)
    state = root / ".git" / "gitckpt"
    counter = iter(range(10**9))
    gf, cf = [], []
    for _ in range(first_repeat):  # cold caches: everything is hashed
        g.index.unlink(missing_ok=True)
        gf.append(timed(g.save))
        shutil.rmtree(state, ignore_errors=True)
        cf.append(timed(lambda: service.init(root, "bench")))
    gn, cn, gt, ct, cli, resume = [], [], [], [], [], []
    for _ in range(repeat):
        gn.append(timed(g.save))
        cn.append(timed(lambda: service.save(root, f"nochange {next(counter)}")))
    for r in range(repeat):
        touch_files(files, 10, f"git{r}")
        gt.append(timed(g.save))
        touch_files(files, 10, f"ckpt{r}")
        ct.append(timed(lambda: service.save(root, f"ten {next(counter)}")))
    for _ in range(repeat):
        cli.append(timed(lambda: subprocess.run(
            [sys.executable, "-m", "gitckpt", "-C", str(root), "save",
             f"cli {next(counter)}"], check=True, capture_output=True)))
        resume.append(timed(lambda: service.resume(root)))
    g.close()
    git_ms = {"first": median_ms(gf), "nochange": median_ms(gn), "ten": median_ms(gt)}
    ours = {"first": median_ms(cf), "nochange": median_ms(cn), "ten": median_ms(ct),
            "cli": median_ms(cli), "resume": median_ms(resume)}
    git_ms["restore"], ours["preview"], ours["apply"] = bench_restore(root, files, repeat)
    ours.update(bench_watch(root, files, ENV))
    return git_ms, ours


def bench_restore(root: Path, files: list[Path], repeat: int) -> tuple[float, float, float]:
    """10 edited files put back to a step: `git restore --source=<step> --worktree -- paths`
    against gitckpt's preview and apply (safety copy, writes, restore commit), run by run."""
    step = service.save(root, "restore base")
    paths = [str(f.relative_to(root)) for f in files[:10]]
    target = str(step.step)
    gr, pv, ap = [], [], []
    for r in range(repeat):
        touch_files(files, 10, f"git-restore{r}")
        gr.append(timed(lambda: git(root, "restore", f"--source={step.commit}", "--worktree",
                                    "--", *paths)))
        touch_files(files, 10, f"restore{r}")
        pv.append(timed(lambda: service.restore(root, target)))
        ap.append(timed(lambda: service.restore(root, target, apply=True)))
        assert all(p.read_text().count("edit restore") == 0 for p in files[:10])
    return median_ms(gr), median_ms(pv), median_ms(ap)


def run_plain(base: Path, n: int, repeat: int) -> dict[str, float]:
    root = base / f"plain-{n}"
    shutil.rmtree(root, ignore_errors=True)
    files = make_workspace(root, n, with_git=False)
    time.sleep(2.5)
    d = bench_plain(root, files, repeat, first_repeat=1 if n >= 100_000 else 3)
    print(f"[{n} files, plain] {d}", file=sys.stderr)
    shutil.rmtree(root, ignore_errors=True)
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    ap.add_argument("--dir", default=None, help="where to build workspaces (default: temp)")
    ap.add_argument("--git-only", action="store_true", help="skip the plain-folder runs")
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp(prefix="gitckpt-bench-"))
    rows, plain_rows = [], []
    for n in [int(s) for s in args.sizes.split(",")]:
        if not args.git_only:
            plain_rows.append((n, run_plain(base, n, args.repeat)))
        root = base / f"ws-{n}"
        shutil.rmtree(root, ignore_errors=True)
        t = time.perf_counter()
        files = make_workspace(root, n)
        print(f"[{n} files] workspace built in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        time.sleep(2.5)  # older than any racy-timestamp window: a settled workspace
        g, c = bench_pair(root, files, args.repeat, first_repeat=1 if n >= 100_000 else 3)
        rows.append((n, g, c))
        print(f"[{n} files] git {g} gitckpt {c}", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)
    lines = [
        "| files | first save | git first | no-change save | git | ratio | 10-file save | git "
        "| ratio | save via CLI | resume |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, g, c in rows:
        lines.append(
            f"| {n:,} | {c['first']:.0f} ms | {g['first']:.0f} ms | {c['nochange']:.0f} ms "
            f"| {g['nochange']:.0f} ms | {c['nochange'] / g['nochange']:.2f} | {c['ten']:.0f} ms "
            f"| {g['ten']:.0f} ms | {c['ten'] / g['ten']:.2f} | {c['cli']:.0f} ms "
            f"| {c['resume']:.0f} ms |")
    lines += [
        "",
        "| files | restore preview (10 files) | restore apply | git restore | no-change save "
        "| apply budget: save + 2 x git | apply / budget |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, g, c in rows:
        budget = c["nochange"] + 2 * g["restore"]
        lines.append(
            f"| {n:,} | {c['preview']:.0f} ms | {c['apply']:.0f} ms | {g['restore']:.0f} ms "
            f"| {c['nochange']:.0f} ms | {budget:.0f} ms | {c['apply'] / budget:.2f} |")
    lines += [
        "",
        f"| files | last write of a 1,000-file burst -> drift commit (quiet {QUIET:g} s) "
        "| watcher CPU idle | CPU time per burst | memory idle | peak memory |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, _, c in rows:
        lines.append(
            f"| {n:,} | {c['latency']:.0f} ms | {c['idle_cpu_pct']:.2f} % | "
            f"{c['burst_cpu']:.0f} ms | {c['idle_rss']:.0f} MiB | {c['peak_rss']:.0f} MiB |")
    lines += [
        "",
        "| files (plain folder) | first save | no-change save | 10-file save | store / workspace "
        "on disk | peer first save | peer no-change | peer 10-file | peer / gitckpt, no-change |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, d in plain_rows:  # (empty with --git-only)
        peer = (f"{d['peer_first']:.0f} ms | {d['peer_nochange']:.0f} ms | {d['peer_ten']:.0f} ms "
                f"| {d['peer_nochange'] / d['nochange']:.1f}x" if "peer_nochange" in d
                else "- | - | - | -")
        lines.append(
            f"| {n:,} | {d['first']:.0f} ms | {d['nochange']:.0f} ms | {d['ten']:.0f} ms "
            f"| {d['store'] / 2**20:.1f} / {d['workspace'] / 2**20:.1f} MiB | {peer} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()

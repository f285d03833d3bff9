"""`gitckpt save` typed in a terminal while a `gitckpt watch` runs on the workspace:
the command is served by the watcher's process over the relay and costs what changed.

    python bench/clibench.py [--files 100000] [--repeat 7] [--plain]

On bench.py's synthetic workspace of N committed files, medians of --repeat runs, wall clock
of the whole command (process start included):

- no-change save and a save of 10 changed files, through the running watcher, against
  `git status --porcelain` (which must lstat every file) in the same repository;
- the same saves with the relay off (GITCKPT_RELAY=off: a cold process and a full scan).

The 10 files are written SETTLE seconds before the save: a file whose times are under 0.1 s
old is read twice, 0.1 s apart (store/files.py, so no half-written file is stored), which a
save right after the writes pays once.
`--plain`: the same files in a plain folder (no git: no `git status` row; the plain store's
own walk, with the relay off, is the reference).
The peer task-checkpoint-mcp has no CLI save; its MCP save is in bench.py.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench import ENV, make_workspace, touch_files  # noqa: E402

PY = sys.executable
SETTLE = 0.15


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--plain", action="store_true", help="a plain folder, not a repository")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitckpt-clibench-"))
    env = {**ENV, "HOME": str(tmp / "home"), "XDG_RUNTIME_DIR": str(tmp / "run")}
    (tmp / "home").mkdir()
    (tmp / "run").mkdir(mode=0o700)
    root = tmp / "ws"
    watcher = None
    try:
        files = make_workspace(root, args.files, with_git=not args.plain)
        subprocess.run([PY, "-m", "gitckpt", "init", "bench"], cwd=root, env=env, check=True,
                       capture_output=True)
        watcher = subprocess.Popen([PY, "-m", "gitckpt", "watch"], cwd=root, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sock = tmp / "run" / "gitckpt" / f"{watcher.pid}.sock"
        while not sock.exists():
            time.sleep(0.1)
        save = [PY, "-m", "gitckpt", "save", "bench step"]
        timed(save, root, env)  # the watcher's first full scan, and the journal trusted
        rows: dict[str, list[float]] = {"git status --porcelain": [], "save, no change": [],
                                        "save, 10 files": [], "no relay: no change": [],
                                        "no relay: 10 files": []}
        off = {**env, "GITCKPT_RELAY": "off"}
        # The relayed saves first: a save in another process (the relay off) writes the
        # stat cache, and the watcher's next snapshot then scans every file once.
        for r in range(args.repeat):
            if not args.plain:
                rows["git status --porcelain"].append(
                    timed(["git", "status", "--porcelain"], root, env))
            rows["save, no change"].append(timed(save, root, env))
            touch_files(files, 10, f"r{r}")
            time.sleep(SETTLE)
            rows["save, 10 files"].append(timed(save, root, env))
        for r in range(args.repeat):
            rows["no relay: no change"].append(timed(save, root, off))
            touch_files(files, 10, f"o{r}")
            time.sleep(SETTLE)
            rows["no relay: 10 files"].append(timed(save, root, off))
        ref = "no relay: no change" if args.plain else "git status --porcelain"
        status = statistics.median(rows[ref])
        print(f"{args.files} files{' (plain folder)' if args.plain else ''}; medians of "
              f"{args.repeat} (wall clock, ms)")
        print(f"{'command':<24} {'ms':>8} {'x ' + ref:>24}")
        for name, samples in rows.items():
            if samples:
                ms = statistics.median(samples) * 1000
                print(f"{name:<24} {ms:>8.0f} {ms / 1000 / status:>24.2f}")
    finally:
        if watcher is not None:
            watcher.terminate()
            watcher.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Checkpoints through git remotes, next to git itself doing the same transfer (issue 17).

    python bench/remotebench.py [--files 10000] [--steps 20] [--tasks 1000] [--repeat 5]

On one of bench.py's synthetic workspaces (N committed files of 4 KiB average, plus 200
untracked files changed over the steps), measured by wall clock, medians of --repeat runs:

- push: `gitckpt push` of a task of S steps to an empty bare remote over file://, against
  `git push` of the same refs and a notes ref (the objects git itself must send);
- fetch: `gitckpt fetch --task` into a fresh clone, against `git fetch` of the same refs;
- list: `gitckpt fetch` (the listing) of a remote holding T tasks of 50 steps with cards,
  against the `git ls-remote` it needs anyway;
- many refs: `gitckpt push` of a task holding --refs new refs (drifts made with fast-import)
  to an empty remote, against `git push` of the same refs by one glob refspec.

The peer task-checkpoint-mcp has no remote transport (its stores are local files), so there
is no peer column.
"""

from __future__ import annotations

import argparse
import json
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

from bench import ENV, git, make_workspace  # noqa: E402

PY = sys.executable


def timed(cmd: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, capture_output=True)
    return time.perf_counter() - started


def gitckpt(root: Path, *args: str) -> list[str]:
    return [PY, "-m", "gitckpt", "-C", str(root), *args]


def build_task(tmp: Path, files: int, steps: int) -> tuple[Path, Path, str]:
    """A repository with a task of `steps` steps, and an empty bare remote."""
    a = tmp / "a"
    make_workspace(a, files)
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", str(remote))
    git(a, "push", "-q", str(remote), "HEAD:refs/heads/main")
    subprocess.run(gitckpt(a, "init", "bench task"), env=ENV, check=True, capture_output=True)
    untracked = a / "scratch"
    untracked.mkdir()
    for s in range(steps):
        for i in range(10):
            (untracked / f"n{s}-{i}.txt").write_text(f"step {s} file {i}\n" * 200)
        subprocess.run(gitckpt(a, "save", f"step {s}"), env=ENV, check=True,
                       capture_output=True)
    task = json.loads(subprocess.run(gitckpt(a, "--json", "tasks"), env=ENV, check=True,
                                     capture_output=True, text=True).stdout)["tasks"][0]["task"]
    return a, remote, task


def fresh_remote(tmp: Path, a: Path, name: str) -> Path:
    remote = tmp / name
    shutil.rmtree(remote, ignore_errors=True)
    git(tmp, "init", "-q", "--bare", str(remote))
    git(a, "push", "-q", str(remote), "HEAD:refs/heads/main")
    return remote


def bench_push(tmp: Path, a: Path, task: str, repeat: int) -> dict:
    ours, theirs = [], []
    for r in range(repeat):
        remote = fresh_remote(tmp, a, f"push-{r}.git")
        ours.append(timed(gitckpt(a, "push", remote.as_uri(), "--yes")))
        remote = fresh_remote(tmp, a, f"gitpush-{r}.git")
        theirs.append(timed(["git", "-C", str(a), "push", "-q", remote.as_uri(),
                             f"refs/checkpoints/{task}/*:refs/checkpoints/{task}/*",
                             "refs/notes/checkpoints:refs/notes/checkpoints"]))
    return {"gitckpt": statistics.median(ours), "git": statistics.median(theirs)}


def bench_fetch(tmp: Path, remote: Path, task: str, repeat: int) -> dict:
    ours, theirs = [], []
    for r in range(repeat):
        b = tmp / f"b-{r}"
        subprocess.run(["git", "clone", "-q", str(remote), str(b)], env=ENV, check=True,
                       capture_output=True)
        ours.append(timed(gitckpt(b, "fetch", remote.as_uri(), "--task", task)))
        c = tmp / f"c-{r}"
        subprocess.run(["git", "clone", "-q", str(remote), str(c)], env=ENV, check=True,
                       capture_output=True)
        theirs.append(timed(["git", "-C", str(c), "fetch", "-q", remote.as_uri(),
                             f"+refs/checkpoints/{task}/*:refs/checkpoints/{task}/*",
                             f"+refs/notes/gitckpt/{task}:refs/notes/gitckpt/{task}"]))
        shutil.rmtree(b)
        shutil.rmtree(c)
    return {"gitckpt": statistics.median(ours), "git": statistics.median(theirs)}


def bench_list(tmp: Path, a: Path, tasks: int, repeat: int) -> dict:
    remote = fresh_remote(tmp, a, "many.git")
    commit = git(remote, "rev-parse", "refs/heads/main")
    stream = []
    for i in range(tasks):
        body = f"card: task {i}\n\n" + json.dumps({"task": f"t{i:04d}", "name": f"task {i}",
                                                   "step": 49}) + "\n"
        stream += [f"commit refs/checkpoints/t{i:04d}/card",
                   "committer gitckpt <gitckpt@localhost> 1764583200 +0000",
                   f"data {len(body.encode())}", body, "deleteall", ""]
    subprocess.run(["git", f"--git-dir={remote}", "fast-import", "--quiet"],
                   input="\n".join(stream) + "\n", text=True, check=True)
    lines = [f"create refs/checkpoints/t{i:04d}/{ref} {commit}" for i in range(tasks)
             for ref in ["head", *(f"steps/{n}" for n in range(50))]]
    subprocess.run(["git", f"--git-dir={remote}", "update-ref", "--stdin"],
                   input="\n".join(lines) + "\n", text=True, check=True)
    ours = [timed(gitckpt(a, "fetch", remote.as_uri())) for _ in range(repeat)]
    theirs = [timed(["git", "ls-remote", "--refs", remote.as_uri(), "refs/checkpoints/*"])
              for _ in range(repeat)]
    return {"gitckpt": statistics.median(ours), "git": statistics.median(theirs)}


def bench_many(tmp: Path, a: Path, task: str, refs: int, repeat: int) -> dict:
    head = git(a, "rev-parse", f"refs/checkpoints/{task}/head")
    stream = []
    for n in range(refs):
        body = f"drift {n}\n"
        stream += [f"commit refs/checkpoints/{task}/drifts/{100_000 + n}",
                   f"committer gitckpt <gitckpt@localhost> {1764583200 + n} +0000",
                   f"data {len(body)}", body, f"from {head}", ""]
    subprocess.run(["git", "-C", str(a), "fast-import", "--quiet"],
                   input="\n".join(stream) + "\n", text=True, check=True)
    ours, theirs = [], []
    for r in range(repeat):
        remote = fresh_remote(tmp, a, f"many-{r}.git")
        ours.append(timed(gitckpt(a, "push", remote.as_uri(), "--yes")))
        remote = fresh_remote(tmp, a, f"gitmany-{r}.git")
        theirs.append(timed(["git", "-C", str(a), "push", "-q", "--atomic", remote.as_uri(),
                             f"refs/checkpoints/{task}/*:refs/checkpoints/{task}/*",
                             "refs/notes/checkpoints:refs/notes/checkpoints"]))
    return {"gitckpt": statistics.median(ours), "git": statistics.median(theirs)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--refs", type=int, default=32_000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitckpt-remotebench-"))
    home = tmp / "home"
    home.mkdir()
    ENV.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    try:
        a, _, task = build_task(tmp, args.files, args.steps)
        rows = {"push": bench_push(tmp, a, task, args.repeat)}
        pushed = fresh_remote(tmp, a, "pushed.git")
        subprocess.run(gitckpt(a, "push", pushed.as_uri(), "--yes"), env=ENV, check=True,
                       capture_output=True)
        rows["fetch"] = bench_fetch(tmp, pushed, task, args.repeat)
        rows["list"] = bench_list(tmp, a, args.tasks, args.repeat)
        rows[f"{args.refs} refs"] = bench_many(tmp, a, task, args.refs, max(1, args.repeat // 2))
        print(f"{args.files} files, {args.steps} steps, {args.tasks} tasks listed; "
              f"medians of {args.repeat} (wall clock, s)")
        print(f"{'operation':<12} {'gitckpt':>8} {'git':>8} {'ratio':>6}")
        for name, r in rows.items():
            print(f"{name:<12} {r['gitckpt']:>8.3f} {r['git']:>8.3f} "
                  f"{r['gitckpt'] / r['git']:>6.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

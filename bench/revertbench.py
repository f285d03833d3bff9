"""A revert with one conflict in one large text file, next to `git revert` of the same change:
wall clock and peak memory (the process's maximum RSS), medians of --repeat runs.

    python bench/revertbench.py [--mb 38] [--repeat 3]

The file has lines of 40 bytes. A step changes line 10; the user then changes it otherwise;
reverting the step conflicts there and nowhere else. gitckpt's preview (`gitckpt revert 1`)
and apply (`--apply --conflicts=markers`) run on a workspace whose change is unsaved; git's
needs the user's change committed (`git revert --no-commit`, then `--abort`). The memory of
the merge is the peak less that of the same commands on an 11-line file (Python, pygit2 and
gitckpt loaded), as a multiple of the file's size. The peer task-checkpoint-mcp has no revert.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench import ENV, git  # noqa: E402

PY = sys.executable
#: Runs a command and prints its wall clock and maximum RSS (KiB), as `time -v` would.
MEASURE = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
           "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
           " print(time.perf_counter() - t, "
           "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def measured(cmd: list[str], cwd: Path) -> tuple[float, float]:
    out = subprocess.run([PY, "-c", MEASURE, *cmd], cwd=cwd, env=ENV, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024  # seconds, MiB


def workspace(root: Path, lines: int) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    with open(root / "big.txt", "w") as f:
        for i in range(lines):
            f.write(f"line {i:07d} {'x' * 26}\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")


def edit(root: Path, who: str) -> None:
    path = root / "big.txt"
    data = path.read_bytes()
    at = data.index(b"line 0000010 ")
    end = data.index(b"\n", at)
    path.write_bytes(data[:at] + f"line 0000010 {who}".encode() + data[end:])


def gitckpt_runs(tmp: Path, lines: int, repeat: int) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {"preview": [], "apply": []}
    for r in range(repeat):
        root = tmp / f"ckpt-{lines}-{r}"
        workspace(root, lines)
        subprocess.run([PY, "-m", "gitckpt", "init", "big"], cwd=root, env=ENV, check=True,
                       capture_output=True)
        edit(root, "changed by the step")
        subprocess.run([PY, "-m", "gitckpt", "save", "step"], cwd=root, env=ENV, check=True,
                       capture_output=True)
        edit(root, "changed by the user")
        out["preview"].append(measured([PY, "-m", "gitckpt", "revert", "1"], root))
        out["apply"].append(measured([PY, "-m", "gitckpt", "revert", "1", "--apply",
                                      "--conflicts=markers"], root))
        assert (root / "big.txt").read_bytes().count(b"<<<<<<< ") == 1
        shutil.rmtree(root)
    return out


def git_runs(tmp: Path, lines: int, repeat: int) -> list[tuple[float, float]]:
    out = []
    root = tmp / f"git-{lines}"
    workspace(root, lines)
    edit(root, "changed by the step")
    git(root, "commit", "-q", "-am", "step")
    step = git(root, "rev-parse", "HEAD")
    edit(root, "changed by the user")
    git(root, "commit", "-q", "-am", "user")
    for _ in range(repeat):
        out.append(measured(["git", "revert", "--no-commit", step], root))
        subprocess.run(["git", "revert", "--abort"], cwd=root, env=ENV, check=False,
                       capture_output=True)
    shutil.rmtree(root)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=38.0)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    lines = int(args.mb * 1_000_000 / 40)
    size = lines * 40 / (1 << 20)
    tmp = Path(tempfile.mkdtemp(prefix="gitckpt-revertbench-"))
    home = tmp / "home"
    home.mkdir()
    ENV.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    (home / ".gitconfig").write_text("[user]\n\tname = b\n\temail = b@b\n")
    try:
        small = gitckpt_runs(tmp, 11, args.repeat)
        big = gitckpt_runs(tmp, lines, args.repeat)
        theirs = git_runs(tmp, lines, args.repeat)
        print(f"one conflict in a {size:.1f} MiB file of {lines:,} lines; medians of "
              f"{args.repeat}")
        print(f"{'operation':<22} {'wall s':>7} {'peak MiB':>9} {'merge x size':>12}")
        for name in ("preview", "apply"):
            base = statistics.median(m for _, m in small[name])
            wall = statistics.median(t for t, _ in big[name])
            peak = statistics.median(m for _, m in big[name])
            print(f"{'gitckpt ' + name:<22} {wall:>7.2f} {peak:>9.0f} "
                  f"{(peak - base) / size:>12.2f}")
        wall = statistics.median(t for t, _ in theirs)
        peak = statistics.median(m for _, m in theirs)
        print(f"{'git revert --no-commit':<22} {wall:>7.2f} {peak:>9.0f} {peak / size:>12.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Line provenance: `gitckpt why` on one file of 5,000 lines after 500 checkpoints, against
`git blame` over the same 500 versions as a line of commits in a scratch repository; and what
the prompt and usage bookkeeping adds to a save (a save with prompts a hook heard and a grown
transcript, against one without; and with the transcript kept).

Usage: python bench/whybench.py [--lines 5000] [--checkpoints 500] [--repeat 5]

Every figure is a median of --repeat runs, in milliseconds. The bars are issue 27's: `why`
against `git blame` as a ratio, and at most 5% added to a save.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ENV


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                          check=True, env=ENV).stdout.decode()


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, env=ENV)
    return (time.perf_counter() - start) * 1000


def history(base: Path, lines: int, checkpoints: int) -> tuple[Path, list[bytes]]:
    """A repository whose task has `checkpoints` checkpoints of one file (four drifts, then
    a step, over and over), each a few lines changed or added; the file's versions."""
    from ops import service

    root = base / "ws"
    root.mkdir()
    git(root, "init", "-q")
    rng = random.Random(27)
    text = [f"line {i} {rng.random():.6f}" for i in range(lines)]
    (root / "f.txt").write_text("\n".join(text) + "\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
    service.init(root, "why bench")
    versions = [(root / "f.txt").read_bytes()]
    for k in range(checkpoints - 1):
        for _ in range(3):
            at = rng.randrange(len(text))
            if rng.random() < 0.3:
                text.insert(at, f"added {k} {rng.random():.6f}")
            else:
                text[at] = f"changed {k} {rng.random():.6f}"
        (root / "f.txt").write_text("\n".join(text) + "\n")
        if k % 5 == 4:
            service.save(root, f"step {k}", conclusion="c")
        else:
            service.capture(root)
        versions.append((root / "f.txt").read_bytes())
    return root, versions


def scratch(base: Path, versions: list[bytes]) -> Path:
    """The same versions as a line of commits (git fast-import)."""
    repo = base / "scratch"
    git(base, "init", "-q", str(repo))
    stream = []
    for i, data in enumerate(versions):
        stream.append(b"commit refs/heads/main\nmark :%d\n" % (i + 1))
        stream.append(b"committer b <b@b> %d +0000\ndata 2\nv\n" % (1_700_000_000 + i))
        if i:
            stream.append(b"from :%d\n" % i)
        stream.append(b"M 100644 inline f.txt\ndata %d\n" % len(data) + data + b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(stream))
    git(repo, "reset", "-q", "--hard", "main")
    return repo


def save_cost(base: Path, repeat: int) -> tuple[float, float, float]:
    """Saves of a 1,000-file workspace with one file changed (medians, interleaved): without
    bookkeeping; with five prompts a hook heard pending and a session whose transcript grew by
    20 model calls (about 20 KB) since the step before, for the usage; and the same with
    `config transcripts on`, which keeps that segment redacted."""
    import json

    from ops import service

    from bench import make_workspace
    from gitckpt.engine import prompts, sessions

    root = base / "saves"
    files = make_workspace(root, 1000)
    service.init(root, "save bench")
    tl = service.open_timeline(root)
    tid = tl.resolve(None)
    transcript = base / "session.jsonl"
    transcript.write_text("")
    out: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for i in range(repeat * 3):
        mode = i % 3
        if mode:
            sessions.heard(tl.store, tid, "bench", str(transcript), "claude")
            sessions.set_enabled(tl.store, mode == 2)
            for j in range(5):
                prompts.add(tl.store, tid, f"prompt {i}.{j}: make the export faster " * 4,
                            session="bench", host="claude", at="2026-12-02T00:00:00Z")
            with transcript.open("a") as f:
                for j in range(20):
                    f.write(json.dumps({"type": "assistant", "message": {
                        "id": f"m{i}.{j}", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": "changed the export loop " * 30}],
                        "usage": {"input_tokens": 10, "output_tokens": 200}}}) + "\n")
        with open(files[i % len(files)], "a") as f:
            f.write(f"save {i}\n")
        start = time.perf_counter()
        service.save(root, f"step {i}", conclusion="c")
        out[mode].append((time.perf_counter() - start) * 1000)
    return (statistics.median(out[0]), statistics.median(out[1]), statistics.median(out[2]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--checkpoints", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitckpt-whybench-") as tmp:
        base = Path(tmp)
        ENV["HOME"] = str(base)
        os.environ["HOME"] = str(base)
        root, versions = history(base, a.lines, a.checkpoints)
        repo = scratch(base, versions)
        why = statistics.median(timed(["gitckpt", "--json", "why", "f.txt"], root)
                                for _ in range(a.repeat))
        blame = statistics.median(timed(["git", "blame", "--porcelain", "f.txt"], repo)
                                  for _ in range(a.repeat))
        plain, heard, kept = save_cost(base, max(a.repeat, 7))
    print(f"## why at {a.lines:,} lines and {a.checkpoints} checkpoints, medians of "
          f"{a.repeat} (ms)\n")
    print(f"`gitckpt why f.txt` (every line): {why:.0f} ms; `git blame` over the same "
          f"versions: {blame:.0f} ms; ratio {why / blame:.2f}")
    print(f"\na save of 1,000 files: {plain:.1f} ms without bookkeeping, {heard:.1f} ms with "
          f"five prompts a hook heard and a transcript's usage ({(heard / plain - 1) * 100:+.1f}%)"
          f"; {kept:.1f} ms keeping the transcript too (config transcripts on, "
          f"{(kept / plain - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()

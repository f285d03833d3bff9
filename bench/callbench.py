"""What users meet: MCP calls, server memory, CLI start-up and first saves of uncommitted files,
each next to git plumbing, a Cline-style shadow repository and the peer task-checkpoint-mcp
(over MCP, same client, interleaved run by run), on the same synthetic workspaces.

    python bench/callbench.py [--sizes 10000] [--first-sizes 10000,100000]
                              [--watched-sizes 100000] [--repeat 7]

Medians of --repeat runs. Workspaces are bench.py's: N files of 4 KiB average, 50 per folder.
CPU times are user + system of the child process (resource.getrusage). The peer
(`pip install -r bench/requirements.txt`) is measured when its `tc-mcp` command is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

from ops import service  # noqa: E402

from bench import ENV, GitPlumbing, git, make_workspace, touch_files  # noqa: E402

PY = sys.executable
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


class Server:
    """An MCP server over stdio, driven with raw JSON-RPC (the same client for both)."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, cwd=cwd,
                                     env={**ENV, **env})
        self.n = 0
        self.rpc(INIT)
        self.initialize_ms = (time.perf_counter() - started) * 1000
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def rpc(self, msg: dict) -> dict:
        self.send(msg)
        while True:
            frame = json.loads(self.proc.stdout.readline())
            if frame.get("id") == msg["id"]:
                return frame

    def call(self, tool: str, args: dict) -> tuple[float, dict]:
        """Wall milliseconds of one tools/call, and its result."""
        self.n += 1
        started = time.perf_counter()
        r = self.rpc({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                      "params": {"name": tool, "arguments": args}})
        ms = (time.perf_counter() - started) * 1000
        if "error" in r or r["result"].get("isError"):
            raise RuntimeError(f"{tool} failed: {json.dumps(r)[:300]}")
        return ms, r["result"]

    def rss_mib(self, key: str = "VmRSS") -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def timed_ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def in_turn(out: dict[str, list[float]], runs: dict, flip: bool) -> None:
    """Each run's milliseconds appended to `out[key]`, in the order given or (`flip`) reversed."""
    for key in list(runs)[::-1] if flip else list(runs):
        out[key].append(runs[key]())


def cpu_ms(cmd: list[str], repeat: int, cwd: Path | None = None, env: dict | None = None
           ) -> float:
    """Median CPU time (user + system) of running `cmd` to its end."""
    out = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, cwd=cwd, env=env or os.environ, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return med(out)


def cpu_round_robin(cmds: dict[str, tuple[list[str], dict | None]], repeat: int
                    ) -> dict[str, float]:
    """Median CPU time (user + system) of each command, run in turn `repeat` times."""
    runs: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for key, (cmd, env) in cmds.items():
            runs[key].append(cpu_ms(cmd, 1, env=env))
    return {k: med(v) for k, v in runs.items()}


def bench_mcp(base: Path, n: int, repeat: int) -> dict[str, float]:
    """No-change save and resume over MCP (watcher off), in-process for comparison, and the
    server's memory with the watcher off and on; the peer over MCP, run by run."""
    mine, theirs = base / f"mcp-g-{n}", base / f"mcp-p-{n}"
    for root in (mine, theirs):
        shutil.rmtree(root, ignore_errors=True)
        make_workspace(root, n)
    time.sleep(2.5)  # past the racy-timestamp window
    service.init(mine, "bench")
    service.save(mine, "warm")
    ours = Server([PY, "-m", "gitckpt", "mcp", "--root", str(mine)], mine,
                  {"GITCKPT_WATCH": "off"})
    peer = None
    if shutil.which("tc-mcp"):
        peer = Server([shutil.which("tc-mcp")], theirs, {"TC_WATCH": "off"})
        peer.call("tc_init", {"root": str(theirs), "name": "bench",
                              "store": str(base / f"peer-store-{n}")})
        peer.call("tc_save", {"root": str(theirs), "title": "warm"})
    ours.call("ckpt_save", {"title": "warm"})
    out: dict[str, list[float]] = {k: [] for k in ("save", "resume", "peer_save",
                                                    "peer_resume", "inproc", "inproc_resume")}
    # Run by run: the MCP call and the same call in this process (which goes first alternates:
    # the one right after the peer's second of work finds the caches cold), then the peer's.
    for i in range(repeat):
        in_turn(out, {"save": lambda i=i: ours.call("ckpt_save", {"title": f"mcp {i}"})[0],
                      "inproc": lambda i=i: timed_ms(
                          lambda: service.save(mine, f"in-process {i}"))}, flip=i % 2 == 0)
        if peer:
            out["peer_save"].append(peer.call("tc_save", {"root": str(theirs),
                                                          "title": f"mcp {i}"})[0])
        in_turn(out, {"resume": lambda: ours.call("ckpt_resume", {})[0],
                      "inproc_resume": lambda: timed_ms(lambda: service.resume(mine))},
                flip=i % 2 == 0)
        if peer:
            out["peer_resume"].append(peer.call("tc_resume", {"root": str(theirs)})[0])
    result = {k: med(v) for k, v in out.items() if v}
    result.update(initialize=ours.initialize_ms, rss_off=ours.rss_mib())
    if peer:
        result.update(peer_rss=peer.rss_mib(), peer_initialize=peer.initialize_ms)
        peer.close()
    ours.close()
    watched = Server([PY, "-m", "gitckpt", "mcp", "--root", str(mine)], mine, {})
    watched.call("ckpt_resume", {})  # the first call starts the watcher
    watched.call("ckpt_save", {"title": "watched"})
    (mine / "touched.txt").write_text("a change the watcher records\n")
    time.sleep(4)  # its quiet period, then its drift
    result.update(rss_on=watched.rss_mib(), hwm_on=watched.rss_mib("VmHWM"))
    watched.close()
    for root in (mine, theirs):
        shutil.rmtree(root, ignore_errors=True)
    return result


def bench_watched(base: Path, n: int, repeat: int) -> dict[str, float]:
    """In-process saves with a healthy watcher (its journal trusted after one full scan),
    watcher off, and git plumbing's warm-index save, run by run on one workspace."""
    from gitckpt.engine.watch import Settings
    from gitckpt.store import journal as journals

    root = base / f"watched-{n}"
    shutil.rmtree(root, ignore_errors=True)
    files = make_workspace(root, n)
    time.sleep(2.5)
    service.init(root, "bench")
    g = GitPlumbing(root)
    g.save()
    quiet = Settings(quiet=3600.0, max_wait=3600.0, poll=3600.0)  # the bench saves, not it
    session = service.watch(root, settings=quiet)
    journal = journals.for_root(str(root))
    service.save(root, "the full scan that makes the journal trusted")
    rows: dict[str, list[float]] = {k: [] for k in ("nochange", "ten", "git_nochange",
                                                    "git_ten", "off_nochange")}
    for i in range(repeat):
        rows["nochange"].append(timed_ms(lambda i=i: service.save(root, f"watched {i}")))
        rows["git_nochange"].append(timed_ms(g.save))
    for i in range(repeat):
        touch_files(files[i * 10:], 10, f"w{i}")
        rows["ten"].append(timed_ms(lambda i=i: service.save(root, f"ten {i}")))
        touch_files(files[i * 10 + 5000:], 10, f"g{i}")
        rows["git_ten"].append(timed_ms(g.save))
    hinted = journal.counts["hinted"] if journal else 0
    session.watcher.source.stop()
    for i in range(repeat):
        rows["off_nochange"].append(timed_ms(lambda i=i: service.save(root, f"off {i}")))
    g.close()
    shutil.rmtree(root, ignore_errors=True)
    return {**{k: med(v) for k, v in rows.items()}, "hinted": hinted,
            "mode": session.watcher.mode}


def untracked(root: Path, n: int) -> None:
    """A git repository with no commit and `n` new files."""
    shutil.rmtree(root, ignore_errors=True)
    make_workspace(root, n, with_git=False)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "gc.auto", "0")


def loose_objects(git_dir: Path) -> int:
    return sum(len(f) for d, _, f in os.walk(git_dir / "objects") if len(Path(d).name) == 2)


def bench_first(base: Path, n: int, repeat: int) -> dict[str, float]:
    """First save of `n` uncommitted files: gitckpt, git plumbing (a new private index,
    `add -A`, `write-tree`) and a shadow repository (`add -A`, `commit`), each on a
    repository whose objects folder starts empty."""
    root = base / f"first-{n}"
    untracked(root, n)
    time.sleep(2.5)
    shadow = base / f"shadow-{n}"
    index = base / f"index-{n}"
    rows: dict[str, list[float]] = {"gitckpt": [], "git": [], "shadow": []}
    loose = packs = 0
    for _ in range(repeat):
        shutil.rmtree(root / ".git")
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "gc.auto", "0")
        rows["gitckpt"].append(timed_ms(lambda: service.init(root, "first")))
        loose = loose_objects(root / ".git")
        packs = len(list((root / ".git" / "objects" / "pack").glob("*.pack")))
        shutil.rmtree(root / ".git")
        git(root, "init", "-q", "-b", "main")
        index.unlink(missing_ok=True)
        env = {**ENV, "GIT_INDEX_FILE": str(index)}
        rows["git"].append(timed_ms(lambda env=env: (git(root, "add", "-A", env=env),
                                                     git(root, "write-tree", env=env))))
        shutil.rmtree(shadow, ignore_errors=True)
        subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True, env=ENV)
        args = ["git", f"--git-dir={shadow}", f"--work-tree={root}"]
        rows["shadow"].append(timed_ms(lambda args=args: (
            subprocess.run([*args, "add", "-A"], check=True, env=ENV, cwd=root),
            subprocess.run([*args, "commit", "-q", "-m", "checkpoint"], check=True, env=ENV,
                           cwd=root))))
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(shadow, ignore_errors=True)
    return {**{k: med(v) for k, v in rows.items()}, "loose": loose, "packs": packs}


def bench_cli(base: Path, repeat: int) -> dict[str, float]:
    """CPU time of the CLI's start-up and of resume and a no-change save on 1,000 files."""
    root, plain = base / "cli-1000", base / "home" / "cli-plain"
    for r in (root, plain):
        shutil.rmtree(r, ignore_errors=True)
    make_workspace(root, 1000)
    make_workspace(plain, 1000, with_git=False)
    time.sleep(2.5)
    cmd = [str(Path(PY).parent / "gitckpt")]
    if not Path(cmd[0]).exists():
        cmd = [PY, "-m", "gitckpt"]
    env = {**ENV, "HOME": str(base / "home")}
    subprocess.run([*cmd, "-C", str(root), "init", "bench"], check=True, env=env,
                   capture_output=True)
    subprocess.run([*cmd, "-C", str(plain), "init", "bench"], check=True, env=env,
                   capture_output=True)
    probe = ("import atexit, sys\natexit.register(lambda: print('pygit2' in sys.modules, "
             "file=sys.stderr))\nsys.argv = ['gitckpt', '-C', sys.argv[1], 'resume']\n"
             "from gitckpt.entry import main\nmain()\n")
    p = subprocess.run([PY, "-c", probe, str(plain)], capture_output=True, text=True, env=env)
    # Round robin, one run of each command in turn: a machine whose speed drifts during the
    # run (this one's does) moves the ratios less than a block of runs per command would.
    out: dict = cpu_round_robin({
        "pass": ([PY, "-c", "pass"], None),
        "pygit2": ([PY, "-c", "import pygit2"], None),
        "version": ([*cmd, "--version"], None),
        "help": ([*cmd, "--help"], None),
        "resume": ([*cmd, "-C", str(root), "resume"], env),
        "save": ([*cmd, "-C", str(root), "save", "no change"], env),
        "plain_resume": ([*cmd, "-C", str(plain), "resume"], env),
        "git_status": (["git", "-C", str(root), "status"], None),
        "git_revparse": (["git", "-C", str(root), "rev-parse", "HEAD"], None),
    }, repeat)
    out["plain_pygit2"] = p.stderr.strip().endswith("True")
    for r in (root, plain):
        shutil.rmtree(r, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000", help="workspaces for the MCP rows")
    ap.add_argument("--first-sizes", default="10000", help="workspaces for first saves")
    ap.add_argument("--watched-sizes", default="100000", help="workspaces for watched saves")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--first-repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp(prefix="gitckpt-callbench-"))
    lines = []
    cli = bench_cli(base, args.repeat)
    print(f"[cli] {cli}", file=sys.stderr)
    lines += [
        "| CLI, CPU time (1,000 files) | gitckpt | reference | target | ratio to target |",
        "|---|---:|---:|---:|---:|",
        f"| `--version` | {cli['version']:.0f} ms | `python -c pass` {cli['pass']:.0f} ms "
        f"| {2 * cli['pass']:.0f} ms | {cli['version'] / (2 * cli['pass']):.2f} |",
        f"| `--help` | {cli['help']:.0f} ms | `python -c pass` {cli['pass']:.0f} ms "
        f"| {2 * cli['pass']:.0f} ms | {cli['help'] / (2 * cli['pass']):.2f} |",
        f"| `resume` | {cli['resume']:.0f} ms | `import pygit2` {cli['pygit2']:.0f} ms "
        f"| {cli['pygit2'] + 40:.0f} ms | {cli['resume'] / (cli['pygit2'] + 40):.2f} |",
        f"| no-change `save` | {cli['save']:.0f} ms | `git status` {cli['git_status']:.0f} ms "
        f"| {cli['pygit2'] + 40:.0f} ms | {cli['save'] / (cli['pygit2'] + 40):.2f} |",
        f"| plain-folder `resume` | {cli['plain_resume']:.0f} ms | pygit2 loaded: "
        f"{'yes' if cli['plain_pygit2'] else 'no'} | no pygit2 | |",
        "",
    ]
    lines += [
        "| files, watcher healthy | no-change save | 10-file save | git plumbing no-change "
        "| git 10-file | git / gitckpt, 10-file (target 8x) | no-change, watcher off "
        "| snapshots from the journal |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in [int(s) for s in args.watched_sizes.split(",") if s]:
        d = bench_watched(base, n, args.repeat)
        print(f"[watched {n}] {d}", file=sys.stderr)
        lines.append(f"| {n:,} | {d['nochange']:.0f} ms | {d['ten']:.0f} ms "
                     f"| {d['git_nochange']:.0f} ms | {d['git_ten']:.0f} ms "
                     f"| {d['git_ten'] / d['ten']:.1f}x | {d['off_nochange']:.0f} ms "
                     f"| {d['hinted']} of {2 * args.repeat} ({d['mode']}) |")
    lines.append("")
    mcp_rows = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        d = bench_mcp(base, n, args.repeat)
        print(f"[mcp {n}] {d}", file=sys.stderr)
        mcp_rows.append((n, d))
    lines += [
        "| files | MCP no-change save | in-process | ratio (target 1.3) | peer MCP save "
        "| MCP resume | peer MCP resume | initialize (target 400 ms) | RSS watcher off / on "
        "(target 80 MiB at 10k, 150 at 100k) | peer RSS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, d in mcp_rows:
        peer = lambda k, d=d: f"{d[k]:.0f} ms" if k in d else "-"  # noqa: E731
        lines.append(
            f"| {n:,} | {d['save']:.0f} ms | {d['inproc']:.0f} ms "
            f"| {d['save'] / d['inproc']:.2f} "
            f"| {peer('peer_save')} | {d['resume']:.0f} ms | {peer('peer_resume')} "
            f"| {d['initialize']:.0f} ms | {d['rss_off']:.0f} / {d['rss_on']:.0f} MiB "
            f"(peak {d['hwm_on']:.0f}) | "
            + (f"{d['peer_rss']:.0f} MiB |" if "peer_rss" in d else "- |"))
    lines.append("")
    lines += [
        "| files (uncommitted) | gitckpt first save | git plumbing | ratio (target 1.5) "
        "| shadow repository | loose objects left | packs |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in [int(s) for s in args.first_sizes.split(",") if s]:
        d = bench_first(base, n, args.first_repeat if n < 100_000 else 1)
        print(f"[first {n}] {d}", file=sys.stderr)
        lines.append(f"| {n:,} | {d['gitckpt']:.0f} ms | {d['git']:.0f} ms "
                     f"| {d['gitckpt'] / d['git']:.2f} | {d['shadow']:.0f} ms | {d['loose']} "
                     f"| {d['packs']} |")
    print("\n".join(lines))
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Hermetic fixtures: real git repositories in temp folders, a pinned identity, a fake HOME,
and the borrowed-repository check (`RepoGuard`) that every test runs after every operation."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test User", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test User", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


#: The repository's root: tests/ sits in it, each test module in a folder of tests/.
REPO = Path(__file__).resolve().parent.parent


def _strays(base: Path) -> list[Path]:
    """`.gitckpt` stores or pointers where no test may see or leave one: above the temp root
    (a store there takes over every plain folder below it) and in the folder tests run from."""
    places = [*base.parents, Path.cwd(), REPO]
    return [p / ".gitckpt" for p in places if os.path.lexists(p / ".gitckpt")]


def marketplace_copy(source: Path) -> Path:
    """This repository as a plugin marketplace's clone holds it (its git files, tracked and
    untracked but not ignored), copied to `source`."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    return source


def doubling(work, make, n: int = 16384, floor: float = 1e-4) -> float:
    """How much more CPU `work` spends on `make(2 * n)` than on `make(n)` (2 for linear work,
    4 for quadratic): work compared with work in one process (the best of three, the
    collector paused), never with seconds; `floor` keeps a too-small measure from deciding."""
    import gc

    def spent(size: int) -> float:
        given = make(size)
        best = float("inf")
        gc.collect()
        gc.disable()  # the collector's passes over every object made: not the work's
        try:
            for _ in range(3):
                began = time.thread_time()
                work(given)
                best = min(best, time.thread_time() - began)
        finally:
            gc.enable()
        return max(best, floor)
    return spent(2 * n) / spent(n)


def stop_services(runtime: str) -> None:
    """Every service started with `runtime` as its folder, stopped (killed when it does not
    leave within 5 s), and the folder removed."""
    import fcntl
    import signal

    for lock in Path(runtime).glob("*.lock"):
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            continue  # nobody holds it
        except OSError:
            pass
        finally:
            os.close(fd)
        text = lock.read_text().strip()
        if not text.isdigit() or int(text) == os.getpid():
            continue  # (a listener a test runs in its own process closes itself)
        pid = int(text)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                break
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except OSError:
                    break
                time.sleep(0.02)
            else:
                continue
            break
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture(scope="session")
def runtime_parent():
    """One short folder under /tmp for every test's service folder in this process, removed
    at the end with any service still in it: a service a CLI process spawned as it exited may
    start after its test's teardown, and would otherwise leave its folder behind."""
    parent = tempfile.mkdtemp(prefix="gk", dir="/tmp")
    yield parent
    for runtime in Path(parent).iterdir():
        stop_services(str(runtime))
    shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch, runtime_parent):
    """No test reads or writes the real home, global git config or log folder, none runs with
    a store above its temp folder, and none leaves a store outside it."""
    base = tmp_path_factory.getbasetemp()
    _BASE[:] = [base]
    found = _strays(base)
    if found:
        pytest.fail(f"a gitckpt store lies above the test's temp folder: {found}; remove it, "
                    "it would serve every plain folder below it", pytrace=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GITCKPT_MAX_FILE_SIZE", raising=False)
    monkeypatch.delenv("GITCKPT_LOCK_TIMEOUT", raising=False)
    monkeypatch.delenv("GITCKPT_REMOTE_CONNECT_TIMEOUT", raising=False)
    monkeypatch.delenv("GITCKPT_REMOTE_IDLE_TIMEOUT", raising=False)
    monkeypatch.delenv("GITCKPT_LOG_DIR", raising=False)
    # The test's own service folder (short: a socket's path has at most 100 bytes); the
    # services a test started are stopped when it ends.
    runtime = tempfile.mkdtemp(prefix="t", dir=runtime_parent)
    monkeypatch.setenv("GITCKPT_RUNTIME_DIR", runtime)
    monkeypatch.setenv("GITCKPT_SERVICE_IDLE", "60")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    for k, v in IDENTITY.items():
        monkeypatch.setenv(k, v)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
    yield home
    stop_services(runtime)
    left = _strays(base)
    if left:
        pytest.fail(f"the test left a gitckpt store outside its temp folder: {left}",
                    pytrace=False)


@pytest.fixture
def full_mcp_results(monkeypatch):
    """MCP answers carry the result's whole object as structured content (the CLI's
    `--json`), which these tests read; by default an answer is its text alone."""
    monkeypatch.setenv("GITCKPT_MCP_RESULTS", "full")


@pytest.fixture(autouse=True)
def settle_quickly(request, monkeypatch):
    """A file whose times are newer than a tenth of a second is read twice, a tenth of a
    second apart (store/files.py SETTLED_NS: a write may be under way). A test writes files
    and saves them at once, and no writer runs beside it: a millisecond is enough there, and
    saves nearly a second of every ten-step test. Tests with writers beside the reads are
    marked `settling` and wait the real time."""
    if request.node.get_closest_marker("settling") is None:
        from gitckpt.store import files

        monkeypatch.setattr(files, "SETTLED_NS", 1_000_000)


def git(root: Path, *args: str, check: bool = True, **kw) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                         check=False, **kw)
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def read_terminal(master: int, wait: float = 30) -> str:
    """Everything a child writes to the pseudo-terminal whose master end is `master`, until it
    closes its end (or `wait` seconds pass with nothing)."""
    import select

    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its end (Linux says EIO)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None,
            timeout: float = 60) -> CliResult:
    """Run the real CLI in a subprocess (`python -m gitckpt`)."""
    p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=cwd, capture_output=True,
                       text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    return CliResult(p.returncode, p.stdout, p.stderr)


class RepoGuard:
    """Everything of the user's repository gitckpt must never change, and `git fsck`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.before = self.state()

    def state(self) -> dict:
        git_dir = Path(git(self.root, "rev-parse", "--absolute-git-dir").strip())
        common = Path(git(self.root, "rev-parse", "--git-common-dir").strip())
        common = common if common.is_absolute() else (self.root / common).resolve()
        index = git_dir / "index"
        st = index.stat() if index.exists() else None
        return {
            "index": (hashlib.sha1(index.read_bytes()).hexdigest(), st.st_mtime_ns)
            if st else None,
            "head": git(self.root, "rev-parse", "HEAD", check=False).strip(),
            "symbolic": git(self.root, "symbolic-ref", "-q", "HEAD", check=False).strip(),
            "refs": git(self.root, "for-each-ref", "--format=%(refname) %(objectname)",
                        "refs/heads", "refs/tags", "refs/stash", "refs/remotes"),
            "stash": git(self.root, "--no-optional-locks", "stash", "list"),
            "config": (common / "config").read_bytes(),
            "status": git(self.root, "--no-optional-locks", "status", "--porcelain",
                          "--untracked-files=all"),
            "hooks": sorted(p.name for p in (common / "hooks").iterdir())
            if (common / "hooks").exists() else [],
        }

    def check(self, *, status_changes: bool = False, fsck_too: bool = True) -> None:
        """Assert nothing of the user's repository moved (and fsck is clean)."""
        now = self.state()
        for key, value in self.before.items():
            if key == "status" and status_changes:
                continue
            assert now[key] == value, f"{key} changed"
        if fsck_too:
            fsck(self.root)

    def reset(self) -> None:
        self.before = self.state()


def fsck(root: Path) -> None:
    p = subprocess.run(["git", "-C", str(root), "fsck", "--strict", "--no-dangling"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for word in ("error", "missing", "broken", "bad ", "warning"):
        assert word not in (p.stdout + p.stderr).lower(), p.stdout + p.stderr


_TEMPLATE: list[Path] = []  # the first make_repo's result, copied by the later ones
_BASE: list[Path] = []  # pytest's session temp folder


def make_repo(path: Path) -> Path:
    """A repository with a first commit, a branch, a tag, a stash, and uncommitted work.

    Built with git once per session, then copied (timestamps kept) and its index refreshed:
    the same repository, for one git call instead of nine."""
    if _TEMPLATE and not path.exists():
        shutil.copytree(_TEMPLATE[0], path, symlinks=True)
        git(path, "update-index", "-q", "--refresh", check=False)
        return path
    made = _build_repo(path)
    if not _TEMPLATE and _BASE:
        template = _BASE[0] / "repo-template"  # pytest's session temp folder, not a test's
        if not template.exists():
            shutil.copytree(made, template, symlinks=True)
        _TEMPLATE.append(template)
    return made


def _build_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('v1')\n")
    (path / "README.md").write_text("# project\n")
    (path / ".gitignore").write_text("*.log\nbuild/\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    git(path, "branch", "feature")
    git(path, "tag", "v1")
    (path / "README.md").write_text("# project\nstashed\n")
    git(path, "stash", "-q")
    (path / "src" / "app.py").write_text("print('v2')\n")  # modified, unstaged
    (path / "notes.txt").write_text("untracked\n")  # untracked
    (path / "debug.log").write_text("ignored\n")  # ignored
    (path / "src" / "staged.py").write_text("x = 1\n")
    git(path, "add", "src/staged.py")  # staged
    return path


@pytest.fixture
def repo(tmp_path, request) -> Path:
    """A repository that, after the test, must still have its HEAD, index (bytes and mtime),
    branches, tags, stash, config and hooks, and pass `git fsck --strict`. Tests that run git
    commands on it themselves are marked `user_git` and only get the fsck."""
    path = make_repo(tmp_path / "repo")
    guard = RepoGuard(path)
    yield path
    crafted = request.node.get_closest_marker("crafted_store") is not None
    if request.node.get_closest_marker("user_git") is None:
        guard.check(status_changes=True, fsck_too=not crafted)
    elif not crafted:
        fsck(path)


@pytest.fixture
def guard(repo) -> RepoGuard:
    return RepoGuard(repo)


def make_plain(path: Path) -> Path:
    """A plain folder (no git) with the same kinds of files as `make_repo`."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('v2')\n")
    (path / "src" / "staged.py").write_text("x = 1\n")
    (path / "README.md").write_text("# project\n")
    (path / ".gitignore").write_text("*.log\nbuild/\n")
    (path / "notes.txt").write_text("untracked\n")
    (path / "debug.log").write_text("ignored\n")
    return path


class Workspace:
    """A workspace of either kind, with its store readable by stock git."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind = kind
        self.root = root
        self.git_dir = root / ".git" if kind == "git" else root / ".gitckpt"

    def git(self, *args: str, check: bool = True) -> str:
        """git against the store (the repository itself, or the plain folder's store)."""
        return git(self.root, f"--git-dir={self.git_dir}", *args, check=check)

    def fsck(self) -> None:
        p = subprocess.run(["git", f"--git-dir={self.git_dir}", "fsck", "--strict",
                            "--no-dangling"], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
        bad = [ln for ln in (p.stdout + p.stderr).lower().splitlines()
               if ln and "unborn branch" not in ln]
        assert not bad, bad


@pytest.fixture(params=["git", "dir"])
def ws(request, tmp_path, hermetic) -> Workspace:
    """The same test on a git repository (GitStore) and on a plain folder (DirStore); the
    repository must keep everything of the user's (see `repo`). The plain folder lies in the
    (fake) home folder, as a user's projects do, so its subfolders find its store."""
    if request.param == "git":
        root = make_repo(tmp_path / "repo")
        guard = RepoGuard(root)
    else:
        root = make_plain(hermetic / "plain")
        guard = None
    w = Workspace(request.param, root)
    yield w
    crafted = request.node.get_closest_marker("crafted_store") is not None
    if guard is not None and request.node.get_closest_marker("user_git") is None:
        guard.check(status_changes=True, fsck_too=not crafted)
    if w.git_dir.exists() and not crafted:
        w.fsck()


class Service:
    """gitckpt's operations as tests call them: `service.save(root, "title", conclusion=...)`
    opens the workspace at `root` as the save request declares and performs that request,
    made of the arguments given (its fields, core/operations.py). `cwd` is the caller's
    folder, `clock` the timeline's. Beside the operations: `open_timeline`, `watch`,
    `active`, and a `capture` with the engine's own trigger and tool."""

    def __getattr__(self, op: str):
        from gitckpt.core.decode import decode
        from gitckpt.core.operations import OPERATIONS
        from gitckpt.core.request import params, to_json
        from gitckpt.service.dispatch import call

        cls = OPERATIONS[op.rstrip("_")]

        def perform(root, *args, cwd=None, clock=None, **fields):
            given = {**dict(zip((p.name for p in params(cls)), args, strict=False)), **fields}
            # read through the wire form: records may be given as dicts, paths as Paths
            data = to_json({k: os.fspath(v) if isinstance(v, os.PathLike) else v
                            for k, v in given.items()})
            return call(root, decode(cls, data), cwd=None if cwd is None else str(cwd),
                        clock=clock or time.time)
        return perform

    @staticmethod
    def open_timeline(root, clock=None):
        from gitckpt.service.workspace import open_workspace

        return open_workspace(root, clock=clock or time.time).timeline

    @staticmethod
    def watch(root, *, task=None, **kw):
        from gitckpt.core.operations import WatchRequest
        from gitckpt.service import api
        from gitckpt.service.workspace import open_workspace

        return api.watch(open_workspace(root), WatchRequest(task), **kw)

    @staticmethod
    def active(root):
        from gitckpt.core.errors import GitckptError
        from gitckpt.service.workspace import open_workspace

        try:
            return open_workspace(root).active()
        except GitckptError:
            return None

    def capture(self, root, *, task=None, trigger=None, tool=None, lock_timeout=None,
                clock=None):
        from gitckpt.core.inputs import ToolCall
        from gitckpt.core.operations import CaptureRequest
        from gitckpt.service.dispatch import call

        if trigger is None and tool is None and lock_timeout is None:
            return call(root, CaptureRequest(task), clock=clock or time.time)
        return self.open_timeline(root, clock).capture(
            trigger or "capture", task, lock_timeout=lock_timeout,
            tool=ToolCall(**tool) if tool is not None else None)


service = Service()


def git_tree(root: Path, *excludes: str, prefix: str = "") -> str:
    """What git itself computes for the in-scope files: a temp index, `add -A`, `write-tree`."""
    index = root.parent / f".git-tree-index-{os.getpid()}"  # beside the root: in the test's folder
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        spec = [f":(exclude){e}" for e in excludes]
        subprocess.run(["git", "-C", str(root), "add", "-A", "--", ".", *spec], env=env,
                       check=True, capture_output=True)
        args = ["write-tree"] + ([f"--prefix={prefix}/"] if prefix else [])
        out = subprocess.run(["git", "-C", str(root), *args], env=env, check=True,
                             capture_output=True, text=True)
        return out.stdout.strip()
    finally:
        index.unlink(missing_ok=True)


# What makes a test slow: it starts processes (the CLI, a server, git daemons, writers it
# kills) or waits on another process, directly or through a helper of the tests (its calls
# are followed, in the test modules and here), or it is a property test (hypothesis draws
# many examples). Such tests are marked `slow` by what they do, so a new test is sorted
# without anyone remembering to mark it; `pytest -m "not slow"` is the fast loop. A `git`
# command of the fixtures does not count: it costs a few milliseconds.
_SLOW_CALLS = ("run_cli(", "cli_json(", "sys.executable", "Popen(", "_start(", "start_raw(",
               "StdioServerParameters", "_params(", "params(ws", "multiprocessing", "SIGKILL",
               "SIGTERM", "@given(", "@settings(")


_SOURCES: dict[str, dict[int, str]] = {}


def _source(fn) -> str:
    """The source of function `fn`, its decorators included (each test file parsed once)."""
    import ast

    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    path = code.co_filename
    if path not in _SOURCES:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError:
            text = ""
        lines = text.splitlines(keepends=True)
        found: dict[int, str] = {}
        for node in ast.walk(ast.parse(text)) if text else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found[node.lineno] = "".join(lines[first - 1:node.end_lineno])
        _SOURCES[path] = found
    return _SOURCES[path].get(code.co_firstlineno) or next(
        (s for line, s in _SOURCES[path].items() if line == code.co_firstlineno + 1), "") \
        or _SOURCES[path].get(min((n for n in _SOURCES[path] if n >= code.co_firstlineno),
                                  default=-1), "")


def _slow(fn, seen: set | None = None) -> bool:
    """Whether `fn` (a test or a helper) starts a process, or calls a helper that does."""
    import inspect

    seen = set() if seen is None else seen
    if fn in seen:
        return False
    seen.add(fn)
    source = _source(fn)
    if any(call in source for call in _SLOW_CALLS):
        return True
    code = getattr(fn, "__code__", None)
    names: set[str] = set()
    stack = [code] if code is not None else []
    while stack:  # every name the function and the functions nested in it use
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if inspect.iscode(k))
    scope = getattr(fn, "__globals__", {})
    for name in names:
        helper = scope.get(name)
        if inspect.isfunction(helper) and str(getattr(helper, "__module__", "")) \
                in _TEST_MODULES and _slow(helper, seen):
            return True
    return False


_TEST_MODULES: set[str] = set()


def pytest_configure(config):
    """A suite started as a background job of a shell without job control inherits SIGINT
    ignored, and so would each gitckpt it starts: a test that interrupts one would wait for
    ever. A handler here (reset to the default in each child that is exec'd) restores it."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    """Slow tests are marked (see _SLOW_CALLS) and run after the fast ones, so a run's first
    failures are the fast loop's."""
    marked: dict = {}
    for item in items:
        module = getattr(item, "module", None)
        if module is not None:
            _TEST_MODULES.add(module.__name__)
    _TEST_MODULES.add(__name__)
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        if fn not in marked:
            marked[fn] = _slow(fn)
        if "hosts" in Path(str(item.fspath)).parts[-2:-1]:  # tests/hosts: a real host each
            item.add_marker(pytest.mark.hosts)
            item.add_marker(pytest.mark.slow)
        elif marked[fn]:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is not None)

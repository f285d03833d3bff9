"""The user's own `git` command line, run for gitckpt's pushes and fetches: their transports,
ssh keys, credential helpers, `url.insteadOf` and proxies, and nothing else of theirs.

Every call runs with no hooks (`core.hooksPath=/dev/null`), no automatic gc or maintenance
(a fetch must not repack the user's repository), no terminal prompt, and an environment
without the variables that would point git at another repository. Nothing is written to any
git config. Credentials in a URL never reach a message.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitckpt.errors import InvalidArgument, RemoteFailed
from gitckpt.ids import ObjectId

_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
          "GIT_PREFIX", "GIT_QUARANTINE_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")
_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
         "-c", "fetch.writeCommitGraph=false", "-c", "fetch.recurseSubmodules=false")
# a URL's user and password: up to the last @ before the path, since a password may hold @
_USERINFO = re.compile(r"(?<=://)[^/\s]*@")
_SCP = re.compile(r"^[^/:]+:")  # user@host:path, as git reads it
_ACCESS = "Check the remote's name or URL, and that `git ls-remote REMOTE` works here."


def shown(text: str) -> str:
    """`text` with any credentials in URLs taken out."""
    return _USERINFO.sub("***@", text)


def run(git_dir: Path | None, *args: str, check: bool = True, stdin: str | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """git on `git_dir` (None: outside any repository), as described above, from `cwd` (the
    repository's top folder, where git resolves the relative URLs of its config)."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env["GIT_TERMINAL_PROMPT"] = "0"
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    try:
        p = subprocess.run(["git", *_SAFE, *where, *args], capture_output=True, text=True,
                           env=env, input=stdin, cwd=cwd or git_dir or tempfile.gettempdir(),
                           stdin=None if stdin is not None else subprocess.DEVNULL)
    except OSError as e:
        raise RemoteFailed(f"Cannot run git: {e.strerror or e}.",
                           "Install git: push and fetch use its transports.") from e
    if check and p.returncode != 0:
        raise RemoteFailed(f"git {args[0]} failed: {failure(p)}", _ACCESS)
    return p


def failure(p: subprocess.CompletedProcess) -> str:
    """The useful end of a failed git's output on one line, credentials taken out."""
    lines = [ln.strip() for s in (p.stderr, p.stdout) for ln in s.splitlines() if ln.strip()]
    return shown("; ".join(lines))[-600:] or f"exit code {p.returncode}"


def check_remote(remote: str) -> str:
    if not remote or remote.startswith("-") or any(c in remote for c in "\n\r\0"):
        raise InvalidArgument(f"Not a remote: {shown(remote)!r}.",
                              "Pass a remote's name (origin) or a URL.")
    return remote


def local_path(remote: str, base: Path) -> str:
    """`remote` made absolute if it is a path on this machine (relative to `base`, the
    workspace, as `git -C` does), else as given: a remote's name or a URL."""
    if "://" in remote or _SCP.match(remote):
        return remote
    path = os.path.normpath(os.path.join(base, os.path.expanduser(remote)))
    if remote.startswith((".", "/", "~")) or os.path.isdir(path):
        return path
    return remote


def url_of(git_dir: Path | None, remote: str, cwd: Path | None = None) -> str:
    """What `remote` (a name of the repository's remotes, or a URL) resolves to, with any
    relative path of the repository's config made absolute."""
    check_remote(remote)
    if git_dir is None:
        return remote
    url = run(git_dir, "ls-remote", "--get-url", remote, cwd=cwd).stdout.strip() or remote
    return local_path(url, cwd) if cwd is not None else url


def list_refs(git_dir: Path | None, remote: str, *patterns: str, cwd: Path | None = None
              ) -> dict[str, ObjectId]:
    """The remote's refs matching `patterns`, from one `ls-remote`."""
    out = run(git_dir, "ls-remote", "--refs", remote, *patterns, cwd=cwd).stdout
    refs: dict[str, ObjectId] = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if len(oid) == 40:
            refs[name] = ObjectId(oid)
    return refs


@contextmanager
def scratch_repository(config: Path | None = None, under: Path | None = None
                       ) -> Iterator[Path]:
    """A throwaway bare repository, for reading a remote's small objects without adding
    anything to the user's. With `config`, that repository's settings apply there too (its
    remotes, credential helpers, `http.extraHeader`, `url.insteadOf`, ...); made `under` the
    repository's own folder, the `includeIf "gitdir:..."` sections that match it do too."""
    with tempfile.TemporaryDirectory(prefix="gitckpt-remote-", dir=under) as tmp:
        path = Path(tmp) / "scratch.git"
        run(None, "init", "-q", "--bare", str(path))
        if config is not None and config.is_file():
            own = (path / "config").read_text()
            # included first, so the scratch repository's own core settings win
            quoted = str(config).replace("\\", "\\\\").replace('"', '\\"')
            (path / "config").write_text(f'[include]\n\tpath = "{quoted}"\n{own}')
        yield path


def commit_messages(git_dir: Path, prefix: str) -> dict[str, tuple[int, str]]:
    """(committer time, message) of every commit under `prefix` in `git_dir`, in one call."""
    out = run(git_dir, "for-each-ref", "--format=%(refname)%00%(committerdate:unix)%00"
              "%(contents)%00%00", prefix).stdout
    found: dict[str, tuple[int, str]] = {}
    for record in out.split("\0\0"):
        parts = record.lstrip("\n").split("\0")
        if len(parts) == 3 and parts[1].isdigit():
            found[parts[0]] = (int(parts[1]), parts[2])
    return found

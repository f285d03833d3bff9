"""The user's own `git` command line, run for gitckpt's pushes and fetches: their transports,
ssh keys, credential helpers, `url.insteadOf` and proxies, and nothing else of theirs.

Every call runs with no hooks (`core.hooksPath=/dev/null`), no automatic gc or maintenance
(a fetch must not repack the user's repository), no terminal prompt, and an environment
without the variables that would point git at another repository. Nothing is written to any
git config. Credentials in a URL never reach a message. A git that talks to a remote has
time limits (GITCKPT_REMOTE_CONNECT_TIMEOUT until the remote's first answer,
GITCKPT_REMOTE_IDLE_TIMEOUT between two bytes after it) and ends with gitckpt
(`child_process`); it runs without a terminal, so ssh asks for no passphrase or host key (an
ssh agent and known_hosts answer them).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gitckpt.core import child_process
from gitckpt.core.errors import InvalidArgument, RemoteFailed, RemoteTimeout
from gitckpt.core.ids import ObjectId
from gitckpt.safety.url_secrets import scrub, secrets_of

_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
          "GIT_PREFIX", "GIT_QUARANTINE_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
          "GIT_TRACE_PACKET")
_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
         "-c", "fetch.writeCommitGraph=false", "-c", "fetch.recurseSubmodules=false")
_SCP = re.compile(r"^[^/:]+:")  # user@host:path, as git reads it
_ACCESS = "Check the remote's name or URL, and that `git ls-remote REMOTE` works here."
# git's progress lines (asked for with --progress, so that silence can be measured)
_PROGRESS = re.compile(r"^(?:remote: )?(?:[A-Z][a-z]+(?: [a-z]+)*: +\d+|Total \d+ )")

CONNECT_TIMEOUT = "GITCKPT_REMOTE_CONNECT_TIMEOUT"
IDLE_TIMEOUT = "GITCKPT_REMOTE_IDLE_TIMEOUT"
_DEFAULTS = {CONNECT_TIMEOUT: 30.0, IDLE_TIMEOUT: 120.0}


def shown(text: str, secrets: tuple[str, ...] | list[str] = ()) -> str:
    """`text` with any credentials in URLs (and each of `secrets`) taken out."""
    return scrub(text, secrets)


@dataclass(frozen=True)
class Remote:
    """A remote as the user named it (a name of the repository's remotes, or a URL: what git
    is given) and the URL git resolves it to; `shown` and `url_shown` carry no credential."""

    spec: str
    url: str

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*secrets_of(self.spec), *secrets_of(self.url)]))

    @property
    def shown(self) -> str:
        return scrub(self.spec, self.secrets)

    @property
    def url_shown(self) -> str:
        return scrub(self.url, self.secrets)

    @property
    def local(self) -> bool:
        """A repository on this machine (a path, file://): it needs no connect limit, and
        its own git would trace packets too."""
        return self.url.startswith("file://") or not ("://" in self.url
                                                      or _SCP.match(self.url))


def timeouts() -> child_process.Limits:
    """The time limits of a git talking to a remote, from the environment (seconds; 0 for
    none): until the remote's first answer, and between two bytes after it."""
    return child_process.Limits(_seconds(CONNECT_TIMEOUT), _seconds(IDLE_TIMEOUT))


def _seconds(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return _DEFAULTS[name]
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InvalidArgument(f"{name}={raw[:40]!r} is not a number of seconds.",
                              f"Set it to seconds (the default is {_DEFAULTS[name]:g}), or to 0 "
                              "for no limit.")
    return value or None


def run(git_dir: Path | None, *args: str, check: bool = True, stdin: str | None = None,
        cwd: Path | None = None, remote: Remote | None = None,
        env: dict[str, str] | None = None) -> child_process.Completed:
    """git on `git_dir` (None: outside any repository), as described above, from `cwd` (the
    repository's top folder, where git resolves the relative URLs of its config). With
    `remote`, git talks to it: the time limits apply, and its output carries no credential
    of it; RemoteTimeout when it stays silent. `env` is added to the environment (a
    quarantine's object folders)."""
    env = {**{k: v for k, v in os.environ.items() if k not in _SCRUB}, **(env or {}),
           "GIT_TERMINAL_PROMPT": "0"}
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    secrets = tuple(s for a in args if "://" in a for s in secrets_of(a))
    secrets += remote.secrets if remote is not None else ()
    try:
        p = child_process.run(["git", *_SAFE, *where, *args], env=env, stdin=stdin,
                              cwd=str(cwd or git_dir or tempfile.gettempdir()),
                              limits=_limits(remote), watch_packets=bool(
                                  remote is not None and not remote.local))
    except child_process.Silent as e:
        raise _silent(remote, args[0], e) from None
    except OSError as e:
        raise RemoteFailed(f"Cannot run git: {e.strerror or e}.",
                           "Install git: push and fetch use its transports.") from e
    p.stderr, p.secrets = scrub(p.stderr, secrets), secrets  # stdout is data: see failure
    if check and p.returncode != 0:
        raise RemoteFailed(f"git {args[0]} failed: {failure(p)}", _ACCESS)
    return p


def _limits(remote: Remote | None) -> child_process.Limits | None:
    if remote is None:
        return None
    limits = timeouts()
    return child_process.Limits(None, limits.idle) if remote.local else limits


def _silent(remote: Remote | None, op: str, e: child_process.Silent) -> RemoteTimeout:
    name = remote.url_shown if remote is not None else "the remote"
    if e.phase == "connect":
        return RemoteTimeout(
            f"{name} did not answer within {e.seconds:g} s; git {op} was stopped.",
            f"Check that it is reachable (`git ls-remote REMOTE`). If it is only slow, allow "
            f"more time: {CONNECT_TIMEOUT}=120 (seconds; 0 for no limit).")
    return RemoteTimeout(
        f"{name} sent nothing for {e.seconds:g} s; git {op} was stopped.",
        f"Running it again is safe. If the remote is only slow, allow more time: "
        f"{IDLE_TIMEOUT}=600 (seconds; 0 for no limit).")


def failure(p: child_process.Completed) -> str:
    """The useful end of a failed git's output on one line (progress left out), credentials
    taken out."""
    lines = [ln.strip() for s in (p.stderr, p.stdout) for ln in re.split(r"[\r\n]", s)
             if ln.strip() and not _PROGRESS.match(ln.strip())]
    return shown("; ".join(lines), p.secrets)[-600:] or f"exit code {p.returncode}"


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


def resolve(git_dir: Path | None, remote: str, cwd: Path | None = None) -> Remote:
    """`remote` (checked) with the URL it resolves to."""
    return Remote(remote, url_of(git_dir, remote, cwd))


def list_refs(git_dir: Path | None, remote: Remote, *patterns: str, cwd: Path | None = None
              ) -> dict[str, ObjectId]:
    """The remote's refs matching `patterns`, from one `ls-remote`."""
    out = run(git_dir, "ls-remote", "--refs", remote.spec, *patterns, cwd=cwd,
              remote=remote).stdout
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


@contextmanager
def frozen_refs(refs: dict[str, ObjectId], objects: Path, config: Path | None = None,
                under: Path | None = None) -> Iterator[Path]:
    """A scratch repository (see `scratch_repository`) whose only refs are `refs`, as they
    were read, and whose objects are those of the folder `objects` (an alternate: nothing is
    copied). A push from it by one glob refspec sends exactly those refs while the store goes
    on saving: git matches each explicit refspec against every local ref (32,000 of them by
    id took 19 minutes), a glob once."""
    with scratch_repository(config, under) as path:
        (path / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")
        lines = [f"{oid} {name}\n" for name, oid in sorted(refs.items(),
                                                             key=lambda r: r[0].encode())]
        (path / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n"
                                          + "".join(lines))
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

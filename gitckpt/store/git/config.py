"""What outside the work tree decides a GitStore scan: ignore files and content-filter
settings, summarised as keys that change when they do."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from gitckpt.safety.scope import Scope

#: (mtime in ns, size, inode) of a file.
Stamp = tuple[int, int, int]


def stamp(path: Path) -> Stamp | None:
    """(mtime, size, inode) of a file, or None if it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _xdg_git(name: str) -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(xdg, "git", name)


def ignore_key(repo: pygit2.Repository, common_dir: Path, workdir: Path, prefix: str,
               scope: Scope) -> str:
    """Scope rules plus the ignore files no scan of this workspace sees change."""
    files = [common_dir / "info" / "exclude"]
    try:
        # a key without a value (None, which git refuses for it) raises TypeError here
        files.append(Path(os.path.expanduser(
            repo.config["core.excludesFile"])))  # type: ignore[type-var, arg-type]
    except KeyError:
        files.append(_xdg_git("ignore"))
    if prefix:  # .gitignore files above a monorepo workspace
        above = prefix.split("/")[:-1]
        files += [workdir.joinpath(*above[:i], ".gitignore") for i in range(len(above) + 1)]
    return "|".join([scope.fingerprint(), *(f"{f}:{stamp(f)}" for f in files)])


def filter_key(repo: pygit2.Repository, common_dir: Path) -> str:
    """Everything outside the work tree that decides git's content filters."""
    config = repo.config
    values = [config[k] if k in config else "" for k in  # noqa: SIM401 (Config has no get)
              ("core.autocrlf", "core.eol", "core.attributesFile", "core.safecrlf")]
    files = [common_dir / "info" / "attributes", _xdg_git("attributes")]
    if values[2]:
        files.append(Path(os.path.expanduser(values[2])))
    # a key without a value (None: `autocrlf` so set means true) raises TypeError here
    return "|".join([*values,  # type: ignore[list-item]
                     *(f"{f}:{stamp(f)}" for f in files)])


def trust_exec(repo: pygit2.Repository) -> bool:
    """core.fileMode: whether the executable bit is recorded."""
    try:
        return repo.config.get_bool("core.fileMode")
    except (KeyError, pygit2.GitError, ValueError):
        return True


def filters_possible(repo: pygit2.Repository, common_dir: Path, attributes: set[str]) -> bool:
    """True when git's content filters (line endings, ident) could apply to some file.

    Loading filters costs more than hashing a file, so they are only asked for when some
    attributes file or core.autocrlf can call for them.
    """
    if attributes or os.path.exists(common_dir / "info" / "attributes"):
        return True
    config = repo.config
    # a key without a value (None: true to git) raises AttributeError here
    autocrlf = config["core.autocrlf"].lower(  # type: ignore[union-attr]
        ) if "core.autocrlf" in config else "false"
    if autocrlf not in ("false", "0", "no", "off") or "core.attributesFile" in config:
        return True
    return os.path.exists(_xdg_git("attributes"))  # False if unreadable

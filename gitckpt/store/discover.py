"""Stores: where a workspace's checkpoints live, chosen by what the workspace is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitckpt.core.errors import (
    GitckptError,
    InvalidArgument,
    StoreCorrupt,
    StoreElsewhere,
    WorkspaceError,
)
from gitckpt.core.hints import call
from gitckpt.core.values import DESCRIPTION, POINTER
from gitckpt.store.base import Store


def resolve_root(path: str | Path) -> Path:
    """The absolute, resolved workspace directory for `path`, or WorkspaceError."""
    p = Path(path).expanduser()
    try:
        resolved = p.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError) as e:
        raise WorkspaceError(f"Workspace {p} does not exist.",
                             "Pass an existing folder with -C DIR.") from e
    except OSError as e:
        raise WorkspaceError(f"Cannot open workspace {p}: {e.strerror}.",
                             "Pass a readable folder with -C DIR.") from e
    if not resolved.is_dir():
        raise WorkspaceError(f"Workspace {p} is not a directory.",
                             "Pass the project folder with -C DIR.")
    return resolved


def _dir_store(root: Path, store: Path) -> Store:
    from gitckpt.store.plain.store import DirStore

    store = Path(os.path.abspath(store.expanduser()))
    if store.resolve() == root:  # resolved: a symlink to the workspace is the workspace
        raise InvalidArgument(f"The store cannot be the workspace itself ({root}).",
                              "Use a folder inside it (the default .gitckpt) or elsewhere.")
    return DirStore(root, store)


def _is_store(path: Path) -> bool:
    """A plain-folder store (a git directory holds `gitckpt/format` too, but not this)."""
    try:
        description = (path / "description").read_text(errors="replace")
    except OSError:
        return False
    return (path / "gitckpt" / "format").is_file() and description == DESCRIPTION


def _own(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid()


def _marked(folder: Path, *, ancestor: bool = False, adopt: bool = False) -> Store | None:
    """The store a `.gitckpt` folder or pointer file at `folder` names, if any.

    A store is used for `folder` only if it belongs to the current user and was made for
    `folder` (it records `folder` as one of its workspaces). At the workspace itself anything
    else is an error that says why; in a parent folder it is passed over in silence.
    A marker is never followed through a symlink (a downloaded folder could point it anywhere).
    """
    marker = folder / POINTER
    try:
        st = marker.lstat()
    except OSError:
        return None
    from gitckpt.store.plain.store import DirStore, read_pointer  # a marker: a plain store

    if stat.S_ISLNK(st.st_mode):
        if ancestor:
            return None
        raise WorkspaceError(f"{marker} is a symbolic link; gitckpt does not follow it.",
                             "Remove it, or point GITCKPT_STORE at the store you mean.")
    if not _own(st):
        if ancestor:
            return None
        raise StoreElsewhere(f"{marker} belongs to another user (uid {st.st_uid}).",
                             "gitckpt only uses stores of the current user: move it away, or "
                             "set GITCKPT_STORE to a store of your own.")
    if stat.S_ISDIR(st.st_mode):
        if not _is_store(marker):
            return None if ancestor else _dir_store(folder, marker)
        store = _dir_store(folder, marker)
    else:
        try:
            target = read_pointer(marker)
        except StoreCorrupt:
            if ancestor:
                return None
            raise
        problem = _pointer_problem(target)
        if problem:
            if ancestor:
                return None
            raise StoreElsewhere(f"{marker} names {target}, which {problem}.",
                                 "Delete the pointer file to start a new store here, or set "
                                 "GITCKPT_STORE to the store you mean.")
        store = _dir_store(folder, target)
    assert isinstance(store, DirStore)
    if not (adopt and stat.S_ISDIR(st.st_mode)) and not store.made_for(folder):
        if ancestor:
            return None
        raise StoreElsewhere(
            f"The store {store.path} was made for {store.recorded_text()}, not for {folder}.",
            "If you moved or copied the folder here, run {0} in it to record the new path; "
            "otherwise remove that .gitckpt or set GITCKPT_STORE.", [call("adopt")])
    return store


def _pointer_problem(target: Path) -> str | None:
    """Why the store a pointer file names may not be used, or None."""
    if not target.is_absolute():
        return "is not an absolute path"
    try:
        st = target.lstat()
    except OSError:
        return "does not exist"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not _own(st):
        return f"belongs to another user (uid {st.st_uid})"
    if not _is_store(target):
        return "is not a gitckpt store"
    return None


def ancestors(root: Path) -> list[Path]:
    """The parent folders whose stores may serve `root`: strictly below the user's home, and
    never a world-writable or sticky folder (such as /tmp) or anything above one."""
    try:
        home = Path.home().resolve()
        home_mode = home.stat().st_mode
    except (OSError, RuntimeError):  # no home, or a HOME that does not exist: no ancestor
        return []
    if home == Path(home.anchor) or home_mode & (stat.S_IWOTH | stat.S_ISVTX):
        return []  # HOME=/ (services, containers) or a shared home: below it is anywhere
    out = []
    for folder in (root, *root.parents):
        if folder == home or home not in folder.parents:
            break
        try:
            mode = folder.stat().st_mode
        except OSError:
            break
        if mode & (stat.S_IWOTH | stat.S_ISVTX):
            break
        if folder != root:
            out.append(folder)
    return out


def open_git_store(root: Path) -> Store | None:
    """The git store of `root`, or None outside a git work tree. pygit2 loads only here: a
    plain folder's store is found (by its `.gitckpt`) without it."""
    from gitckpt.store.git.store import open_git_store as opened

    return opened(root)


def open_store(path: str | Path, *, store: str | None = None, ancestors_too: bool = True,
               adopt: bool = False) -> Store:
    """The store of the workspace at `path`.

    A `.gitckpt` folder or pointer file at the workspace wins; then the git repository the
    workspace is in; then (unless `ancestors_too` is False, as for init) a store in a parent
    folder that was made for that folder (see `ancestors`); then `store` (init --store) or
    GITCKPT_STORE; then a new `.gitckpt` folder in the workspace. `adopt` accepts the
    workspace's own store even if it was made for another folder (see DirStore.adopt).
    """
    root = resolve_root(path)
    if store:
        if open_git_store(root) is not None:
            raise InvalidArgument("--store is for plain folders.",
                                  "In a git repository the checkpoints live in the repository.")
        return _dir_store(root, Path(store))
    found = _marked(root, adopt=adopt) or open_git_store(root)
    if found is not None:
        return found
    for parent in ancestors(root) if ancestors_too else ():
        try:
            found = _marked(parent, ancestor=True)
        except GitckptError:
            found = None  # a damaged store above is not this folder's: passed over
        if found is not None:
            return found
    env = os.environ.get("GITCKPT_STORE")
    return _dir_store(root, Path(env) if env else root / POINTER)

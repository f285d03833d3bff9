"""Whether a path is left out, decided from ignore files wherever they are: in the workspace
now, or in a snapshot's tree (the rules a restore of that snapshot would bring back).

git's precedence: a path inside an ignored folder is ignored; otherwise the deepest
`.gitignore` with a matching pattern decides; then gitckpt's own rules (built-ins for plain
folders, `.ckptignore`, task excludes) and the sensitive list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode, TreeEntry
from gitckpt.safety.ignore import IgnoreFile
from gitckpt.safety.scope import CKPTIGNORE, is_sensitive

Loader = Callable[[str], "str | None"]  # folder (relative, "" = root) -> .gitignore text


class IgnoreRules:
    """Left-out decisions over per-folder `.gitignore` texts from `load`, plus `extra`
    root-level patterns (built-ins, .ckptignore, excludes, in that order)."""

    def __init__(self, load: Loader, extra: list[str]) -> None:
        self._load = load
        self._extra = IgnoreFile(extra)
        self._specs: dict[str, IgnoreFile | None] = {}
        self._memo: dict[tuple[str, bool], bool] = {}

    def _spec(self, folder: str) -> IgnoreFile | None:
        if folder not in self._specs:
            text = self._load(folder)
            try:
                self._specs[folder] = IgnoreFile.from_text(text) if text is not None else None
            except ValueError:
                self._specs[folder] = None  # git skips a pattern it cannot read
        return self._specs[folder]

    def left_out(self, rel: str, is_dir: bool = False) -> bool:
        """True if `rel` (or a folder above it) is ignored, excluded or sensitive."""
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            if self._one("/".join(parts[:i]), is_dir or i < len(parts)):
                return True
        return False

    def _one(self, rel: str, is_dir: bool) -> bool:
        key = (rel, is_dir)
        if key not in self._memo:
            self._memo[key] = self._decide(rel, is_dir)
        return self._memo[key]

    def _decide(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        bases = ("/".join(parts[:depth]) for depth in range(len(parts) - 1, -1, -1))
        return decide(rel, is_dir, ((len(b) + 1 if b else 0, self._spec(b)) for b in bases),
                      self._extra, lambda r, d: self._extra.match(r, d) is False)


def decide(rel: str, is_dir: bool, gitignores: Iterable[tuple[int, IgnoreFile | None]],
           extra: IgnoreFile, kept: Callable[[str, bool], bool]) -> bool:
    """git's precedence for one path whose folders are not left out, the one place it is
    written: a sensitive path is out unless `kept` (a `!` line of .ckptignore) brings it back;
    then the deepest `.gitignore` with a matching pattern decides (`gitignores`, deepest
    first, each with the length of its folder's prefix in `rel`; read lazily); then `extra`,
    gitckpt's own patterns."""
    if is_sensitive(rel + "/" if is_dir else rel) and not kept(rel, is_dir):
        return True
    for offset, spec in gitignores:
        decided = spec.match(rel[offset:], is_dir) if spec else None
        if decided is not None:
            if decided:
                return True
            break
    return bool(extra.match(rel, is_dir))


def disk_loader(root: str) -> Loader:
    """`.gitignore` texts as the workspace has them now (never through a symlink)."""

    def load(folder: str) -> str | None:
        path = os.path.join(root, folder, ".gitignore")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")

    return load


def tree_loader(read_tree: Callable[[ObjectId], list[TreeEntry]],
                read_blob: Callable[[ObjectId], bytes], tree: ObjectId) -> Loader:
    """`.gitignore` texts as tree `tree` holds them."""
    folders: dict[str, ObjectId | None] = {"": tree}

    def folder_tree(folder: str) -> ObjectId | None:
        if folder not in folders:
            parent, _, name = folder.rpartition("/")
            up = folder_tree(parent)
            found = None
            if up is not None:
                for e in read_tree(up):
                    if e.name == os.fsencode(name) and e.mode == Mode.TREE:
                        found = e.id
            folders[folder] = found
        return folders[folder]

    def load(folder: str) -> str | None:
        t = folder_tree(folder)
        if t is None:
            return None
        for e in read_tree(t):
            if e.name == b".gitignore" and e.mode in (Mode.FILE, Mode.EXECUTABLE):
                return read_blob(e.id).decode("utf-8", "surrogateescape")
        return None

    return load


def tree_ckptignore(read_tree: Callable[[ObjectId], list[TreeEntry]],
                    read_blob: Callable[[ObjectId], bytes], tree: ObjectId) -> list[str]:
    for e in read_tree(tree):
        if e.name == CKPTIGNORE.encode() and e.mode in (Mode.FILE, Mode.EXECUTABLE):
            return read_blob(e.id).decode("utf-8", "replace").split("\n")
    return []

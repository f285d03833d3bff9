"""One GitStore scan in progress: its changes to the private index, and what it left out."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import pygit2

from gitckpt.core.values import Reason, Skipped
from gitckpt.safety.scope import Scope
from gitckpt.store.files import read_regular  # noqa: F401 (the one reader of files)
from gitckpt.store.git.libgit2 import add_entry

#: A change made to the index: the (mode, id) a path now has, or None when it was removed.
Change = tuple[int, str] | None


@dataclass
class ScanPass:
    """The state of one snapshot while it runs."""

    index: pygit2.Index
    scope: Scope
    gitlinks: set[str]
    attributes: set[str]
    racy: set[str]  # entries smudged because their file was too new to trust
    trust_exec: bool = True  # core.fileMode
    filters: bool = False
    now: int = field(default_factory=time.time_ns)
    skipped: list[Skipped] = field(default_factory=list)
    refilter: set[str] = field(default_factory=set)
    renormalize: set[str] = field(default_factory=set)
    changes: dict[str, Change] = field(default_factory=dict)  # by work-tree path

    def put(self, path: str, oid: str, mode: int, st: os.stat_result | None, racy: bool) -> None:
        (self.racy.add if racy else self.racy.discard)(path)
        add_entry(self.index, path, oid, mode, st, racy)
        self.changes[path] = (mode, oid)

    def remove(self, path: str) -> None:
        self.racy.discard(path)
        if path in self.index:
            self.index.remove(path)
            self.changes[path] = None

    def skip(self, rel: str, reason: Reason, st: os.stat_result | None = None) -> None:
        self.skipped.append(Skipped(rel, reason, st.st_size if st else None,
                                    round(st.st_mtime, 3) if st else None))


def dirs_of(index: pygit2.Index) -> list[str]:
    """Every folder that holds a cached entry."""
    return dirs_with([], (entry.path for entry in index))


def dirs_with(dirs: list[str], paths: Iterable[str]) -> list[str]:
    """`dirs` and every folder above one of `paths` (an index gained entries, lost none:
    its folders without a walk over every entry, which costs 2 ms per 1,000 in Python)."""
    out = set(dirs)
    for path in paths:
        d = path.rpartition("/")[0]
        while d and d not in out:
            out.add(d)
            d = d.rpartition("/")[0]
    return sorted(out)



def lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None



"""Folders nested deeper than libgit2 will enter: found, and the literal paths that cover the
rest of the workspace so one diff can leave them out."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pygit2

from gitckpt.safety.scope import MAX_DEPTH


def too_deep(workdir: Path, prefix: str, ignored: Callable[[str], bool]) -> list[str]:
    """Folders (work-tree paths) exactly MAX_DEPTH + 1 levels deep below `prefix`, not inside
    an ignored folder: those libgit2 refuses to enter."""
    out: list[str] = []
    stack = [(prefix, prefix.count("/") + 1 if prefix else 0)]
    while stack:
        rel, depth = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(workdir, rel) if rel else workdir))
        except OSError:
            continue
        for e in entries:
            if e.name == ".git" or not e.is_dir(follow_symlinks=False):
                continue
            child = f"{rel}/{e.name}" if rel else e.name
            try:
                if ignored(child + "/"):
                    continue
            except (pygit2.GitError, UnicodeEncodeError):
                pass
            if depth + 1 > MAX_DEPTH:
                out.append(child)
            else:
                stack.append((child, depth + 1))
    return sorted(out)



def cover(workdir: Path, prefix: str, deep: list[str], cached: list[str]) -> list[bytes]:
    """Literal work-tree paths that cover the workspace `prefix` except the folders `deep`:
    every entry (on disk or in the cache) of each folder on the way to them."""
    chain = {prefix}
    for path in deep:
        parts = path.split("/")
        chain.update("/".join(parts[:i]) for i in range(1, len(parts)))
    names: dict[str, set[str]] = {folder: set() for folder in chain}
    for folder in chain:
        try:
            names[folder].update(os.listdir(os.path.join(workdir, folder)))
        except OSError:
            pass
    for path in cached:
        head, _, _ = path.rpartition("/")
        while head and head not in names:
            head, _, _ = head.rpartition("/")
        if head in names:
            rest = path[len(head) + 1:] if head else path
            names[head].add(rest.split("/", 1)[0])
    out = []
    for folder in sorted(chain):
        for name in sorted(names[folder] - {".git"}):
            child = f"{folder}/{name}" if folder else name
            if child not in chain and child not in deep:
                out.append(os.fsencode(child))
    return out

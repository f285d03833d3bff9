"""What a snapshot takes: task excludes, `.ckptignore`, the sensitive list and the size limit.

Git's own ignore rules are applied by the store that knows them (GitStore asks libgit2); this
module holds the rules that are gitckpt's own and the same in every store. Every check here is by
path or size only: a left-out file is never opened (the scanners look at the content of the
files they read anyway, with `sensitive.content_sensitive`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.values import Reason
from gitckpt.safety.ignore import IgnoreFile
from gitckpt.safety.sensitive import RULES_VERSION, classify, is_sensitive

__all__ = ["CKPTIGNORE", "MAX_DEPTH", "Reason", "Scope", "classify", "is_sensitive"]


#: Folders nested deeper than this below the root are left out (`too_deep`): libgit2 does not
#: enter them (its iterator's limit), and both stores must take the same files.
MAX_DEPTH = 99

CKPTIGNORE = ".ckptignore"
DEFAULT_MAX_FILE_SIZE = 100 * 1024 * 1024

def parse_size(text: str) -> int:
    """A byte count such as `1048576`, `512K`, `100M`, `2GiB`."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]?)(?:i?b)?\s*", text.lower())
    if not m:
        raise InvalidArgument(
            f"Not a size: {text!r}.", "Use a byte count, optionally with K, M or G (e.g. 100M)."
        )
    unit: int = 1024 ** " kmg".index(m[2] or " ")  # a power of a natural number: an int
    return int(m[1]) * unit


def max_file_size() -> int:
    """The size limit of a file (GITCKPT_MAX_FILE_SIZE, default 100 MiB): larger ones are
    never saved, and a fetched or imported task holding one is refused."""
    size = os.environ.get("GITCKPT_MAX_FILE_SIZE")
    return parse_size(size) if size else DEFAULT_MAX_FILE_SIZE


def compile_patterns(patterns: list[str], what: str) -> IgnoreFile:
    """Gitignore-style patterns, with a clear error for a pattern that does not compile."""
    try:
        return IgnoreFile(patterns)
    except ValueError as e:
        raise InvalidArgument(f"Bad {what} pattern: {e}.", "Patterns use .gitignore syntax.") from e


@dataclass(frozen=True)
class Scope:
    """gitckpt's own scope rules for one task in one workspace."""

    excludes: tuple[str, ...] = ()
    ckptignore: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spec", compile_patterns(
            [*self.excludes, *self.ckptignore], "exclude"))
        object.__setattr__(self, "_ckpt", compile_patterns(list(self.ckptignore), "exclude"))

    def kept(self, rel: str) -> bool:
        """True if a `!` line of `.ckptignore` brings `rel` back: the user says it is no
        credential, whatever the sensitive rules say."""
        spec: IgnoreFile = self._ckpt  # type: ignore[attr-defined]
        return spec.match(rel.rstrip("/"), rel.endswith("/")) is False

    def content_verdict(self, rel: str) -> str | None:
        """How a file's content decides whether it is sensitive (the verdict of
        `sensitive.classify`: `in`, `content` and `key` are checked, source code and test
        fixtures are not), or None when `.ckptignore` keeps it whatever it holds."""
        return None if self.kept(rel) else classify(rel)[0]

    @classmethod
    def load(cls, root: str, excludes: list[str] | tuple[str, ...] = ()) -> Scope:
        """The scope for workspace `root`: task excludes, its `.ckptignore`, the env size limit."""
        lines: list[str] = []
        try:
            with open(os.path.join(root, CKPTIGNORE), encoding="utf-8", errors="replace") as f:
                lines = [ln.rstrip("\n") for ln in f]
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
            pass
        return cls(tuple(excludes), tuple(lines), max_file_size())

    def excluded(self, rel: str) -> Reason | None:
        """Why a path (a folder when it ends in "/") is left out by name: `sensitive`,
        `excluded`, or None. As in git, a path inside an excluded folder is excluded."""
        if is_sensitive(rel) and not self.kept(rel):
            return "sensitive"
        spec: IgnoreFile = self._spec  # type: ignore[attr-defined]
        is_dir = rel.endswith("/")
        parts = rel.rstrip("/").split("/")
        for i in range(1, len(parts)):
            if spec.match("/".join(parts[:i]), True):
                return "excluded"
        return "excluded" if spec.match("/".join(parts), is_dir) else None

    def too_large(self, size: int) -> bool:
        return size > self.max_file_size

    def fingerprint(self) -> str:
        """Changes whenever a rule changes, so cached scan results can be re-filtered: the
        rules themselves, as JSON (a digest would load OpenSSL's hashes into every scan, 3 ms
        of a hook; they are a few hundred bytes)."""
        return json.dumps([self.excludes, self.ckptignore, self.max_file_size, RULES_VERSION])

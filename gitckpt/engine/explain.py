"""Why a path is in or out of a snapshot, and the rule that decided (`gitckpt scope`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

from gitckpt.core.gitnames import refused_path
from gitckpt.safety.scope import Scope, classify
from gitckpt.safety.sensitive import TRUSTED, content_sensitive, credential_pattern
from gitckpt.store.base import Store

OURS = (".git", ".gitckpt")


@dataclass(frozen=True)
class Decision:
    path: str
    in_scope: bool
    reason: str  # in | sensitive | ignored | excluded | too_large | invalid_name | ours | missing
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "in": self.in_scope, "reason": self.reason, "rule": self.rule}


def explain(store: Store, scope: Scope, rel: str) -> Decision:
    """The decision a snapshot makes for workspace path `rel`, and the rule that made it."""
    full = os.path.join(store.root, rel)
    try:
        st = os.lstat(full)
    except OSError:
        st = None
    is_dir = st is not None and stat.S_ISDIR(st.st_mode)
    key = rel + "/" if is_dir else rel
    parts = rel.split("/")
    if any(p in OURS for p in parts) or any(rel == p or rel.startswith(p + "/")
                                            for p in store.private):
        return Decision(rel, False, "ours", "git's or gitckpt's own folder")
    why = refused_path(os.fsencode(rel), mode=st.st_mode if st else None)
    if why:
        return Decision(rel, False, "invalid_name", why)
    if scope.kept(key):
        return Decision(rel, True, "in", "brought back by a ! line of .ckptignore")
    verdict, rule = classify(key)
    if verdict == "out":
        return Decision(rel, False, "sensitive", rule)
    if scope.excluded(key) == "excluded":
        return Decision(rel, False, "excluded", "a task exclude or .ckptignore pattern")
    if store.ignore_check()(rel):
        return Decision(rel, False, "ignored", "ignore rules (.gitignore, info/exclude, "
                        "core.excludesFile, or the plain-folder built-ins)")
    if st is None:
        return Decision(rel, False, "missing", "no such file")
    if stat.S_ISREG(st.st_mode):
        if scope.too_large(st.st_size):
            return Decision(rel, False, "too_large", f"{st.st_size} bytes, over the limit of "
                            f"{scope.max_file_size}")
        try:
            with open(full, "rb") as f:  # as much as a snapshot reads: the same decision
                data = f.read(scope.max_file_size)
        except OSError as e:
            return Decision(rel, False, "unreadable", e.strerror or str(e))
        found = content_sensitive(data, verdict)
        if found:
            return Decision(rel, False, "sensitive", f"{rule}: {found}" if rule else found)
        pattern = credential_pattern(data) if verdict in TRUSTED else None
        if pattern:
            return Decision(rel, True, "in", f"{rule}; holds a credential pattern ({pattern})"
                            " — stored, as test fixtures and source code are")
    return Decision(rel, True, "in", rule or "no rule leaves it out")

"""The HEAD commit of a git repository nested in a plain folder, read with the standard
library (a plain-folder snapshot stores it as a gitlink, as git does)."""

from __future__ import annotations

import os


def read_nested_head(path: str) -> str | None:
    """The HEAD commit of the git repository whose `.git` is at `path` (standard library)."""
    try:
        if os.path.isfile(path):
            with open(path) as f:
                line = f.read().strip()
            if not line.startswith("gitdir:"):
                return None
            path = os.path.join(os.path.dirname(path), line[len("gitdir:"):].strip())
        common = path
        if os.path.isfile(os.path.join(path, "commondir")):
            with open(os.path.join(path, "commondir")) as f:
                common = os.path.join(path, f.read().strip())
        with open(os.path.join(path, "HEAD")) as f:
            head = f.read().strip()
        for _ in range(5):
            if not head.startswith("ref: "):
                return head if len(head) == 40 and all(c in "0123456789abcdef" for c in head) \
                    else None
            ref = head[5:]
            for base in (path, common):
                try:
                    with open(os.path.join(base, ref)) as f:
                        head = f.read().strip()
                    break
                except OSError:
                    continue
            else:
                packed = _packed_ref(common, ref)
                if packed is None:
                    return None
                head = packed
    except OSError:
        return None
    return None


def _packed_ref(git_dir: str, ref: str) -> str | None:
    try:
        with open(os.path.join(git_dir, "packed-refs")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except OSError:
        pass
    return None

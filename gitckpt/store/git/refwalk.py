"""The loose refs under a prefix that a listing of libgit2's did not give: libgit2 passes over
a loose ref it cannot parse, and another process may make or delete refs while the refs are
listed, so each file is read again as it is now."""

from __future__ import annotations

import os
import re
from pathlib import Path

from gitckpt.core.ids import ObjectId

#: A loose ref's content: an object id (SHA-1 or SHA-256), its newline stripped.
_OID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


def unlisted(common_dir: Path, prefix: str, listed: dict[str, ObjectId]
             ) -> tuple[dict[str, ObjectId], list[str]]:
    """(refs made since the listing, refs that do not parse) among the loose ref files
    under `prefix` that `listed` lacks; a file gone meanwhile was deleted: neither."""
    found: dict[str, ObjectId] = {}
    broken: list[str] = []
    base = prefix.rpartition("/")[0]
    top = common_dir / base if base.startswith("refs") else common_dir / "refs"
    for folder, _, files in os.walk(top):
        for f in files:
            name = Path(folder, f).relative_to(common_dir).as_posix()
            if not name.startswith(prefix) or name in listed or f.endswith(".lock"):
                continue
            try:
                text = Path(folder, f).read_bytes().strip()
            except FileNotFoundError:
                continue
            except OSError:
                text = b""
            if _OID.fullmatch(text):
                found[name] = ObjectId(text.decode())
            else:
                broken.append(name)
    return found, broken

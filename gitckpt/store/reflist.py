"""The refs under a prefix, read as git's files backend keeps them: the loose files below the
prefix's folder, then `packed-refs`; nothing outside the prefix is read but the packed file."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from gitckpt.core.ids import ObjectId

#: A loose ref's content: an object id (SHA-1 or SHA-256), its newline stripped.
_OID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
#: How often a loose ref that does not parse is read again before it is called damaged: refs
#: are renamed into place whole, but a filesystem without atomic rename may show a torn one.
_REREADS = 3


def list_refs(common_dir: Path, prefix: str) -> tuple[dict[str, ObjectId], list[str]]:
    """(refs whose names start with `prefix`, loose refs that do not parse).

    Loose first, then packed (git's order): `pack-refs` writes the packed file before it
    deletes the loose ones, and a deletion removes the packed entry first, so a ref that
    stays put is seen in one or the other whatever runs meanwhile; one that is made, moved or
    deleted meanwhile is seen as it was at some moment of the listing, never as damaged."""
    loose, broken = _loose(common_dir, prefix)
    packed = packed_refs(common_dir / "packed-refs", prefix)
    for name in broken:
        packed.pop(name, None)  # a damaged loose ref hides its packed value, as in git
    packed.update(loose)
    return packed, broken


def _loose(common_dir: Path, prefix: str) -> tuple[dict[str, ObjectId], list[str]]:
    found: dict[str, ObjectId] = {}
    broken: list[str] = []
    folder, _, start = prefix.rpartition("/")  # "refs/checkpoints/t/steps/" -> that folder
    for here, dirs, files in os.walk(common_dir / folder):
        dirs.sort()
        for f in files:
            path = os.path.join(here, f)
            name = Path(path).relative_to(common_dir).as_posix()
            if f.endswith(".lock") or not name.startswith(prefix):
                continue
            oid = _read_loose(path)
            if oid is None:
                continue
            if oid:
                found[name] = ObjectId(oid)
            else:
                broken.append(name)
        if here == str(common_dir / folder) and start:
            dirs[:] = [d for d in dirs if d.startswith(start)]
    return found, broken


def _read_loose(path: str) -> str | None:
    """The id a loose ref file holds; None if it is gone (deleted meanwhile); "" if it does
    not parse after a few reads."""
    for attempt in range(_REREADS):
        try:
            with open(path, "rb") as f:
                text = f.read(200).strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            text = b""
        if _OID.fullmatch(text):
            return text.decode()
        if text.startswith(b"ref: "):
            return None  # a symbolic ref is not a checkpoint
        time.sleep(0.005 * (attempt + 1))
    return ""


def packed_refs(path: Path, prefix: str) -> dict[str, ObjectId]:
    """The refs under `prefix` in the `packed-refs` file at `path` (none if it is missing). A
    sorted file (git writes them so) is read from the prefix's first line to its last."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    key = prefix.encode()
    start = 0
    if data.startswith(b"# pack-refs with:") and b" sorted" in data[:data.find(b"\n")]:
        at = data.find(b" " + key)
        if at < 0:
            return {}
        start = data.rfind(b"\n", 0, at) + 1
    out: dict[str, ObjectId] = {}
    for line in data[start:].split(b"\n"):
        oid, _, name = line.partition(b" ")
        if not name.startswith(key):
            if start and not line.startswith(b"^"):
                break  # sorted: past the prefix's block
            continue
        if _OID.fullmatch(oid):
            out[name.decode("utf-8", "surrogateescape")] = ObjectId(oid.decode())
    return out

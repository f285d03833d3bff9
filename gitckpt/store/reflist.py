"""The refs under a prefix, read as git's files backend keeps them: the loose files below the
prefix's folder, then `packed-refs`; nothing outside the prefix is read but the packed file."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from gitckpt.core.ids import ObjectId

CHECKPOINT_REFS = "refs/checkpoints/"  # every ref of the timelines lies below
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


def pack_refs(common_dir: Path, prefix: str) -> int:
    """Move the loose refs under `prefix` into `packed-refs` (as `git pack-refs` does, for
    these refs only: every other ref, loose or packed, stays as it is); how many were moved.

    git's protocol: `packed-refs.lock` taken (a git holding it makes this a no-op until the
    next time), the new file renamed into place, then each moved loose file removed under its
    own `.lock` and only if it still holds what was packed. The caller holds the store lock,
    so no checkpoint ref moves meanwhile."""
    loose, broken = _loose(common_dir, prefix)
    if not loose:
        return 0
    path = common_dir / "packed-refs"
    lock = path.with_name("packed-refs.lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return 0
    try:
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = b""
        with os.fdopen(fd, "wb") as out:
            fd = -1
            out.write(_merged(old, loose, set(broken)))
            out.flush()
            os.fsync(out.fileno())
        os.replace(lock, path)
    finally:
        if fd != -1:
            os.close(fd)
        lock.unlink(missing_ok=True)
    moved = 0
    for name, oid in loose.items():
        ref = common_dir / name
        ref_lock = ref.with_name(ref.name + ".lock")
        try:
            os.close(os.open(ref_lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except OSError:
            continue  # held by someone: it stays loose (and wins over the packed value)
        try:
            if _read_loose(str(ref)) == oid:
                ref.unlink()
                moved += 1
        finally:
            ref_lock.unlink(missing_ok=True)
    return moved


def _merged(old: bytes, loose: dict[str, ObjectId], broken: set[str]) -> bytes:
    """packed-refs' text with `loose` written in (sorted by name, as git keeps it; the peeled
    lines of other refs kept under them)."""
    header = b"# pack-refs with: peeled fully-peeled sorted \n"
    entries: dict[bytes, list[bytes]] = {}
    last: bytes | None = None
    for line in old.split(b"\n"):
        if line.startswith(b"#"):
            header = line + b"\n"
        elif line.startswith(b"^") and last is not None:
            entries[last].append(line)
        elif line:
            last = line.partition(b" ")[2]
            entries[last] = [line]
    for name, oid in loose.items():
        if name not in broken:
            entries[name.encode()] = [f"{oid} {name}".encode()]
    body = b"".join(b"\n".join(entries[n]) + b"\n" for n in sorted(entries))
    return header + body

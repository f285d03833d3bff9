"""A check of a loose object file before libgit2 reads it: libgit2 1.9 loops forever on a
zlib stream that ends early (libgit2#7342), and allocates whatever size a header claims."""

from __future__ import annotations

import os
import zlib

from gitckpt.core.objects import sha1

_KINDS = (b"blob", b"tree", b"commit", b"tag")
_CHUNK = 1 << 16


def loose_problem(objects_dir: str, oid: str, *, verify: bool = False) -> str | None:
    """Why the loose object file of `oid` under `objects_dir` cannot be read safely, or None
    (sound, or not loose: packs are checked by libgit2 without hanging). With `verify` the
    SHA-1 is checked too (libgit2 checks it itself when it reads the object)."""
    try:
        f = open(os.path.join(objects_dir, oid[:2], oid[2:]), "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"unreadable ({e.strerror})"
    z, sha = zlib.decompressobj(), sha1() if verify else None
    head, size, seen, buf = b"", -1, 0, b""
    with f:
        try:
            while not z.eof:
                buf = buf or f.read(_CHUNK)
                if not buf:
                    return "truncated"
                out = z.decompress(buf, _CHUNK)  # bounded output: no zlib bomb
                buf = z.unconsumed_tail
                if sha is not None:
                    sha.update(out)
                if size < 0:
                    head += out
                    if b"\0" not in head[:40]:
                        if len(head) >= 40:
                            return "bad header"
                        continue
                    head, _, out = head.partition(b"\0")
                    kind, _, n = head.partition(b" ")
                    if kind not in _KINDS or not n.isdigit():
                        return "bad header"
                    size = int(n)
                seen += len(out)
                if seen > size:
                    return "longer than its header says"
        except zlib.error as e:
            return f"not zlib data ({e})"
    if size < 0:
        return "bad header"
    if seen != size:
        return "shorter than its header says"
    if sha is not None and sha.hexdigest() != oid:
        return "hash mismatch"
    return None


def loose_size(path: str | os.PathLike[str]) -> int | None:
    """The body size the loose object file `path` announces in its header, from its first
    bytes only; None if there is no such file, ValueError if it has no sound header."""
    try:
        with open(path, "rb") as f:
            start = f.read(4096)
    except FileNotFoundError:
        return None
    try:
        head = zlib.decompressobj().decompress(start, 64)
    except zlib.error as e:
        raise ValueError(f"not zlib data ({e})") from e
    header, nul, _ = head.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not nul or kind not in _KINDS or not size.isdigit() or len(size) > 20:
        raise ValueError("bad object header")
    return int(size)

"""Objects read from git packs (version 2 index, entries whole or deltified), for the
plain-folder store: its first save writes a pack, and `git gc` on it leaves packs of deltas.

Each object read is checked to hash to its id, as loose objects are. The packs of a folder
are found by their index files, and looked for again when an id is not found (a pack written
since, or a `git gc`).
"""

from __future__ import annotations

import bisect
import os
import struct
import threading
import zlib
from collections.abc import Callable
from typing import BinaryIO

from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.objects import hash_object

_KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
_OFS_DELTA, _REF_DELTA = 6, 7
_MAX_CHAIN = 10_000  # git's own chains stay far below; a loop in a damaged pack must end


class PackIndex:
    """One `pack-*.idx` (version 2) and its pack."""

    def __init__(self, idx_path: str) -> None:
        self.idx_path = idx_path
        self.pack_path = idx_path[:-4] + ".pack"
        with open(idx_path, "rb") as f:
            data = f.read()
        if data[:8] != b"\377tOc\0\0\0\2" or len(data) < 8 + 1024 + 40:
            raise StoreCorrupt(f"{idx_path} is not a version 2 pack index",
                               "Run `gitckpt doctor` on the store.")
        self.count = struct.unpack_from(">I", data, 8 + 255 * 4)[0]
        self.fanout = struct.unpack_from(">256I", data, 8)
        n = self.count
        ids_at = 8 + 1024
        self.ids = [data[ids_at + 20 * i: ids_at + 20 * i + 20] for i in range(n)]
        offsets_at = ids_at + 20 * n + 4 * n
        self.offsets = struct.unpack_from(f">{n}I", data, offsets_at)
        large_at = offsets_at + 4 * n
        self.large = data[large_at:len(data) - 40]

    def offset(self, raw: bytes) -> int | None:
        lo = self.fanout[raw[0] - 1] if raw[0] else 0
        hi = self.fanout[raw[0]]
        i = bisect.bisect_left(self.ids, raw, lo, hi)
        if i >= hi or self.ids[i] != raw:
            return None
        off: int = self.offsets[i]
        if off & 0x80000000:
            off = struct.unpack_from(">Q", self.large, 8 * (off & 0x7FFFFFFF))[0]
        return off


class Packs:
    """Every pack of an objects folder. Thread-safe; files are opened per read."""

    def __init__(self, objects_dir: str) -> None:
        self.folder = os.path.join(objects_dir, "pack")
        self.lock = threading.Lock()
        self.indexes: dict[str, PackIndex] = {}
        self.seen: tuple[str, ...] | None = None
        self.stamp: int | None = None  # the folder's mtime when last listed

    def refresh(self) -> None:
        """Look for packs again if the folder changed since the last look."""
        try:
            stamp = os.stat(self.folder).st_mtime_ns
        except OSError:
            stamp = None
        with self.lock:
            if stamp is not None and stamp == self.stamp:
                return
        try:
            names = tuple(sorted(n for n in os.listdir(self.folder)
                                 if n.startswith("pack-") and n.endswith(".idx")))
        except OSError:
            names = ()
        with self.lock:
            if names == self.seen:
                return
            for name in names:
                if name not in self.indexes:
                    self.indexes[name] = PackIndex(os.path.join(self.folder, name))
            for gone in set(self.indexes) - set(names):
                del self.indexes[gone]
            self.seen, self.stamp = names, stamp

    def find(self, oid: str) -> tuple[PackIndex, int] | None:
        raw = bytes.fromhex(oid)
        for again in (False, True):
            if again or self.seen is None:
                self.refresh()
            with self.lock:
                for index in self.indexes.values():
                    off = index.offset(raw)
                    if off is not None:
                        return index, off
        return None

    def has(self, oid: str) -> bool:
        return self.find(oid) is not None

    def read(self, oid: str, loose: Callable[[str], tuple[str, bytes] | None] | None = None
             ) -> tuple[str, bytes] | None:
        """(kind, body) of `oid`, or None if no pack holds it. `loose` reads the base of a
        delta that names a loose object (a thin pack's). StoreCorrupt if it is damaged."""
        found = self.find(oid)
        if found is None:
            return None
        index, off = found
        try:
            with open(index.pack_path, "rb") as f:
                kind, body = self._at(f, index, off, loose, 0)
        except (OSError, zlib.error, struct.error, IndexError, ValueError) as e:
            raise StoreCorrupt(f"Object {oid} in {index.pack_path} cannot be read ({e})",
                               "Run `gitckpt doctor` on the store.") from e
        if hash_object(kind, body) != oid:
            raise StoreCorrupt(f"Object {oid} in {index.pack_path} is corrupt",
                               "Run `gitckpt doctor` on the store.")
        return kind, body

    def size(self, oid: str) -> int | None:
        """The body size of `oid` from its pack entry's header (a delta's from the head of
        its delta data), without reading the body; None if no pack holds it. StoreCorrupt
        if the entry is damaged."""
        found = self.find(oid)
        if found is None:
            return None
        index, off = found
        try:
            with open(index.pack_path, "rb") as f:
                f.seek(off)
                head = f.read(64)
                code, size, i = _entry_header(head)
                if code in _KINDS:
                    return size
                if code == _OFS_DELTA:
                    while head[i] & 0x80:
                        i += 1
                    i += 1
                elif code == _REF_DELTA:
                    i += 20
                else:
                    raise ValueError(f"unknown pack entry type {code}")
                f.seek(off + i)
                delta = zlib.decompressobj().decompress(f.read(256), 32)
                _, at = _varint(delta, 0)  # the base's size, then the result's
                return _varint(delta, at)[0]
        except (OSError, zlib.error, IndexError, ValueError) as e:
            raise StoreCorrupt(f"Object {oid} in {index.pack_path} cannot be read ({e})",
                               "Run `gitckpt doctor` on the store.") from e

    def _at(self, f: BinaryIO, index: PackIndex, off: int,
            loose: Callable[[str], tuple[str, bytes] | None] | None, depth: int
            ) -> tuple[str, bytes]:
        if depth > _MAX_CHAIN:
            raise ValueError("delta chain too long")
        f.seek(off)
        head = f.read(32)
        code, size, i = _entry_header(head)
        if code in _KINDS:
            return _KINDS[code], _inflate(f, off + i, size)
        if code == _OFS_DELTA:
            byte = head[i]
            back, i = byte & 0x7F, i + 1
            while byte & 0x80:
                byte = head[i]
                back, i = ((back + 1) << 7) | (byte & 0x7F), i + 1
            kind, base = self._at(f, index, off - back, loose, depth + 1)
        elif code == _REF_DELTA:
            base_id = head[i:i + 20].hex()
            i += 20
            found = self.read(base_id, loose) or (loose(base_id) if loose else None)
            if found is None:
                raise ValueError(f"delta base {base_id} is missing")
            kind, base = found
        else:
            raise ValueError(f"unknown pack entry type {code}")
        return kind, _patch(base, _inflate(f, off + i, size))


def _entry_header(head: bytes) -> tuple[int, int, int]:
    """(type code, size, length of the header) of the pack entry starting `head`."""
    byte = head[0]
    code, size, shift, i = (byte >> 4) & 7, byte & 0x0F, 4, 1
    while byte & 0x80:
        byte = head[i]
        size |= (byte & 0x7F) << shift
        shift, i = shift + 7, i + 1
    return code, size, i


def _inflate(f: BinaryIO, at: int, size: int) -> bytes:
    f.seek(at)
    d = zlib.decompressobj()
    out = bytearray()
    while not d.eof:
        chunk = d.unconsumed_tail or f.read(max(4096, min(size + 64, 1 << 24)))
        if not chunk:
            raise ValueError("truncated pack entry")
        out += d.decompress(chunk, size + 1 - len(out))  # never more than the header says
        if len(out) > size:
            break
    if len(out) != size:
        raise ValueError("pack entry size mismatch")
    return bytes(out)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        shift, i = shift + 7, i + 1
        if not byte & 0x80:
            return value, i


def _patch(base: bytes, delta: bytes) -> bytes:
    """Apply a git delta (copy and insert instructions) to `base`."""
    source, i = _varint(delta, 0)
    target, i = _varint(delta, i)
    if source != len(base):
        raise ValueError("delta base size mismatch")
    out = bytearray()
    while i < len(delta):
        op = delta[i]
        i += 1
        if op & 0x80:
            offset = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[i] << (8 * bit)
                    i += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    size |= delta[i] << (8 * bit)
                    i += 1
            size = size or 0x10000
            out += base[offset:offset + size]
        elif op:
            out += delta[i:i + op]
            i += op
        else:
            raise ValueError("delta opcode 0")
    if len(out) != target:
        raise ValueError("delta result size mismatch")
    return bytes(out)

"""New objects written as one git pack instead of one loose file each (the pack and index
formats of git's Documentation/gitformat-pack.txt, version 2, no deltas).

A first save of 10,000 files used to leave 10,000 loose objects in the user's `.git/objects`,
above `gc.auto`, so the user's next `git commit` started packing in the background. A
`PackWriter` holds the first objects of a scan in memory; past `threshold` objects (or
`spill` bytes) it streams them into a temporary pack in `objects/pack`, and `close()`
publishes the pack and then its index by rename, the order git uses (readers find a pack
through its index). Fewer objects are written loose, as before. Objects are immutable and
content-addressed, so a pack that duplicates a loose object, or a temporary file a killed
writer left behind (removed by the next writer once its process is gone), is harmless.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable
from typing import BinaryIO

from gitckpt.core.objects import hash_object, sha1

THRESHOLD = 256  # below this many new objects, loose files are cheaper than a pack
SPILL = 16 << 20  # bytes held in memory before streaming to the pack file
LEVEL = 1  # zlib level, as git's core.looseCompression: a first save is paid in CPU
_TMP = "tmp_gitckpt_"
_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


object_id = hash_object  # the git id of an object


def _entry_header(code: int, size: int) -> bytes:
    """The pack entry header: type and size, 4 bits then 7 bits per byte, low bits first."""
    out = bytearray()
    byte = (code << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    out.append(byte)
    return bytes(out)


class PackWriter:
    """Collects the new objects of one scan; `close()` writes them (see the module).

    `loose(kind, data)` writes one loose object (the store's own odb write) and returns its
    id. Not thread-safe: one scan, one writer."""

    def __init__(self, objects_dir: str, loose: Callable[[str, bytes], str],
                 threshold: int = THRESHOLD, spill: int = SPILL) -> None:
        self.pack_dir = os.path.join(objects_dir, "pack")
        self.loose = loose
        self.threshold = threshold
        self.spill = spill
        self.held: list[tuple[str, bytes, str]] = []  # (kind, data, id) not yet written
        self.held_by_id: dict[str, tuple[str, bytes]] = {}
        self.held_bytes = 0
        self.ids: set[str] = set()
        self.streamed: dict[str, tuple[str, int, int]] = {}  # id: (kind, offset, length)
        self.entries: list[tuple[bytes, int, int]] = []  # (raw id, crc32, offset) in the pack
        self.file: BinaryIO | None = None
        self.tmp = ""
        self.published: str | None = None  # the pack's path once closed

    def __contains__(self, oid: object) -> bool:
        return oid in self.ids  # a pygit2.Oid too: it hashes and compares as its hex id

    @property
    def streaming(self) -> bool:
        """True once the objects go to a pack (so `close()` will write one)."""
        return self.file is not None

    def add(self, kind: str, data: bytes, oid: str | None = None) -> str:
        """Take object `data` of `kind`; its id. Adding an id twice keeps one copy."""
        oid = oid or object_id(kind, data)
        if oid in self.ids:
            return oid
        self.ids.add(oid)
        if self.file is None:
            self.held.append((kind, data, oid))
            self.held_by_id[oid] = (kind, data)
            self.held_bytes += len(data)
            if len(self.held) >= self.threshold or self.held_bytes >= self.spill:
                self._start()
        else:
            self._write(kind, data, oid)
        return oid

    def _start(self) -> None:
        os.makedirs(self.pack_dir, exist_ok=True)
        self._sweep()
        self.tmp = os.path.join(self.pack_dir, f"{_TMP}{os.getpid()}_{os.urandom(4).hex()}")
        self.file = open(self.tmp + ".pack", "w+b")  # noqa: SIM115 (closed in close/abort)
        self.file.write(b"PACK" + struct.pack(">II", 2, 0))  # the count is set in close()
        for kind, data, oid in self.held:
            self._write(kind, data, oid)
        self.held, self.held_by_id, self.held_bytes = [], {}, 0

    def _write(self, kind: str, data: bytes, oid: str) -> None:
        f = self.file
        assert f is not None  # called only while streaming (after _start)
        header = _entry_header(_TYPES[kind], len(data))
        chunk = header + zlib.compress(data, LEVEL)
        at = f.tell()
        self.entries.append((bytes.fromhex(oid), zlib.crc32(chunk), at))
        self.streamed[oid] = (kind, at + len(header), len(chunk) - len(header))
        f.write(chunk)

    def drain(self) -> list[tuple[str, bytes, str]]:
        """The objects held and not yet written, as (kind, data, id), handed to the caller
        to write and forgotten here. Empty once streaming: those are in the pack."""
        held, self.held, self.held_by_id, self.held_bytes = self.held, [], {}, 0
        return held

    def get(self, oid: str) -> tuple[str, bytes] | None:
        """(kind, body) of an object added but not yet published, or None."""
        if oid in self.held_by_id:
            return self.held_by_id[oid]
        where = self.streamed.get(oid)
        if where is None or self.file is None:
            return None
        kind, at, length = where
        self.file.flush()
        data = os.pread(self.file.fileno(), length, at)
        return kind, zlib.decompress(data)

    def close(self) -> None:
        """Write what was added: loose objects, or the pack and its index. After this, every
        added object can be read through the repository."""
        if self.file is None:
            for kind, data, _ in self.held:
                self.loose(kind, data)
            self.held, self.held_by_id = [], {}
            return
        f = self.file
        try:
            f.seek(8)
            f.write(struct.pack(">I", len(self.entries)))
            f.flush()
            f.seek(0)
            digest = sha1()
            while block := f.read(1 << 20):
                digest.update(block)
            checksum = digest.digest()
            f.seek(0, os.SEEK_END)
            f.write(checksum)
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()
            self.file = None
        name = os.path.join(self.pack_dir, f"pack-{checksum.hex()}")
        with open(self.tmp + ".idx", "wb") as out:
            out.write(_index(self.entries, checksum))
            out.flush()
            os.fsync(out.fileno())
        for ext in (".pack", ".idx"):  # git's order: a reader finds a pack by its index
            os.chmod(self.tmp + ext, 0o444)
            os.replace(self.tmp + ext, name + ext)
        self.published = name + ".pack"

    def abort(self) -> None:
        """Drop what was added (the scan failed): nothing is published."""
        if self.file is not None:
            self.file.close()
            self.file = None
            for ext in (".pack", ".idx"):
                try:
                    os.unlink(self.tmp + ext)
                except FileNotFoundError:
                    pass
        self.held, self.held_by_id = [], {}

    def _sweep(self) -> None:
        """Remove temporary packs of writers that are gone (killed mid-scan)."""
        try:
            names = os.listdir(self.pack_dir)
        except OSError:
            return
        for name in names:
            if not name.startswith(_TMP):
                continue
            pid = name[len(_TMP):].partition("_")[0]
            if pid.isdigit() and not _alive(int(pid)):
                try:
                    os.unlink(os.path.join(self.pack_dir, name))
                except OSError:
                    pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _index(entries: list[tuple[bytes, int, int]], pack_checksum: bytes) -> bytes:
    """The version 2 index of a pack: fan-out table, sorted ids, CRC-32s, offsets (those
    past 2 GiB in a table of 8-byte offsets), the pack's checksum, its own checksum."""
    entries = sorted(entries)
    fanout = [0] * 256
    for raw, _, _ in entries:
        fanout[raw[0]] += 1
    total, cumulative = 0, []
    for n in fanout:
        total += n
        cumulative.append(total)
    small: list[int] = []
    large: list[int] = []
    for _, _, offset in entries:
        if offset < 0x80000000:
            small.append(offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(offset)
    body = b"".join([
        b"\377tOc", struct.pack(">I", 2), struct.pack(">256I", *cumulative),
        b"".join(raw for raw, _, _ in entries),
        struct.pack(f">{len(entries)}I", *(crc for _, crc, _ in entries)),
        struct.pack(f">{len(small)}I", *small),
        struct.pack(f">{len(large)}Q", *large),
        pack_checksum])
    return body + sha1(body).digest()

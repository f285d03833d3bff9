"""Handoff packages: one task's timeline in a folder another checkout (or store) can import.

A package is `HANDOFF.md` (the resume text as a prompt for whoever takes over),
`manifest.json` (format, task, counts, checksums) and `checkpoints.git/`, a bare repository
written by the DirStore code holding only the task's refs, the objects they reach and their
notes. `git --no-pager --git-dir=<pkg>/checkpoints.git log --notes=checkpoints --all` reads it
(point git only at packages you made: git reads a package's own config; `gitckpt import
--dry-run` is the safe way to look at one).

Import validates everything before it writes anything; the package is untrusted input.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core import json_input
from gitckpt.core.errors import FileTooLarge, InvalidArgument, SchemaTooNew, StoreCorrupt
from gitckpt.core.hints import BLANK, call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.progress import Meter
from gitckpt.core.shape import Shaped
from gitckpt.engine.notes import Note, json_text
from gitckpt.engine.reach import reachable
from gitckpt.engine.timeline import REF_ROOT, Timeline, head_ref
from gitckpt.safety.scope import max_file_size
from gitckpt.store.base import Store
from gitckpt.store.notes import NOTES_REF
from gitckpt.store.package import PackageStore
from gitckpt.transfer.verify import TASK_REF, Foreign, Refused, verify

if TYPE_CHECKING:
    from gitckpt.engine.records import TaskInfo

FORMAT = 1
MANIFEST, HANDOFF, REPO = "manifest.json", "HANDOFF.md", "checkpoints.git"
_BAD_PACKAGE = "The package is damaged or was not made by an export; ask for a new one."


def _digest(lines: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


@dataclass(frozen=True)
class ExportResult(Shaped):

    task: TaskId
    path: Path
    steps: int
    objects: int
    bytes: int



def export(tl: Timeline, task: TaskId, to: Path, handoff: str) -> ExportResult:
    """Write the package of `task` to the new folder `to`."""
    to = Path(os.path.abspath(to))
    if not to.parent.is_dir():
        raise InvalidArgument(f"{to.parent} does not exist.", "Create the parent folder first.")
    if os.path.lexists(to):
        raise InvalidArgument(f"{to} exists already.", "Export to a new folder name.")
    store = tl.store
    refs = {n: o for n, o in store.list_refs(f"{REF_ROOT}{task}/").items()
            if TASK_REF.fullmatch(n[len(f"{REF_ROOT}{task}/"):])}
    kinds = reachable(store.read_object, list(refs.values()))
    notes = {c: store.read_note(c) for c, k in kinds.items() if k == "commit"}
    info = tl.info(task)
    final, to = to, to.with_name(f".{to.name}.{os.getpid()}.partial")
    try:
        to.mkdir(mode=0o755)
    except OSError as e:
        raise InvalidArgument(f"Cannot create {to}: {e.strerror}.",
                              "Export to a writable folder.") from e
    try:
        result = _write_package(tl, task, to, final, refs, kinds, notes, info, handoff)
        _readable(to)  # never wider than the store
        os.rename(to, final)
    except BaseException:
        shutil.rmtree(to, ignore_errors=True)  # no half package left behind
        raise
    return replace(result, path=final)


def _readable(root: Path) -> None:
    """The store's own modes (0600 files, 0700 folders), narrowed by the umask: a package
    holds the workspace's files, so it is never more readable than the store it came from.
    Share it on purpose (`chmod -R go+rX`)."""
    mask = os.umask(0)
    os.umask(mask)
    for dirpath, _, files in os.walk(root):
        os.chmod(dirpath, 0o700 & ~mask)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o600 & ~mask)


def _write_package(tl: Timeline, task: TaskId, to: Path, final: Path,
                   refs: dict[str, ObjectId], kinds: dict[ObjectId, str],
                   notes: dict[ObjectId, str | None], info: TaskInfo, handoff: str
                   ) -> ExportResult:
    store = tl.store
    pkg = PackageStore(to, to / REPO)
    pkg.prepare()
    with Meter("Writing the package", "objects", len(kinds)) as meter:
        for oid in kinds:
            pkg.write_object(*store.read_object(oid))
            meter.advance()
    pkg.flush()
    with pkg.lock():
        pkg.update_notes({c: t for c, t in notes.items() if t is not None},
                         f"Notes of task {task}\n")
        for name, oid in sorted(refs.items()):
            pkg.create_ref(name, oid)
    files = pkg.object_ids()  # the timeline's objects and the notes'
    text = handoff.rstrip("\n") + "\n\n" + _instructions(task, final)
    data = text.encode("utf-8", "surrogateescape")  # file names need not be UTF-8
    (to / HANDOFF).write_bytes(data)
    manifest = {
        "format": FORMAT, "task": task, "name": info.meta.name, "goal": info.meta.goal,
        "workspace": store.root.name, "steps": info.head.n, "objects": len(files),
        "refs": dict(sorted(refs.items())),
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "checksums": {"objects": _digest(list(files)),
                      HANDOFF: hashlib.sha256(data).hexdigest()},
    }
    (to / MANIFEST).write_text(json_text(manifest) + "\n", encoding="utf-8")
    size = sum(f.stat().st_size for f in to.rglob("*") if f.is_file())
    return ExportResult(task, to, info.head.n, len(files), size)


def _instructions(task: TaskId, to: Path) -> str:
    return (f"## Taking over\n\nThis package holds task `{task}` with every step and drift. In "
            f"the checkout where the work continues, run:\n\n    gitckpt import {to}\n    "
            "gitckpt resume\n\nthen save each finished step with `gitckpt save`. To look "
            f"without importing: `gitckpt import --dry-run {to}` checks the package and says "
            "what it holds (git would read the package's own config, so do not point git at "
            "a package you did not make).\n")


@dataclass(frozen=True)
class ImportResult(Shaped):

    task: TaskId
    source_task: TaskId
    steps: int
    objects: int
    new_objects: int
    dry_run: bool = False
    name: str = ""
    checkout: Any = None  # the RestoreResult of `import --checkout`
    derived = ("active",)

    @property
    def active(self) -> bool:
        return not self.dry_run  # an import makes its task the active one



def inspect_package(path: Path) -> ImportResult:
    """Check a package and say what it holds, writing nothing (`import --dry-run`): the safe
    way to look at a package someone sent, since git would read its config."""
    checked = check_package(path)
    meta = next((n for n in checked.notes.values() if n.kind == "init"), None)
    return ImportResult(checked.task, checked.task, checked.steps, len(checked.objects), 0,
                        True, (meta.name or "") if meta else "")


@dataclass(frozen=True)
class _Checked:
    """A package that passed every check, ready to be written."""

    task: TaskId
    refs: dict[str, ObjectId]  # names relative to the task: head, steps/3, ...
    pkg: PackageStore
    objects: list[ObjectId]  # the objects the refs reach, each checked
    notes: dict[ObjectId, Note]
    steps: int


def check_package(path: Path) -> _Checked:
    """Every check an import makes, before anything is written. StoreCorrupt (or
    SchemaTooNew, InvalidArgument) says what is wrong."""
    path = Path(os.path.abspath(path))
    _check_folder(path)
    manifest, task, listed, sums = _manifest(path)
    handoff = (path / HANDOFF).read_bytes() if (path / HANDOFF).is_file() else b""
    if hashlib.sha256(handoff).hexdigest() != sums.get(HANDOFF):
        raise StoreCorrupt(f"{HANDOFF} does not match the manifest's checksum.", _BAD_PACKAGE)
    pkg = PackageStore(path, path / REPO)
    pkg.check_shape(_BAD_PACKAGE)
    prefix = f"{REF_ROOT}{task}/"
    found = pkg.list_refs("refs/")
    notes_head = found.pop(NOTES_REF, None)
    outside = sorted(name for name in found if not name.startswith(prefix))
    if outside:
        raise StoreCorrupt(f"The package holds the ref {outside[0]!r}, outside task {task}.",
                           _BAD_PACKAGE)
    refs = {name[len(prefix):]: oid for name, oid in found.items()}
    if found != listed:
        raise StoreCorrupt("The package's refs do not match its manifest.", _BAD_PACKAGE)
    stored = pkg.object_ids()
    if _digest(stored) != sums.get("objects") or len(stored) != manifest.get("objects"):
        raise StoreCorrupt("The package's objects do not match its manifest.", _BAD_PACKAGE)
    if notes_head is None:
        raise StoreCorrupt("The package has no notes.", _BAD_PACKAGE)
    notes: dict[ObjectId, Note] = {}

    def note(oid: ObjectId) -> Note | None:
        if oid not in notes:
            text = _note_from(pkg, oid)
            if text is None:
                return None
            notes[oid] = Note.parse(text, f"package commit {oid[:12]}")
        return notes[oid]

    def read(oid: ObjectId) -> tuple[str, bytes]:
        return pkg.read_checked(oid, _BAD_PACKAGE)  # checks that it hashes to its id

    foreign = Foreign(refs, read, pkg.read_commit, lambda oid: _size(pkg, oid), note)
    try:
        kinds = verify(foreign, _BAD_PACKAGE)
    except Refused as e:
        raise StoreCorrupt(f"The package's task {task} is refused: {e.message}.",
                           _BAD_PACKAGE) from e
    except FileTooLarge as e:
        raise FileTooLarge(
            e.path, e.size, e.limit,
            f"The package's task {task} holds {e.path} of {e.size:,} bytes, over the size "
            f"limit of {e.limit:,} bytes (GITCKPT_MAX_FILE_SIZE); nothing was imported.",
            "If that file may be here, import again with a higher limit (e.g. "
            f"GITCKPT_MAX_FILE_SIZE={-(-e.size // (1 << 20))}M); or export the task again "
            "with the file left out.") from e
    limit = max_file_size()
    for oid in set(stored) - kinds.keys():
        if _size(pkg, oid) > limit:  # no export writes one: it is not read
            raise StoreCorrupt(f"The package holds an object of {_size(pkg, oid):,} bytes "
                               f"({oid}) that no checkpoint names.", _BAD_PACKAGE)
        read(oid)  # unreferenced objects are not copied, but must not be damaged either
    steps = notes[refs["head"]].step
    return _Checked(task, refs, pkg, list(kinds), notes, steps)


def _check_folder(path: Path) -> None:
    """A package is a real folder of regular files and folders: no link, no special file."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise InvalidArgument(f"No package at {path}.", "Pass the folder {0} wrote.",
                              [call("export", to=BLANK)]) from e
    if not stat.S_ISDIR(st.st_mode):
        raise InvalidArgument(f"{path} is not a package folder.",
                              "Pass the folder {0} wrote (not a link to it).",
                              [call("export", to=BLANK)])
    for dirpath, dirs, files in os.walk(path):
        for name in dirs + files:
            mode = os.lstat(os.path.join(dirpath, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                rel = os.path.relpath(os.path.join(dirpath, name), path)
                kind = "symbolic link" if stat.S_ISLNK(mode) else "special file"
                raise StoreCorrupt(f"The package holds a {kind} ({rel}).", _BAD_PACKAGE)


def _manifest(path: Path) -> tuple[dict[str, Any], TaskId, dict[str, Any], dict[str, Any]]:
    """(the manifest, its task, its refs, its checksums), of a format this gitckpt reads."""
    try:
        manifest = json_input.loads((path / MANIFEST).read_text(encoding="utf-8"))
        fmt, task = manifest["format"], TaskId(manifest["task"])
        listed, sums = dict(manifest["refs"]), dict(manifest["checksums"])
    except (OSError, ValueError, KeyError, TypeError, InvalidArgument) as e:
        raise StoreCorrupt(f"{path / MANIFEST} is missing or unreadable ({e}).",
                           _BAD_PACKAGE) from e
    if not isinstance(fmt, int) or fmt < 1:
        raise StoreCorrupt(f"The package format {fmt!r} is not valid.", _BAD_PACKAGE)
    if fmt > FORMAT:
        raise SchemaTooNew("The package", fmt, FORMAT)
    return manifest, task, listed, sums


def _size(pkg: PackageStore, oid: ObjectId) -> int:
    try:
        return pkg.object_size(oid)
    except StoreCorrupt as e:
        raise StoreCorrupt(e.message, _BAD_PACKAGE) from e


def _note_from(pkg: PackageStore, oid: ObjectId) -> str | None:
    try:
        return pkg.read_note(oid)
    except StoreCorrupt as e:
        raise StoreCorrupt(f"The package's notes are damaged ({e.message}).", _BAD_PACKAGE) from e


def import_package(tl: Timeline, path: Path, as_id: str | None = None) -> ImportResult:
    """Check the package, then write its objects, notes and refs (head last) under the lock;
    the task becomes active. Nothing is written unless every check passed."""
    checked = check_package(path)
    task = TaskId(as_id) if as_id else checked.task
    store = tl.store
    if store.get_ref(head_ref(task)) is not None or store.list_refs(f"{REF_ROOT}{task}/"):
        raise InvalidArgument(f"Task {task} exists in this store already.",
                              "Import it under another id: {0}",
                              [call("import", package=str(path), as_id=f"{task}-2")])
    for oid, note in checked.notes.items():
        if note.kind == "init" and note.step == 0:
            here = store.read_note(oid) if store.has_object(oid) else None
            if here is not None and Note.parse(here, oid).workspace not in (
                    None, store.workspace):
                raise InvalidArgument(
                    "This store holds the package's commits already, for another workspace "
                    "(a task and its copy would share their notes).",
                    "Import it from the workspace the task belongs to, or into another store.")
    store.prepare()
    with store.lock():
        new = 0
        with Meter("Importing objects", "objects", len(checked.objects)) as meter:
            for oid in checked.objects:
                if not store.has_object(oid):
                    store.write_object(*checked.pkg.read_checked(oid, _BAD_PACKAGE))
                    new += 1
                meter.advance()
        _write_notes(store, checked)
        written: list[tuple[str, ObjectId]] = []
        try:
            for rest, oid in sorted(checked.refs.items(), key=lambda r: r[0] == "head"):
                store.create_ref(f"{REF_ROOT}{task}/{rest}", oid)
                written.append((f"{REF_ROOT}{task}/{rest}", oid))
        except Exception:
            for name, oid in written:  # leave the store as it was: no half task
                store.delete_ref(name, oid)
            raise
        tl.set_active(task)
    return ImportResult(task, checked.task, checked.steps, len(checked.objects), new)


def _write_notes(store: Store, checked: _Checked) -> None:
    """The package's notes, with the task's workspace made this store's (it came from
    another folder); notes already here for the same commits are left as they are."""
    changes: dict[ObjectId, str | None] = {}
    for oid, note in checked.notes.items():
        if store.read_note(oid) is not None:
            continue
        if note.step == 0 and note.kind == "init":
            note.workspace = store.workspace
        changes[oid] = note.dump()
    store.update_notes(changes, f"Notes imported for task {checked.task}\n")

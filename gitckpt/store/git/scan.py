"""GitStore snapshots: the live workspace to a tree through a private libgit2 index (stat cache).

The private index lives under `<git-dir>/gitckpt/` and is opened as a standalone libgit2 index,
never through `repo.index`, so the user's `.git/index` cannot be read or written by accident.
libgit2 compares it with the work tree (one stat walk, git's ignore rules, nested repositories
as single entries); only the paths it reports are looked at again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, ObjectType

from gitckpt.core.errors import (
    GitIndexChanged,
)
from gitckpt.core.gitnames import refused_path
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import (
    Mode,
)
from gitckpt.core.values import Progress, Reason, Skipped, Snapshot
from gitckpt.safety.scope import Scope
from gitckpt.store.git import hinted
from gitckpt.store.git.blobs import CHANGING, SENSITIVE, file_blob, looks_sensitive
from gitckpt.store.git.cache import StatCache
from gitckpt.store.git.config import (
    Stamp,
    filter_key,
    filters_possible,
    ignore_key,
    stamp,
    trust_exec,
)
from gitckpt.store.git.diff import Differ
from gitckpt.store.git.libgit2 import bind, nested_head, stat_moved
from gitckpt.store.git.scanpass import ScanPass, dirs_of, dirs_with, lstat
from gitckpt.store.git.split import objects_dir, scan_deltas
from gitckpt.store.git.trees import index_trees, workspace_tree
from gitckpt.store.packs.write import PackWriter
from gitckpt.store.state import StateDir

if TYPE_CHECKING:
    from gitckpt.store.staging import Held

# A file modified this recently may change again within the file system's timestamp
# granularity without its stat changing; its cache entry is smudged (size 0) so that libgit2
# re-reads it, and the next scan re-takes it with its real stat once it is old enough.
# (libgit2's own UPDATE_INDEX refresh is not used: with a standalone index it would update the
# repository's index in memory instead.)
RACY_NS = 2_000_000_000
# Index changes kept pending (re-found by the next scan) rather than written at once.
PENDING_MAX = 100
#: A full diff that read this much more than the files it reported (and twice the index
#: file) hashed unchanged files whose stat moved: their cache entries are then refreshed.
REFRESH_BYTES = 4 << 20
# Outside a watcher's journal (a hook's or the CLI's own process, which keeps nothing in
# memory) changes stay pending only in an index of at least this many entries: below it, a
# write (about 3 ms per 10,000 entries) costs less than every later process re-reading them
# (each a read, a hash and a scope check, and the rule tables loaded once per process).
PENDING_INDEX_MIN = 50_000
_FLAGS = (DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
          | DiffOption.INCLUDE_TYPECHANGE | DiffOption.SKIP_BINARY_CHECK
          | DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_UNREADABLE
          | DiffOption.DISABLE_PATHSPEC_MATCH)

_KINDS = {"blob": ObjectType.BLOB, "tree": ObjectType.TREE}


class Scanner:
    """Snapshots one workspace (`prefix` inside the work tree) of one repository."""

    def __init__(self, repo: pygit2.Repository, workdir: Path, prefix: str, state: StateDir,
                 common_dir: Path, user_index: Path) -> None:
        self.repo = repo
        self.workdir = workdir
        self.prefix = prefix
        self.common_dir = common_dir
        self.cache = StatCache(repo, state, user_index)
        self.index_path = self.cache.path
        self.user_index = user_index
        self.differ = Differ(repo, workdir, prefix, _FLAGS, self._rel)
        self.parallel = True  # two diff threads on large workspaces (twice the index memory)
        self.hold: Held | None = None  # staging (Store.staging): new objects go there

    def snapshot(self, scope: Scope, *, update_cache: bool, progress: Progress | None = None,
                 changed: set[str] | None = None, skipped_before: tuple[Skipped, ...] = (),
                 watched: bool = False) -> Snapshot:
        """The guard: `.git/index` must keep its stat over a whole scan. We never open it, so
        a change means another git process; the scan is retried, then refused.

        `watched`: a watcher's journal runs this scan (journal.py), so its cache is kept in
        memory for the next (git_hinted). `changed`, the workspace-relative paths the
        trusted watcher saw since, limits the scan to them when that cache still holds;
        `skipped_before` is what the scan before left out."""
        for _ in range(3):
            before = stamp(self.user_index)
            snap = self._snapshot(scope, update_cache, progress, fresh=False, changed=changed,
                                  skipped_before=skipped_before, watched=watched)
            if stamp(self.user_index) == before:
                return snap
        raise GitIndexChanged(str(self.user_index))

    def _snapshot(self, scope: Scope, update_cache: bool, progress: Progress | None,
                  fresh: bool, changed: set[str] | None = None,
                  skipped_before: tuple[Skipped, ...] = (), watched: bool = False
                  ) -> Snapshot:
        # The new blobs of a large scan go into one pack, not a loose file each (pack_write).
        # Staging, nothing goes to disk: every new object is held, then written through the
        # repository's (staging) object database when the scan closes its pack.
        self._pack = PackWriter(objects_dir(self.repo.path), self._loose,
                                **({"threshold": 1 << 62, "spill": 1 << 62} if self.hold is not None
                                   else {}))
        try:
            return self._scan(scope, update_cache, progress, fresh, changed, skipped_before,
                              watched)
        except BaseException:
            self._pack.abort()
            hinted.forget(self.index_path)
            raise

    def _loose(self, kind: str, data: bytes) -> str:
        return str(self.repo.odb.write(_KINDS[kind], data))

    def _scan(self, scope: Scope, update_cache: bool, progress: Progress | None,
              fresh: bool, changed: set[str] | None, skipped_before: tuple[Skipped, ...],
              watched: bool) -> Snapshot:
        opened = stamp(self.index_path)
        state = {} if fresh else self.cache.read_state()
        ignores = ignore_key(self.repo, self.common_dir, self.workdir, self.prefix, scope)
        # A watched scan starts from the last one's cache in memory, if it still holds (for
        # these rules: another task's excludes made another cache).
        memo = hinted.recall(self.index_path, opened, state, ignores) \
            if watched and not fresh else None
        base: str | None
        if memo is not None and memo.tree in self.repo.odb:
            index, base = bind(memo.index, self.repo), memo.tree
            state = {**state, "racy": sorted(memo.racy)}
            if update_cache:
                self.cache.prepare_write()
        else:
            memo = None
            index = self.cache.open(update_cache, fresh)
            # The recorded tree is that of the index we read only if the file did not change
            # while we read it (writers replace it by rename) and the state names that file.
            same_file = opened is not None and stamp(self.index_path) == opened
            base = state.get("tree") if same_file and opened is not None \
                and state.get("index") == list(opened) else None  # (same_file says it is)
        if len(index) and base is not None and base not in self.repo.odb:
            # git gc pruned what the cache points at: its blob ids cannot be trusted either.
            return self._snapshot(scope, update_cache, progress, fresh=True, watched=watched)
        filters = filter_key(self.repo, self.common_dir)
        p = ScanPass(index, scope, set(state.get("gitlinks", [])),
                     set(state.get("attributes", [])), set(state.get("racy", [])),
                     trust_exec(self.repo))
        old_links, old_attributes = set(p.gitlinks), set(p.attributes)
        cached = len(index)
        if state.get("fingerprint") != ignores:
            p.refilter.add(self.prefix)  # rules changed: cached entries may be out of scope
        if state.get("filters") != filters:
            p.renormalize.add("")  # line-ending settings changed: cached blobs may differ
        recheck = set(p.racy)
        p.filters = filters_possible(self.repo, self.common_dir, p.attributes)
        seen = changed is not None and memo is not None and not (p.refilter or p.renormalize) \
            and hinted.visit(self, p, self._repo_paths(changed), _FLAGS, progress)
        # a full diff re-checked every file: the slices are cut again from it
        rotation = hinted.Rotation(repo=memo.rotation.repo if memo is not None else None)
        if seen:  # each path the watcher saw was re-read: an edit may have restored its mtime
            assert changed is not None  # as `seen` says
            assert memo is not None
            recheck -= set(self._repo_paths(changed))
            # and what events cannot show (mmap writes, hard links from outside) is found by a
            # stat of a rotating slice of the rest
            rotation = hinted.recheck(self, p, memo, progress)
            # what earlier scans left out stays left out, unless it was looked at again
            p.skipped = [*(s for s in skipped_before if not _under(s.path, changed)),
                         *p.skipped]
            new_repo_dirs = self._repo_paths(changed)
        else:
            reads: list[int] = []
            deltas = self._all_deltas(p, index, opened, base, parallel=memo is None,
                                      reads=reads)
            p.filters = p.filters or any(
                d.new_file.raw_path.endswith(b".gitattributes") for d in deltas)
            for delta in deltas:
                recheck.discard(self._visit(p, delta, progress))
            if update_cache and reads and self._hashed_unchanged(deltas, sum(reads)):
                self._refresh(p)
            new_repo_dirs = state.get("dirs", [])
        for path in sorted(recheck):  # unchanged since, or libgit2 would have reported them
            if path in index:
                self._take(p, path, self._rel(path))
            else:
                p.racy.discard(path)
        self._check_gitlinks(p)
        self._find_new_repos(p, new_repo_dirs)
        if p.renormalize and cached:
            self._renormalize(p)
        if p.refilter and cached:  # an empty cache holds nothing the rules could drop
            self._refilter(p)
        self._publish(index, base)
        tree = workspace_tree(self.repo, self.prefix, index, base, p.changes)
        if tree not in self.repo.odb and not fresh:  # a stale tree cache after a gc
            return self._snapshot(scope, update_cache, progress, fresh=True, watched=watched)
        snap = self._finish(p, index, base, tree, state, update_cache, ignores, filters,
                            old_links, old_attributes, watched)
        if watched:  # the side state as `_finish` left it on disk: no second read
            now = self._state_after
            hinted.remember(self.index_path, hinted.Memo(
                stamp(self.index_path), now.get("index"), now.get("tree"), now.get("scanned"),
                now.get("by"), ignores, index, tree, set(p.racy), rotation))
        return snap

    def _repo_paths(self, changed: set[str]) -> list[str]:
        return sorted({f"{self.prefix}/{r}" if self.prefix else r for r in changed})

    def _all_deltas(self, p: ScanPass, index: pygit2.Index, opened: Stamp | None,
                    base: str | None, parallel: bool = True, reads: list[int] | None = None
                    ) -> list[pygit2.DiffDelta]:
        """Everything libgit2 finds changed between the cache and the work tree (`parallel`:
        the second half may be diffed from the index file, which holds `index`; `reads`
        gets the bytes the diffs read)."""
        return self.differ.whole(p, lambda first: scan_deltas(
            self.repo, index, self.index_path, opened, base, self.workdir, self.prefix,
            _FLAGS, self.parallel and parallel and first, reads))

    def _hashed_unchanged(self, deltas: list[pygit2.DiffDelta], read: int) -> bool:
        """Whether the diff read far more than the files it reported and the index file: it
        then hashed files whose stat moved but whose content did not (a checkout, a
        formatter, a `touch`), and would hash them again at every scan."""
        try:
            index_size = os.stat(self.index_path).st_size
        except OSError:
            index_size = 0
        reported = sum(d.new_file.size for d in deltas)
        return read - reported > max(REFRESH_BYTES, 2 * index_size)

    def _refresh(self, p: ScanPass) -> None:
        """Take again the stat of every cached file whose stat moved, where its content
        hashes as cached (git refreshes its index so; the content was kept before, so no
        content check runs); a file that changed meanwhile is taken as any changed file."""
        index, workdir = p.index, os.fsencode(self.workdir)
        moved = [os.fsdecode(path) for path, stale in
                 (stat_moved(index, i, workdir) for i in range(len(index))) if stale]
        for path in moved:
            if path in p.changes or path in p.racy:
                continue  # taken in this scan already, or re-read by the next one anyway
            full = os.path.join(self.workdir, path)
            st = lstat(full)
            try:
                entry = index[path]
            except KeyError:
                entry = None
            if st is None or entry is None or stat.S_ISDIR(st.st_mode):
                self._take(p, path, self._rel(path))
                continue
            oid = file_blob(self.repo, self._pack, path, full, st, p.filters)
            if oid is not None and str(oid) == str(entry.id) and lstat(full) == st:
                p.put(path, str(oid), int(entry.mode), st,
                      racy=p.now - st.st_mtime_ns < RACY_NS)
            else:
                self._take(p, path, self._rel(path))

    def _finish(self, p: ScanPass, index: pygit2.Index, base: str | None, tree: ObjectId,
                state: dict[str, Any], update_cache: bool, ignores: str, filters: str,
                old_links: set[str], old_attributes: set[str], watched: bool) -> Snapshot:
        """Write the cache (when it pays) and its side state; the snapshot.

        A scan outside a watcher's journal (another process's, usually) always writes a new
        `by` token: a watcher's cache in memory, which may hold what its events did not show,
        then yields to it (git_hinted.recall), whatever tree it found."""
        new_state = {"fingerprint": ignores, "filters": filters,
                     "gitlinks": sorted(p.gitlinks), "attributes": sorted(p.attributes),
                     # smudged entries stay listed until the index holding them is rewritten
                     "racy": sorted(p.racy | set(state.get("racy", []))),
                     "index": state.get("index"), "tree": state.get("tree"),
                     "dirs": state.get("dirs", []),
                     # the tree the newest scan of any process found: a watcher's cache in
                     # memory (git_hinted) yields to a scan elsewhere that saw otherwise
                     "scanned": tree,
                     "by": state.get("by") if watched else os.urandom(8).hex()}
        # Writing a large index costs more than re-reading a few changed files next time, so
        # small changes stay pending. Rule changes, nested repositories and unknown bases are
        # written at once: the side state above must describe the index file.
        written = update_cache and p.changes and (
            base is None or len(p.changes) > PENDING_MAX or p.refilter or p.renormalize
            or p.gitlinks != old_links or p.attributes != old_attributes
            or (not watched and len(index) < PENDING_INDEX_MIN))
        if written:
            self.cache.write(index)
            # the folders of the index read from disk, if the state describes it and no entry
            # left it (a watched scan's index in memory may hold more than its file)
            grown = not watched and base is not None and "dirs" in state \
                and None not in p.changes.values()
            new_state.update(index=list(stamp(self.index_path) or ()), tree=tree,
                             racy=sorted(p.racy),
                             dirs=dirs_with(state["dirs"], p.changes) if grown
                             else dirs_of(index))
        if update_cache and new_state != state:
            self.cache.write_state(new_state)
        self._state_after = new_state if update_cache else state
        once = {s.path: s for s in p.skipped}  # a path may be looked at twice in one scan
        return Snapshot(tree, tuple(sorted(once.values(), key=lambda s: s.path)))

    def _rel(self, path: str) -> str:
        return path[len(self.prefix) + 1:] if self.prefix else path

    # -- the scan ------------------------------------------------------------------------------

    def _visit(self, p: ScanPass, delta: pygit2.DiffDelta, progress: Progress | None) -> str:
        """Bring the index up to date for one reported path; returns the path."""
        status = delta.status
        side = delta.old_file if status == DeltaStatus.DELETED else delta.new_file
        path = os.fsdecode(side.raw_path).rstrip("/")
        rel = path[len(self.prefix) + 1:] if self.prefix else path
        if progress:
            progress(rel)
        name = path.rsplit("/", 1)[-1]
        if name == ".gitignore":
            p.refilter.add(path.rpartition("/")[0])
        if status == DeltaStatus.DELETED:
            p.remove(path)
            p.attributes.discard(path)
            if _behind_a_locked_folder(os.path.join(self.workdir, path)):
                p.skip(rel, "unreadable")  # not gone: a folder above it cannot be entered
        elif status == DeltaStatus.UNREADABLE:
            p.remove(path)
            p.skip(rel, "unreadable")
        else:
            self._take(p, path, rel)
        if name == ".gitattributes":
            if status != DeltaStatus.DELETED and path in p.index:
                p.attributes.add(path)
            p.renormalize.add(path.rpartition("/")[0])
        return path

    def _take(self, p: ScanPass, path: str, rel: str) -> None:
        """Put the current state of `path` into the index, or leave it out and say why."""
        full = os.path.join(self.workdir, path)
        try:
            st = lstat(full)
        except PermissionError:  # a folder above it cannot be entered
            p.remove(path)
            p.skip(rel, "unreadable")
            return
        reason = p.scope.excluded(rel) or (
            st is not None and stat.S_ISDIR(st.st_mode) and p.scope.excluded(rel + "/"))
        if st is not None and refused_path(os.fsencode(path), mode=st.st_mode):
            reason = "invalid_name"  # libgit2 refuses it in an index (`GIT~1/config`)
        if reason == "invalid_name":
            p.remove(path)
            p.skip(rel, reason, st)
        elif reason:
            p.remove(path)
            if reason == "sensitive" and st:
                p.skip(rel, reason, st)
        elif st is None:
            p.remove(path)
        elif stat.S_ISDIR(st.st_mode):
            self._take_nested(p, path, rel)
        elif not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            p.remove(path)  # fifos, sockets, devices: not content
        elif stat.S_ISREG(st.st_mode) and p.scope.too_large(st.st_size):
            p.remove(path)
            p.skip(rel, "too_large", st)
        else:
            verdict = None if stat.S_ISLNK(st.st_mode) else p.scope.content_verdict(rel)
            oid = file_blob(self.repo, self._pack, path, full, st, p.filters, verdict)
            if oid is SENSITIVE or oid is CHANGING:
                p.remove(path)
                p.skip(rel, "sensitive" if oid is SENSITIVE else "changing", st)
                return
            if oid is None:
                p.remove(path)
                if lstat(full) is not None:
                    p.skip(rel, "unreadable", st)
                return
            if stat.S_ISLNK(st.st_mode):
                mode = Mode.SYMLINK
            else:
                mode = Mode.EXECUTABLE if st.st_mode & 0o100 and p.trust_exec else Mode.FILE
            p.put(path, str(oid), mode, st, racy=p.now - st.st_mtime_ns < RACY_NS)

    def _take_nested(self, p: ScanPass, path: str, rel: str) -> None:
        """A nested repository becomes a gitlink to its HEAD commit, as `git add` makes it."""
        head = nested_head(os.path.join(self.workdir, path))
        if head is None:
            p.remove(path)
            p.gitlinks.discard(path)
            p.skip(rel, "nested_repo")
            return
        p.put(path, head, Mode.GITLINK, None, racy=False)
        p.gitlinks.add(path)

    def _check_gitlinks(self, p: ScanPass) -> None:
        """Nested repositories whose HEAD moved or that vanished (libgit2 skips gitlinks)."""
        for path in sorted(p.gitlinks):
            head = nested_head(os.path.join(self.workdir, path))
            current = p.index[path].id if path in p.index else None
            if head is None:  # no longer a repository: what is there now is plain content
                p.remove(path)
                p.gitlinks.discard(path)
                st = lstat(os.path.join(self.workdir, path))
                if st is not None and stat.S_ISDIR(st.st_mode):
                    self._take_all(p, path)
                elif st is not None:
                    self._take(p, path, self._rel(path))
            elif current is None or str(current) != head:
                p.put(path, head, Mode.GITLINK, None, racy=False)

    def _take_all(self, p: ScanPass, under: str) -> None:
        """Take every file git would add under work-tree folder `under`."""
        for path in self.differ.new_files(p, under):
            self._take(p, path, self._rel(path))

    def _find_new_repos(self, p: ScanPass, dirs: list[str]) -> None:
        """Folders of cached files that became repositories (libgit2 reports nothing)."""
        pending = {k.rpartition("/")[0] for k, v in p.changes.items() if v is not None}
        for d in sorted(set(dirs) | pending):
            if d and d not in p.gitlinks and os.path.lexists(
                    os.path.join(self.workdir, d, ".git")):
                under = d + "/"
                for entry in list(p.index):
                    if entry.path.startswith(under):
                        p.remove(entry.path)
                self._take(p, d, self._rel(d))

    def _renormalize(self, p: ScanPass) -> None:
        """Re-hash cached files under dirs whose .gitattributes changed, as a fresh `git add`
        would filter them (line endings) differently now."""
        unders = tuple(d + "/" if d else "" for d in p.renormalize)
        for entry in list(p.index):
            if entry.path.startswith(unders) and entry.mode in (Mode.FILE, Mode.EXECUTABLE):
                self._take(p, entry.path, self._rel(entry.path))

    def _refilter(self, p: ScanPass) -> None:
        """Drop cached entries that changed rules now leave out, under the dirs `p.refilter`.

        libgit2 lists what git would add under each dir (an untracked scan against an empty
        index); cached entries it does not list are ignored now.
        """
        everything = any(d == self.prefix or not d for d in p.refilter)
        for d in [self.prefix] if everything else sorted(p.refilter):
            listed = set(self.differ.new_files(p, d))
            under = d + "/" if d else ""
            for entry in list(p.index):
                path = entry.path
                if not path.startswith(under):
                    continue
                rel = path[len(self.prefix) + 1:] if self.prefix else path
                gone: bool | Reason | None = path not in listed or p.scope.excluded(rel)
                if not gone and everything and entry.mode != Mode.GITLINK:
                    full = os.path.join(self.workdir, path)
                    st = lstat(full)
                    gone = (st is not None and stat.S_ISREG(st.st_mode)
                            and p.scope.too_large(st.st_size))
                    if gone:
                        p.skip(rel, "too_large", st)
                    elif st is not None and stat.S_ISREG(st.st_mode) and looks_sensitive(
                            full, p.scope.content_verdict(rel)):
                        gone = True  # cached before the content rules knew it
                        p.skip(rel, "sensitive", st)
                if gone:
                    p.remove(path)

    def _publish(self, index: pygit2.Index, base: str | None) -> None:
        """Make this scan's new objects readable before any tree names them. When libgit2 is
        about to write every tree of the index, they go into the pack too (libgit2 writes no
        object that exists), so a first save leaves no loose trees either."""
        if self._pack.streaming and base is None:
            try:
                for body in index_trees(index):
                    self._pack.add("tree", body)
            except ValueError:  # an entry mode git does not write: libgit2 writes them loose
                pass
        if self.hold is not None:  # staging: these very bytes held (libgit2's write through
            for kind, data, oid in self._pack.drain():  # the staging odb copies them twice)
                self.hold.add(oid, kind, data)
        self._pack.close()

def _under(rel: str, changed: set[str]) -> bool:
    """True if `rel` or a folder above it is in `changed`."""
    parts = rel.split("/")
    return any("/".join(parts[:i]) in changed for i in range(1, len(parts) + 1))


def _behind_a_locked_folder(full: str) -> bool:
    """True if a path libgit2 reports deleted lies in a folder that cannot be entered now."""
    try:
        os.lstat(full)
    except PermissionError:
        return True
    except OSError:
        return False
    return False

"""Blobs of work-tree files for the git store: read once, checked for credentials, cleaned as
`git add` cleans them, and written only when the object database lacks them."""

from __future__ import annotations

import os
import stat

import pygit2
from pygit2.enums import FilterMode

from gitckpt.core.errors import StoreNotWritable
from gitckpt.safety.sensitive import content_sensitive
from gitckpt.store.files import FileChanging, read_regular
from gitckpt.store.git.scanpass import lstat
from gitckpt.store.packs.write import PackWriter

# `file_blob`'s answers for a file whose content is a credential, and one that kept changing
SENSITIVE = pygit2.Oid(hex="0" * 40)
CHANGING = pygit2.Oid(hex="0" * 39 + "1")


def file_blob(repo: pygit2.Repository, pack: PackWriter, path: str, full: str,
              st: os.stat_result, filters: bool, verdict: str | None = None
              ) -> pygit2.Oid | None:
    """The blob of work-tree file or link `path` (at `full`, of stat `st`): None if it cannot
    be read, SENSITIVE if its content is a credential (see `sensitive.content_sensitive`),
    CHANGING if it never held still; written only when the object database lacks it.

    Hashing first avoids creating a temp file per already-known object, which dominates a
    first save in an existing repository. A failure to write is the store's problem, not
    the file's, and is raised.
    """
    odb = repo.odb
    try:
        if stat.S_ISLNK(st.st_mode):
            data = os.readlink(os.fsencode(full))
            oid = pygit2.hash(data)
        else:
            data = read_regular(full)  # one read: the content check and the hash
            if verdict is not None and content_sensitive(data, verdict):
                return SENSITIVE
            if filters:  # as `git add` cleans it (line endings, ident), from this read
                # (bytes: libgit2 takes a name that is not UTF-8 so; the stubs say str)
                name = path.encode("utf-8", "surrogateescape")
                cleaning = repo.load_filter_list(name, FilterMode.TO_ODB)  # type: ignore[arg-type]
                if cleaning is not None:
                    data = cleaning.apply_to_buffer(data)
            oid = pygit2.hash(data)
    except FileChanging:
        return CHANGING
    except (pygit2.GitError, OSError):
        return None
    if oid in pack or oid in odb:
        return oid
    try:
        return pygit2.Oid(hex=pack.add("blob", data, str(oid)))
    except (pygit2.GitError, OSError) as e:
        if lstat(full) is None:
            return None  # vanished after hashing
        raise StoreNotWritable(f"Cannot write to the repository's objects: {e}.",
                               "Check free space and the permissions of the .git folder."
                               ) from e


def looks_sensitive(full: str, verdict: str | None) -> bool:
    """True if the file's content is a credential by the content rule `verdict`."""
    if verdict not in ("content", "key"):
        return False  # a private key block in any other file is found when it next changes
    try:
        return content_sensitive(read_regular(full), verdict) is not None
    except OSError:
        return False

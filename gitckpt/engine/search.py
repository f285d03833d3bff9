"""Search across every task of a store (fetched and imported ones too): an SQLite FTS5 index of
the notes' words, a cache in the store's shared state that is never the source of truth.

The index is brought up to date when it is read: the task refs it was built from (each head
and drifts/<n>) are compared with the store's, and only the commits a moved ref reaches that
it has not seen are read; a ref that went away (compress, a deleted task), a missing, damaged
or other-version index is rebuilt from the notes. A save also adds its step at once, under the
store's lock, where an index exists and no search is writing it. Writes are SQLite
transactions (WAL): a killed update leaves the index as it was before it, or as after it.

Tokens: FTS5's unicode61, diacritics folded, case folded; a word is a run of letters and
digits, so `parse_config` is the two words `parse` and `config` (and the query `parse_config`
the phrase of both). An identifier in camel case (`parseConfig`) is one word `parseconfig`,
unless the query asks for `split`: then its parts (`parse`, `config`) match too."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.shape import Shaped
from gitckpt.engine.notes import Note
from gitckpt.store.notes import NOTES_REF

if TYPE_CHECKING:
    import sqlite3

    from gitckpt.engine.timeline import Timeline
    from gitckpt.store.base import Store

#: The index's own format; another is rebuilt.
VERSION = "1"
FILE = "search.sqlite"
#: What a hit can be, as `--kind` names it.
KINDS = ("title", "conclusion", "next", "description", "verified", "decision", "gotcha",
         "question", "answered", "dropped", "command", "file", "prompt", "tool", "goal")
REF_ROOT = "refs/checkpoints/"  # the timeline's (engine/timeline imports this module)
_REF = re.compile(r"([^/]+)/(head|drifts/[0-9]+)")
#: A camel-case identifier: from a word's first letter, lower case or digits, then a capital,
#: to the word's end. Linear in its input: a match starts only where a word does (a start
#: inside a long run of lower case would scan the run again from each of its letters: a note
#: fetched from elsewhere with a megabyte of it took minutes), and nothing is given back.
_CAMEL = re.compile(r"(?<![A-Za-z0-9])[0-9]*+([A-Za-z][a-z0-9]*+[A-Z][A-Za-z0-9]*+)")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_log = logging.getLogger("gitckpt")


@dataclass(frozen=True)
class Hit(Shaped):
    """One matching field of one checkpoint's note."""

    task: str
    step: int
    label: str  # "step 3", "drift after step 3", ...
    kind: str  # one of KINDS
    commit: str
    at: str  # the checkpoint's created_at
    text: str  # a snippet of the field around its matches
    matched: list[str]  # the words of it that matched, as written there


@dataclass(frozen=True)
class SearchResult(Shaped):
    """The best hits first (BM25), and what the index held when it answered."""

    query: str
    hits: list[Hit]
    more: bool  # hits past the limit were left out
    indexed: int  # checkpoints the index holds
    rebuilt: bool = False  # the index was (re)built from the notes for this answer
    added: int = 0  # checkpoints it read for this answer, catching up


def path(store: Store) -> Path:
    return store.shared.path / FILE


def _connect(db: Path, timeout: float = 30) -> sqlite3.Connection:
    """`timeout`: how long a writer waits for another (a search building the index)."""
    import sqlite3

    con = sqlite3.connect(str(db), timeout=timeout, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")  # a cache: integrity, not durability
    return con


def _create(con: sqlite3.Connection) -> None:
    con.executescript(f"""
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE tips(ref TEXT PRIMARY KEY, oid TEXT NOT NULL);
        CREATE TABLE seen(oid TEXT PRIMARY KEY);
        CREATE VIRTUAL TABLE hits USING fts5(text, parts, task UNINDEXED, step UNINDEXED,
            label UNINDEXED, kind UNINDEXED, oid UNINDEXED, at UNINDEXED,
            tokenize = "unicode61 remove_diacritics 2");
        INSERT INTO meta VALUES ('version', '{VERSION}');
    """)


@contextlib.contextmanager
def _opened(store: Store, create: bool, timeout: float = 30
            ) -> Iterator[tuple[sqlite3.Connection | None, bool]]:
    """The index (None where it does not exist and `create` is False), and whether it was
    made anew: a damaged one, or one of another version, is removed and made again."""
    db = path(store)
    if not db.exists() and not create:
        yield None, False
        return
    if create:
        store.shared.ensure()
    con = None
    # one opener at a time makes, checks or replaces the file (parallel first searches)
    opening = store.shared.locked("search.lock", 30) if create else contextlib.nullcontext()
    try:
        with opening:
            con, made = _checked(store, db, create, not db.exists(), timeout)
        if con is None:
            yield None, False
            return
        yield con, made
    finally:
        if con is not None:
            con.close()


def _checked(store: Store, db: Path, create: bool, made: bool, timeout: float
             ) -> tuple[sqlite3.Connection | None, bool]:
    import sqlite3

    con: sqlite3.Connection | None = None
    try:
        try:
            con = _connect(db, timeout)
            if made:
                _create(con)
            else:
                row = con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                if row is None or row[0] != VERSION:
                    raise sqlite3.DatabaseError(f"index version {row and row[0]!r}")
        except sqlite3.DatabaseError as e:
            if con is not None:
                con.close()
                con = None
            if not create:
                return None, False
            _log.info("the search index is rebuilt: %s", e)
            remove(store)
            con = _connect(db)
            _create(con)
            made = True
        return con, made
    except BaseException:
        if con is not None:
            con.close()
        raise


def remove(store: Store) -> None:
    """The index's files gone (it is rebuilt when next read)."""
    import shutil

    for suffix in ("", "-wal", "-shm"):
        name = str(path(store)) + suffix
        if os.path.isdir(name) and not os.path.islink(name):
            shutil.rmtree(name)  # in gitckpt's own folder: nobody else's
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


# -- what a note says -------------------------------------------------------------------------


#: One index row: (text, parts, task, step, label, kind, oid, at).
Row = tuple[str, str, str, int, str, str, ObjectId, str]


def rows(note: Note, oid: ObjectId, label: str) -> list[Row]:
    """The index rows of one checkpoint's note: (text, parts, task, step, label, kind, oid,
    at), one per field value."""
    out: list[tuple[str, str]] = []

    def add(kind: str, text: Any) -> None:
        if isinstance(text, str) and text.strip():
            out.append((kind, text))

    for kind in ("title", "conclusion", "next", "description"):
        add(kind, getattr(note, kind))
    for kind, values in (("verified", note.verified), ("decision", note.decisions),
                         ("gotcha", note.gotchas), ("question", note.open_questions),
                         ("answered", note.answered), ("dropped", note.dropped)):
        for v in values:
            add(kind, v)
    for c in note.commands:
        add("command", f"{c.get('command', '')} (exit {c.get('exit_code')})"
            + (f": {c['note']}" if c.get("note") else ""))
    for f in note.files:
        add("file", f"{f.get('path', '')}" + (f": {f['note']}" if f.get("note") else ""))
    for p in note.prompts:
        add("prompt", p.get("text"))
    if note.tool:
        add("tool", " ".join(str(note.tool[k]) for k in ("name", "command") if note.tool.get(k)))
    for kind, value in (("goal", note.name), ("goal", note.goal), ("goal", note.constraints)):
        add(kind, value)
    return [(text, parts(text), note.task, note.step, label, kind, oid, note.created_at)
            for kind, text in out]


def parts(text: str) -> str:
    """The parts of the camel-case identifiers in `text` ("parseConfig" -> "parse Config")."""
    return " ".join(" ".join(_PART.findall(w)) for w in _CAMEL.findall(text))


def _label(note: Note) -> str:
    if note.kind in ("init", "step", "import"):
        return f"step {note.step}"
    return f"{'restore' if note.kind == 'restore' else 'drift'} after step {note.step}"


# -- keeping it up to date --------------------------------------------------------------------


def _tips(store: Store) -> dict[str, ObjectId]:
    return {name: oid for name, oid in store.list_refs(REF_ROOT).items()
            if _REF.fullmatch(name[len(REF_ROOT):])}


def _sync(tl: Timeline, con: sqlite3.Connection) -> int:
    """Bring the index up to the store's refs (the caller's transaction); the checkpoints
    read. A ref gone, or moved to a commit that does not reach where it was, rebuilds."""
    store = tl.store
    # Every checkpoint comes with its note, and compress takes notes away: where the notes
    # are as the index last saw them, so are the checkpoints (no listing of every ref).
    notes = store.get_ref(NOTES_REF) or ""
    seen = con.execute("SELECT value FROM meta WHERE key = 'notes'").fetchone()
    if seen is not None and seen[0] == notes:
        return 0
    now = _tips(store)
    old = dict(con.execute("SELECT ref, oid FROM tips").fetchall())
    if any(r not in now for r in old):
        con.execute("DELETE FROM hits")
        con.execute("DELETE FROM seen")
        con.execute("DELETE FROM tips")
        old = {}
    moved = [oid for r, oid in now.items() if old.get(r) != oid]
    added = 0
    # The notes as they are after the refs were read: a save writes its note before it
    # moves its ref, so every tip read above has its note in these.
    notes = store.get_ref(NOTES_REF) or ""
    read_note = _notes(store, notes or None)
    stack = list(moved)
    whole = True
    while stack:
        oid = stack.pop()
        if con.execute("SELECT 1 FROM seen WHERE oid = ?", (oid,)).fetchone():
            continue
        text = read_note(oid)
        if text is None:  # not yet (another writer's): read again next time, tips unmoved
            whole = False
        else:
            con.execute("INSERT INTO seen VALUES (?)", (oid,))
            note = Note.parse(text, oid)
            con.executemany("INSERT INTO hits VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            rows(note, oid, _label(note)))
            added += 1
        stack.extend(store.read_commit(oid).parents)
    if whole:
        con.executemany("INSERT OR REPLACE INTO tips VALUES (?, ?)",
                        [(r, o) for r, o in now.items() if old.get(r) != o])
        con.execute("INSERT OR REPLACE INTO meta VALUES ('notes', ?)", (notes,))
    return added


def _notes(store: Store, head: str | None) -> Callable[[ObjectId], str | None]:
    """The notes of commit `head` of the notes ref, by commit: each fan-out tree decoded once
    (store.read_note decodes one for each note; a first build reads tens of thousands)."""
    from gitckpt.core.objects import Mode

    root = {e.name: e for e in store.read_tree(store.read_commit(ObjectId(head)).tree)} \
        if head else {}
    fans: dict[bytes, dict[bytes, ObjectId]] = {}

    def read(oid: ObjectId) -> str | None:
        key = oid[:2].encode()
        if key not in fans:
            fan = root.get(key)
            fans[key] = {e.name: e.id for e in store.read_tree(fan.id)} \
                if fan is not None and fan.mode == Mode.TREE else {}
        blob = fans[key].get(oid[2:].encode())
        if blob is None:  # a flat entry (another writer's), as read_note reads it
            flat = root.get(oid.encode())
            blob = flat.id if flat is not None else None
        return None if blob is None else store.read_blob(blob).decode("utf-8", "replace")

    return read


def saved(store: Store, task: TaskId, head_ref: str, commit: ObjectId, note: Note) -> None:
    """A save's step, added to an index that exists (under the store's lock; its parent, the
    head before, is indexed or the next read catches up). Never fails the save."""
    import sqlite3

    try:
        # a search building the index holds its writer: the save does not wait for it
        with _opened(store, create=False, timeout=0.05) as (con, _):
            if con is None:
                return
            con.execute("BEGIN IMMEDIATE")
            parent = store.read_commit(commit).parents
            known = con.execute("SELECT oid FROM tips WHERE ref = ?", (head_ref,)).fetchone()
            if known is not None and parent and known[0] == parent[0]:
                con.execute("INSERT OR IGNORE INTO seen VALUES (?)", (commit,))
                con.executemany("INSERT INTO hits VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                rows(note, commit, _label(note)))
                con.execute("INSERT OR REPLACE INTO tips VALUES (?, ?)", (head_ref, commit))
                # the notes moved by this save's note alone: the index is as current as before
                tip = store.get_ref(NOTES_REF)
                was = con.execute("SELECT value FROM meta WHERE key = 'notes'").fetchone()
                if tip is not None and was is not None \
                        and list(store.read_commit(tip).parents[:1]) == [was[0]]:
                    con.execute("UPDATE meta SET value = ? WHERE key = 'notes'", (tip,))
            con.execute("COMMIT")
    except (sqlite3.Error, OSError) as e:
        _log.info("the search index was not updated (the next search catches up): %s", e)


# -- reading it -------------------------------------------------------------------------------


def _match(query: str, split: bool) -> str:
    """The FTS5 expression of a user's query: each word (or "quoted phrase") must occur, a
    word ending in * as a prefix; FTS5's own syntax is not exposed (a stray quote or colon
    in a query is a word, never an error)."""
    terms = []
    for phrase, word, star in re.findall(r'"([^"]*)"|([\w][\w.\-/]*)(\*?)', query):
        text = phrase or word
        words = re.findall(r"\w+", text)
        if not words:
            continue
        term = '"' + " ".join(words) + '"' + ("*" if star and not phrase else "")
        terms.append(term)
    if not terms:
        raise InvalidArgument(f"The query {query[:80]!r} has no words to look for.",
                              "Search for words, e.g. gitckpt search retry timeout.")
    columns = "{text parts}" if split else "text"
    return f"{columns} : ({' AND '.join(terms)})"


def search(tl: Timeline, query: str, *, task: str | None = None,
           kinds: list[str] | None = None, since: str | None = None, limit: int = 20,
           split: bool = False) -> SearchResult:
    """The checkpoints' note fields that hold every word of `query`, best first (BM25, the
    newest first among equals), of `task` only, of the `kinds` given, or since the
    rfc3339 time `since`; at most `limit`."""
    import sqlite3

    for k in kinds or []:
        if k not in KINDS:
            raise InvalidArgument(f"There is no kind {k!r} to search.",
                                  f"Kinds: {', '.join(KINDS)}.")
    if not 1 <= limit <= 1000:
        raise InvalidArgument("limit must be 1 to 1000.", "For example --limit 20.")
    expression = _match(query, split)
    where, args = ["hits MATCH ?"], [expression]
    if task is not None:  # an id no task has is refused, as why, blame and report do
        where.append("task = ?")
        args.append(str(tl.resolve(task)))
    if kinds:
        where.append(f"kind IN ({', '.join('?' * len(kinds))})")
        args += kinds
    if since is not None:
        where.append("at >= ?")
        args.append(since)
    # No notes, no checkpoint (and no store at all: nothing is made for a search). One ref
    # read, not a listing of every task's refs, which the index exists to spare.
    try:
        if tl.store.get_ref(NOTES_REF) is None:
            return SearchResult(query, [], False, 0)
    except OSError:
        return SearchResult(query, [], False, 0)
    try:
        return _search(tl, query, expression, where, args, limit)
    except sqlite3.DatabaseError as e:  # a table damaged past what opening checks
        _log.info("the search index is rebuilt: %s", e)
        with tl.store.shared.locked("search.lock", 30):
            remove(tl.store)
        return _search(tl, query, expression, where, args, limit)


def _search(tl: Timeline, query: str, expression: str, where: list[str], args: list[str],
            limit: int) -> SearchResult:
    import sqlite3

    with _opened(tl.store, create=True) as (con, made):
        assert con is not None
        # Not under the store's lock (a first build reads every note, and saves must not wait
        # for it): the tips are read first and the commits they reach never change; a ref
        # that moves meanwhile is caught up by the next search. SQLite serialises writers.
        con.execute("BEGIN IMMEDIATE")
        try:
            added = _sync(tl, con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        try:
            found = con.execute(
                "SELECT task, step, label, kind, oid, at, "
                "snippet(hits, 0, char(2), char(3), '…', 16) FROM hits WHERE "
                + " AND ".join(where) + " ORDER BY bm25(hits, 1.0, 0.5), at DESC LIMIT ?",
                [*args, limit + 1]).fetchall()
        except sqlite3.OperationalError as e:  # a query FTS5 cannot read after all
            raise InvalidArgument(f"The query {query[:80]!r} cannot be searched: {e}.",
                                  "Search for plain words.") from e
        indexed = con.execute("SELECT count(*) FROM seen").fetchone()[0]
    hits = [Hit(t, int(s), lab, k, o, a, snip.replace("\x02", "").replace("\x03", ""),
                list(dict.fromkeys(re.findall("\x02(.*?)\x03", snip))))
            for t, s, lab, k, o, a, snip in found[:limit]]
    return SearchResult(query, hits, len(found) > limit, indexed, made, added)


def check(store: Store) -> str | None:
    """What is wrong with the index (for doctor), or None: missing is fine (built on use)."""
    import sqlite3

    db = path(store)
    if not db.exists():
        return None
    try:
        con = _connect(db)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None or row[0] != VERSION:
                return f"it is of version {row and row[0]!r}, not {VERSION}"
            ok = con.execute("PRAGMA quick_check").fetchone()[0]
            if ok != "ok":
                return str(ok)
            for table in ("meta", "tips", "seen", "hits"):
                con.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall()
            return None
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        return str(e)

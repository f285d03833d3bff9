"""SKILL.md, the agent-facing contract, as shipped inside the package (or the source tree)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gitckpt.core.errors import InternalError, InvalidArgument

NAME = "SKILL.md"


def skill_path() -> Path:
    """Where SKILL.md is: package data in an installed wheel, the repository's top level in
    a source checkout (an editable install)."""
    packaged = resources.files("gitckpt") / NAME
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[2] / NAME
    if source.is_file():
        return source
    raise InternalError(f"{NAME} is missing from the gitckpt package")


def skill_text() -> str:
    return skill_path().read_text(encoding="utf-8")


def install(folder: str | Path, force: bool = False) -> Path:
    """Write SKILL.md into `folder` (created if missing); an existing file needs `force`."""
    target = Path(folder).expanduser() / NAME
    if target.exists() and not force:
        raise InvalidArgument(f"{target} exists already.", "Pass --force to overwrite it.")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(skill_text(), encoding="utf-8")
    except OSError as e:
        raise InvalidArgument(f"Cannot write {target}: {e.strerror}.",
                              "Choose a folder you can write to.") from e
    return target

"""The documentation holds together: README.md stays short, every relative link in it and in
docs/ reaches an existing file (and heading), and no page names a tracker number."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX = 12_000  # bytes: a newcomer reads the README in five minutes; the rest is in docs/
PAGES = ["concepts", "cli", "mcp", "hosts", "safety", "remotes", "format", "limits",
         "development", "architecture"]
TRACKER = re.compile(r"issue\s*#?\d+", re.I)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose(path: Path) -> list[str]:
    """The lines of `path` outside fenced code blocks, with inline code removed (a link
    spelled inside backticks is an example, not a link)."""
    lines, fenced = [], False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for the headings of `path`: lower case, punctuation other
    than `-` and `_` dropped, spaces as `-`, a repeated heading suffixed -1, -2, ..."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6} +(.*?) *#* *$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m[1].replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_readme_is_short_and_keeps_what_tools_read():
    readme = ROOT / "README.md"
    assert readme.stat().st_size <= README_MAX, f"README.md is {readme.stat().st_size} bytes"
    text = readme.read_text()
    assert "<!-- mcp-name: io.github.gitckpt/gitckpt -->" in text  # the MCP registry's check
    for page in PAGES:
        assert f"(docs/{page}.md" in text, f"README.md links docs/{page}.md"
    assert "(bench/RESULTS.md)" in text


def test_every_page_exists_and_opens_with_a_summary():
    for page in PAGES:
        path = ROOT / "docs" / f"{page}.md"
        assert path.is_file(), path
        blocks = path.read_text().split("\n\n")
        assert blocks[0].startswith("# "), f"{page}.md starts with its title"
        summary = blocks[1]
        first = f"{page}.md: a paragraph that says what the page covers comes first"
        assert not summary.startswith(("#", "|", "-", "```")), first
        assert len(summary) >= 200, first


def test_every_relative_link_reaches_a_file_and_its_heading():
    broken = []
    for path in docs():
        for line in prose(path):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                if not dest.exists():
                    broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("path", [*docs(), ROOT / "bench" / "RESULTS.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_names_a_tracker_number(path):
    """Docs name features, not tracker numbers; bench/RESULTS.md keeps numbers out of its
    headings (its runs are named by date and by what they measured)."""
    lines = path.read_text().splitlines()
    if path.name == "RESULTS.md":
        lines = [x for x in lines if x.startswith("#")]
    hits = [x for x in lines if TRACKER.search(x)]
    assert not hits, hits


def test_the_cli_reference_is_what_the_commands_say():
    """docs/cli.md's command section is generated from click: a changed option or help text
    is a changed page (`python -m gitckpt.cli.reference docs/cli.md` writes it)."""
    from gitckpt.cli.reference import rewrite

    page = (ROOT / "docs" / "cli.md").read_text()
    assert rewrite(page) == page, "run: python -m gitckpt.cli.reference docs/cli.md"


def test_the_man_page_is_what_the_commands_say():
    """man/git-ckpt.1 (the wheel's share/man/man1/git-ckpt.1, which `git ckpt --help` opens)
    is generated from click like the reference page."""
    from gitckpt.cli.reference import MAN, man_page

    assert (ROOT / MAN).read_text() == man_page(), \
        "run: python -m gitckpt.cli.reference man/git-ckpt.1"


def test_the_mcp_pages_figures_are_the_servers():
    """docs/mcp.md's tool counts and the size of what every session loads first, read out of
    the page and compared with the server (a figure in the docs that no test reads drifts)."""
    import json
    import re

    from gitckpt.mcp.handshake import INSTRUCTIONS
    from gitckpt.mcp.handshake import TOOLS as SHIPPED
    from gitckpt.mcp.server import TOOLS

    page = (ROOT / "docs" / "mcp.md").read_text()
    words = {"nine": 9, "sixteen": 16}
    m = re.search(r"(\w+) tools whose parameters follow the CLI, (\w+) of them listed", page)
    assert m, "the page's opening no longer says how many tools"
    listed = json.loads(SHIPPED.read_text())
    assert (words[m[1]], words[m[2]]) == (len(TOOLS), len(listed))
    size = len(INSTRUCTIONS) + sum(len(json.dumps(
        {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]},
        separators=(",", ":"))) for t in listed)
    said = re.search(r"are ([\d,]+) characters \(compact JSON", page)
    assert said, "the page no longer says what every session loads first"
    assert int(said[1].replace(",", "")) == size


def test_every_figure_of_the_readmes_performance_table_is_a_recorded_one():
    """Each figure of README.md's performance table (ms, s, MiB, %) is one of bench/RESULTS.md,
    the record of the interleaved runs that made them (rounded as printed, in either unit of
    time): a figure typed without a run behind it, or left behind by a new run, fails."""
    import re

    readme = (ROOT / "README.md").read_text()
    results = (ROOT / "bench" / "RESULTS.md").read_text()
    table = readme[readme.index("## Performance"):readme.index("## Documentation")]
    recorded = [float(x.replace(",", ""))
                for x in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", results)]
    scales = {"ms": (1, 1000), "s": (1, 0.001), "MiB": (1,), "%": (1,)}
    number = r"\d[\d,]*(?:\.\d+)?"
    checked, unrecorded = 0, []
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith("| at"):
            continue
        cells = "|".join(row.split("|")[2:])  # the figures, not the row's own description
        for m in re.finditer(rf"({number}(?: / {number})*)\s?(ms|s|MiB|%)(?!\w)", cells):
            for said in re.findall(number, m[1]):
                places = len(said.partition(".")[2])
                rounded = {round(y * k, places) for y in recorded for k in scales[m[2]]}
                checked += 1
                if round(float(said.replace(",", "")), places) not in rounded:
                    unrecorded.append(f"{said} {m[2]} ({row[2:50]})")
    assert checked >= 20  # the table is still read
    assert unrecorded == [], unrecorded


def test_the_size_limits_the_docs_state_are_the_codes():
    """The limits docs/limits.md, README.md, docs/format.md and docs/hosts.md state, read out of
    their sentences and compared with core/limits.py and the file-size default."""
    import re

    from gitckpt.core import limits
    from gitckpt.safety.scope import DEFAULT_MAX_FILE_SIZE

    def said(page: str, pattern: str) -> list[int]:
        m = re.search(pattern, (ROOT / page).read_text().replace("\n", " "))
        assert m, f"{page} no longer says {pattern!r}"
        return [int(g.replace(",", "")) for g in m.groups()]

    assert said("docs/limits.md", r"plan item ([\d,]+) characters; a conclusion, next, "
                r"description, goal or constraints ([\d,]+); a list \(verified, open questions, "
                r"decisions\) ([\d,]+) entries of ([\d,]+) characters; a plan ([\d,]+) items; "
                r"([\d,]+) exclude patterns; and at most ([\d,]+) KiB") == [
        limits.TITLE, limits.TEXT, limits.ITEMS, limits.ITEM, limits.PLAN, limits.PATTERNS,
        limits.NOTE // 1024]
    assert said("docs/limits.md", r"GITCKPT_MAX_FILE_SIZE` \(default ([\d,]+) MiB\)") == [
        DEFAULT_MAX_FILE_SIZE >> 20]
    for page in ("README.md", "docs/hosts.md"):
        assert said(page, r"cut to ([\d,]+) characters") == [limits.PROMPT], page
    assert said("docs/format.md", r"cut to ([\d,]+) characters \(at most ([\d,]+) per step\)") \
        == [limits.PROMPT, limits.PROMPTS]
    for page in ("README.md", "docs/cli.md", "docs/concepts.md"):
        assert said(page, r"([\d,]+) KiB a session") == [limits.TRANSCRIPT >> 10], page

"""Every link and repository path in the docs resolves inside the repository (issue 41).

Checked files: README.md, docs/**/*.md and bench/**/*.md. Checked references:

- relative Markdown links `[text](target)` and `[text](target#anchor)`: the target exists,
  lies inside the repository, and a `#anchor` into a Markdown file names one of its
  headings (GitHub's slug rule); `http(s)://` and `mailto:` links are not followed;
- repository paths named in the text (`agent/services/memory/recall.py`, `bench/results/x.md`,
  `tests/faults`, a glob such as `bench/results/poison-*.md`): they exist (a glob matches
  something). A path followed by a placeholder (`bench/results/loop-<date>.md`) is a
  pattern, not a reference, and is not checked;
- nothing points outside the repository: no link that leaves it, no `../shared` or
  absolute path to the design documents (seeds are cited by name, "seed 001 §8.2").
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# top-level directories and files a doc may name as a path
_TOP = ("agent", "bench", "config", "docs", "migrations", "night_cycle", "tests", r"\.ci")
_TOP_FILES = ("pyproject.toml", "docker-compose.yml", "Dockerfile", "alembic.ini", "README.md")
_PATH = re.compile(
    r"(?<![\w/.~$-])((?:" + "|".join(_TOP) + r")/[\w./*-]*)"
)
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
_OUTSIDE = re.compile(r"\.\./shared|/work/shared|(?<![\w.])ARCHITECTURE\.md")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def doc_files(root: Path = ROOT) -> list[Path]:
    files = [root / "README.md"]
    files += sorted((root / "docs").rglob("*.md"))
    files += sorted((root / "bench").rglob("*.md"))
    return [f for f in files if f.is_file()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    in_fence = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match:
            base = slug(match.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def _inside(target: Path, root: Path) -> bool:
    try:
        target.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def check_file(path: Path, root: Path = ROOT) -> list[str]:
    """The problems of one doc file, one line each ("FILE:LINE: what")."""
    problems: list[str] = []
    rel = path.relative_to(root)
    text = path.read_text()
    for lineno, line in enumerate(text.splitlines(), 1):
        where = f"{rel}:{lineno}"
        if _OUTSIDE.search(line):
            problems.append(f"{where}: refers outside the repository: {line.strip()[:80]}")
        link_spans = []
        for match in _LINK.finditer(line):
            target = match.group(1)
            link_spans.append(match.span(1))
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part) if file_part else path
            if file_part.startswith("/") or not _inside(dest, root):
                problems.append(f"{where}: link leaves the repository: {target}")
                continue
            if not dest.exists():
                problems.append(f"{where}: broken link: {target}")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
        for match in _PATH.finditer(line):
            if any(start <= match.start() < end for start, end in link_spans):
                continue  # a link's target, checked above
            ref = match.group(1).rstrip(".,;:")
            after = line[match.end():match.end() + 1]
            if after in ("<", "{") or ref.endswith(("-", "_")):
                continue  # a pattern with a placeholder, not a file
            if "*" in ref:
                if not any(root.glob(ref)):
                    problems.append(f"{where}: no file matches {ref}")
            elif not (root / ref).exists():
                problems.append(f"{where}: no such path in the repository: {ref}")
        for name in _TOP_FILES:
            named = re.search(r"(?<![\w/.-])" + re.escape(name) + r"(?![\w-])", line)
            if named and not (root / name).exists():
                problems.append(f"{where}: no such file: {name}")
    return problems


def test_every_doc_link_and_path_resolves_inside_the_repository() -> None:
    files = doc_files()
    assert ROOT / "README.md" in files and any(f.parent.name == "docs" for f in files)
    problems = [p for f in files for p in check_file(f)]
    assert problems == [], "\n".join(problems)


def _repo(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "recall.py").write_text("")
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Recall, in short\n\ntext\n")
    return tmp_path


def test_good_links_and_paths_pass(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    readme = root / "README.md"
    readme.write_text(
        "See [the guide](docs/guide.md#recall-in-short), [top](#top-section) and\n"
        "`agent/recall.py`, `agent/*.py`, bench/results/loop-<date>.md and\n"
        "[a site](https://example.org).\n\n## Top section\n")
    assert check_file(readme, root) == []


def test_a_broken_link_fails(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    readme = root / "README.md"
    readme.write_text("See [the guide](docs/gide.md).\n")
    assert check_file(readme, root) == ["README.md:1: broken link: docs/gide.md"]


def test_a_missing_anchor_fails(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    readme = root / "README.md"
    readme.write_text("See [recall](docs/guide.md#forgetting).\n")
    assert check_file(readme, root) == [
        "README.md:1: no heading #forgetting in docs/guide.md"]


def test_a_missing_repository_path_fails(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    guide = root / "docs" / "guide.md"
    guide.write_text("The code is in `agent/forget.py`; reports in agent/*.txt.\n")
    assert check_file(guide, root) == [
        "docs/guide.md:1: no such path in the repository: agent/forget.py",
        "docs/guide.md:1: no file matches agent/*.txt"]


def test_a_link_outside_the_repository_fails(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "seed.md").write_text("x")
    guide = root / "docs" / "guide.md"
    guide.write_text("From [the seed](../../shared/seed.md) and [x](/etc/passwd).\n")
    problems = check_file(guide, root)
    assert any("link leaves the repository: ../../shared/seed.md" in p for p in problems)
    assert any("link leaves the repository: /etc/passwd" in p for p in problems)
    assert any("refers outside the repository" in p for p in problems)

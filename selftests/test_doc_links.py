"""Every relative link of README.md and docs/*.md resolves, and every page of docs/ can be reached.

A link ``[text](target)`` (an image too) whose target has no scheme (``https:``, ``mailto:``, ...) is
relative to the file that holds it: the file it names must exist (a Markdown page, a code file such as
``../src/petstore_contract/interface/clauses.toml``, a folder, an image), inside the repository, and an
``#anchor`` must be a heading of the Markdown file it points into (the same file when the target is
only ``#anchor``; into a code file, only GitHub's line anchors ``#L<n>``).  Heading anchors are
GitHub's: lower case, punctuation other than ``-`` and ``_`` dropped, each space a hyphen, a repeated
anchor suffixed ``-1``, ``-2``, ...  Links inside code blocks and code spans are text, not links.  A
failure lists every broken link with its file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

# [text](target) and ![alt](target), the text holding at most one level of brackets; an optional title.
INLINE = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target (a reference definition), at the start of a line.
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`)(?:(?!\n[ \t]*\n).)*?(?<!`)\1(?!`)", re.DOTALL)  # within a paragraph
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L\d+(?:-L\d+)?$")
HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*\s)?(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)


@dataclass(frozen=True)
class Link:
    page: Path
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: ({self.target})"


def _blank(match: re.Match[str]) -> str:
    """Code keeps its line breaks (so line numbers hold) and loses everything else."""
    return re.sub(r"[^\n]", " ", match[0])


def prose(text: str) -> str:
    """The text with fenced code blocks and code spans blanked out: what Markdown renders as links."""
    return CODE_SPAN.sub(_blank, FENCE.sub(_blank, text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link (or an image) keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags are dropped
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors a Markdown file offers: its headings' slugs (repeats numbered) and HTML ids."""
    text = FENCE.sub(_blank, path.read_text(encoding="utf-8"))
    found: set[str] = set(HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for line in text.splitlines():
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading[1])
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return frozenset(found)


def links(page: Path) -> list[Link]:
    """The relative links of a page, each with its line; links with a scheme are not checked."""
    text = prose(page.read_text(encoding="utf-8"))
    found = []
    for pattern in (INLINE, DEFINITION):
        for match in pattern.finditer(text):
            target = match[1]
            if not SCHEME.match(target) and not target.startswith("//"):
                found.append(Link(page, text.count("\n", 0, match.start()) + 1, target))
    return sorted(found, key=lambda link: link.line)


def broken(link: Link) -> str | None:
    """Why the link does not resolve, or None."""
    file_part, _, anchor = link.target.partition("#")
    resolved = (link.page.parent / file_part).resolve() if file_part else link.page
    if resolved != ROOT and ROOT not in resolved.parents:
        return "outside the repository"
    if not resolved.exists():
        return f"no file {resolved.relative_to(ROOT)}"
    if anchor:
        if resolved.suffix != ".md":
            if LINE_ANCHOR.match(anchor):  # GitHub's line anchors into a code file
                return None
            return f"#{anchor} into {resolved.relative_to(ROOT)}, which is not a Markdown page (only #L<n> is)"
        if anchor not in anchors(resolved):
            return f"no heading #{anchor} in {resolved.relative_to(ROOT)}"
    return None


def test_slugs_are_githubs() -> None:
    assert slug("Two tiers: the fast gate and the whole proof") == "two-tiers-the-fast-gate-and-the-whole-proof"
    assert slug("The suite's own data") == "the-suites-own-data"
    assert slug("Time to a verdict: concurrency") == "time-to-a-verdict-concurrency"
    assert slug("Generated tests (Schemathesis)") == "generated-tests-schemathesis"
    assert slug("`pytest-html` and [its report](reports.md)") == "pytest-html-and-its-report"
    assert slug("snake_case and kebab-case") == "snake_case-and-kebab-case"


def test_repeated_headings_are_numbered(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Notes\n\n## Notes\n\n```\n# Notes\n```\n\n### Notes ###\n", encoding="utf-8")
    assert anchors(page) == {"notes", "notes-1", "notes-2"}


def test_links_in_code_are_not_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[a](a.md) `[b](b.md)`\n```sh\n[c](c.md)\n```\n![d](d.png) [e](https://x.example) [f](#g)\n",
        encoding="utf-8",
    )
    assert [(link.line, link.target) for link in links(page)] == [(1, "a.md"), (5, "d.png"), (5, "#g")]


def test_every_relative_link_resolves() -> None:
    checked = [link for page in PAGES for link in links(page)]
    assert len(checked) >= 60, f"only {len(checked)} relative links found: is the link pattern still right?"
    failures = [f"{link}: {reason}" for link in checked if (reason := broken(link))]
    assert not failures, f"{len(failures)} broken links in README.md and docs/:\n" + "\n".join(failures)


def test_every_page_of_docs_is_reached_from_the_readme() -> None:
    """A page of docs/ is linked from the README, or from a page the README reaches."""
    reached, todo = {README.resolve()}, [README]
    while todo:
        page = todo.pop()
        for link in links(page):
            target = (page.parent / link.target.partition("#")[0]).resolve()
            if target.suffix == ".md" and target.exists() and target not in reached:
                reached.add(target)
                todo.append(target)
    assert [d.name for d in DOCS if d.resolve() not in reached] == [], "pages of docs/ no link leads to"

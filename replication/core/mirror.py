"""How closely the two implementation trees mirror each other, line by line."""

import dataclasses
import difflib
import html
import re

from replication.core.paths import COMMON_TREE, NUMPY_TREE, ROOT, TORCH_TREE
from replication.core.results import write_text_if_changed

LIBRARY_NAMES = re.compile(r"\b(numpy|np|torch|scipy)\b")
"""Library names folded to one token before lines are compared."""


MODEL_FOLDERS = (NUMPY_TREE.name, TORCH_TREE.name, COMMON_TREE.name)
"""The model code's folders: the two trees and what they share (which the mirror, a comparison of the trees, leaves
out)."""


def working_sources(root=ROOT):
    """{path in the repository: source} of the model code's modules (MODEL_FOLDERS) in the working tree."""
    return {f"{tree}/{path.name}": path.read_text(encoding="utf-8")
            for tree in MODEL_FOLDERS for path in sorted((root / tree).glob("*.py"))}


def folded_lines(source):
    """A module's non-blank lines, stripped, with library names folded."""
    return [LIBRARY_NAMES.sub("LIB", line.strip()) for line in source.splitlines() if line.strip()]


def pair(name, sources):
    """(NumPy source, torch source) of a module present in both trees."""
    return sources[f"{NUMPY_TREE.name}/{name}"], sources[f"{TORCH_TREE.name}/{name}"]


def module_names(sources=None):
    """Module files present in both trees (of sources: {path: source}, default the working tree)."""
    sources = working_sources() if sources is None else sources
    names = {tree: {path.split("/", 1)[1] for path in sources if path.startswith(tree + "/")}
             for tree in (NUMPY_TREE.name, TORCH_TREE.name)}
    return sorted(names[NUMPY_TREE.name] & names[TORCH_TREE.name])


def mirror_counts(name, sources=None):
    """(identical lines, lines of the longer side) for one module pair."""
    a, b = (folded_lines(source) for source in pair(name, working_sources() if sources is None else sources))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()), max(len(a), len(b))


def identical_files(name, sources=None):
    """Whether a module is the same text in both trees (no library call differs: such a module belongs in
    oof_common, as constants.py now does; runs made before it was hold some)."""
    a, b = pair(name, working_sources() if sources is None else sources)
    return a == b


@dataclasses.dataclass(frozen=True)
class MirrorRow:
    """One module pair (or "all" of them): its lines alike once the library names are folded, its lines (the longer
    side's), their share."""

    module: str
    same: int
    total: int

    @property
    def share(self) -> float:
        return self.same / self.total


@dataclasses.dataclass(frozen=True)
class Identical:
    """The modules that are the same text in both trees, and their lines."""

    modules: list[str]
    lines: int


def mirror_table(sources=None) -> tuple[list[MirrorRow], MirrorRow, Identical]:
    """One row per module pair that differs, a total row over them, and the byte-identical modules apart; of sources
    ({path: source}: a run's code), by default the working tree."""
    sources = working_sources() if sources is None else sources
    rows, identical, lines = [], [], 0
    for name in module_names(sources):
        same, total = mirror_counts(name, sources)
        if identical_files(name, sources):
            identical.append(name)
            lines += total
        else:
            rows.append(MirrorRow(name, same, total))
    return rows, MirrorRow("all", sum(r.same for r in rows), sum(r.total for r in rows)), Identical(identical, lines)


class NumberedHtmlDiff(difflib.HtmlDiff):
    """difflib's side-by-side table with anchors numbered from `number`, not from a process-wide counter,
    so that the same code always gives the same page."""

    def __init__(self, number, **options):
        super().__init__(**options)
        self.number = number

    def _make_prefix(self):
        self._prefix = [f"from{self.number}_", f"to{self.number}_"]


def side_by_side_html(path, sources=None):
    """Write a difflib side-by-side HTML diff of every module pair (of sources, default the working tree) to path
    (unchanged if already the same)."""
    return write_text_if_changed(path, side_by_side_page(sources))


def side_by_side_page(sources=None):
    """The side-by-side HTML page of every module pair of sources (default the working tree)."""
    sources = working_sources() if sources is None else sources
    parts = []
    for number, name in enumerate(module_names(sources)):
        a, b = (source.splitlines() for source in pair(name, sources))
        table = NumberedHtmlDiff(number, wrapcolumn=100).make_table(a, b, f"numpy: {name}", f"torch: {name}")
        parts.append(f"<h2>{html.escape(name)}</h2>" + table)
    empty = NumberedHtmlDiff(len(parts)).make_file([], [], "", "")
    return empty.replace("<body>", "<body>\n" + "\n".join(parts), 1)

"""How closely the two implementation trees mirror each other, line by line."""

import difflib
import html
import re

from replication.paths import NUMPY_TREE, TORCH_TREE
from replication.results import write_text_if_changed

LIBRARY_NAMES = re.compile(r"\b(numpy|np|torch|scipy)\b")
"""Library names folded to one token before lines are compared."""


def folded_lines(path):
    """The file's non-blank lines, stripped, with library names folded."""
    return [LIBRARY_NAMES.sub("LIB", line.strip()) for line in path.read_text().splitlines() if line.strip()]


def module_names():
    """Module files present in both trees."""
    return sorted({p.name for p in NUMPY_TREE.glob("*.py")} & {p.name for p in TORCH_TREE.glob("*.py")})


def mirror_counts(name):
    """(identical lines, lines of the longer side) for one module pair."""
    a, b = folded_lines(NUMPY_TREE / name), folded_lines(TORCH_TREE / name)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()), max(len(a), len(b))


def identical_files(name):
    """Whether a module is byte for byte the same in both trees (no library call differs: shared by
    construction, like constants.py)."""
    return (NUMPY_TREE / name).read_bytes() == (TORCH_TREE / name).read_bytes()


def mirror_table():
    """One row per module pair that differs (name, identical lines, total lines, share), a total row over them,
    and the byte-identical modules apart: (rows, total, {"modules": [...], "lines": N})."""
    rows, identical = [], {"modules": [], "lines": 0}
    for name in module_names():
        same, total = mirror_counts(name)
        if identical_files(name):
            identical["modules"].append(name)
            identical["lines"] += total
        else:
            rows.append({"module": name, "same": same, "total": total, "share": same / total})
    same, total = sum(r["same"] for r in rows), sum(r["total"] for r in rows)
    return rows, {"module": "all", "same": same, "total": total, "share": same / total}, identical


class NumberedHtmlDiff(difflib.HtmlDiff):
    """difflib's side-by-side table with anchors numbered from `number`, not from a process-wide counter,
    so that the same code always gives the same page."""

    def __init__(self, number, **options):
        super().__init__(**options)
        self.number = number

    def _make_prefix(self):
        self._prefix = [f"from{self.number}_", f"to{self.number}_"]


def side_by_side_html(path):
    """Write a difflib side-by-side HTML diff of every module pair to path (unchanged if already the same)."""
    parts = []
    for number, name in enumerate(module_names()):
        a = (NUMPY_TREE / name).read_text().splitlines()
        b = (TORCH_TREE / name).read_text().splitlines()
        table = NumberedHtmlDiff(number, wrapcolumn=100).make_table(a, b, f"numpy: {name}", f"torch: {name}")
        parts.append(f"<h2>{html.escape(name)}</h2>" + table)
    empty = NumberedHtmlDiff(len(parts)).make_file([], [], "", "")
    page = empty.replace("<body>", "<body>\n" + "\n".join(parts), 1)
    return write_text_if_changed(path, page)

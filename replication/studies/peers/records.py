"""The peers' check (peers/check.json) and its reader."""

from __future__ import annotations

import pathlib

from replication.core.records import MAYBE_NUMBER, load_json
from replication.core.results import check_record

PEERS_CHECK = {"passed": bool, "rows": list}


PEERS_ROW = {"npix": int, "nzern": int, "objective": str, "passed": bool, "objective_error": MAYBE_NUMBER,
             "gradient_error": MAYBE_NUMBER}
"""What the peers' gate (peers/check.json) holds, and each of its rows."""


def read_peers_check(path: pathlib.Path) -> dict | None:
    """The peers' gate (peers/check.json), validated, or None where it was not run."""
    content = load_json(path, ("rows",))
    if content is None:
        return None
    check_record(path, 1, content, PEERS_CHECK, "record")
    for number, row in enumerate(content["rows"], 1):
        check_record(path, number, row, PEERS_ROW, "rows item")
    return content

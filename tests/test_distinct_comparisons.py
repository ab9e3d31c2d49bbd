"""C5a over several runs counts each comparison once: the same two series fitted to the same data at the same point
in another run is a refit, and it passes only where every run's pair passes."""

import re

from replication.claims.agreement import comparison_key, distinct_comparisons, verdict_c5a
from replication.core.paths import ROOT
from replication.core.series import Series


def row(npix, distance, series="torch-cpu", source="sweep"):
    return {"series": Series(series), "against": Series("numpy"), "npix": npix, "nzern": 4, "max_stderr": distance,
            "basis": "Mahalanobis", "comparable": True, "source": source}


def test_a_refit_of_the_same_comparison_in_another_run_counts_once_and_fails_where_any_run_fails():
    first = verdict_c5a([row(128, 0.01, source="cross-check")], [row(256, 0.02), row(512, 0.03)])
    second = verdict_c5a([], [row(256, 0.02), row(512, 0.18)])  # the same 512 comparison, failing in this run
    found = distinct_comparisons([first, second])
    assert (found.passed, found.total, found.pairs) == (2, 3, 5)
    assert found.worst == 0.18
    assert comparison_key(row(256, 0.02)) != comparison_key(row(256, 0.02, source="cross-check"))
    assert comparison_key(row(256, 0.02)) != comparison_key(row(256, 0.02, series="torch-cuda"))


def test_the_first_screen_counts_no_more_distinct_comparisons_than_pairs():
    text = (ROOT / "paper" / "REPORT.md").read_text()
    passed, total, pairs = map(int, re.search(r"\| C5a \| [^|]+ \| (\d+)/(\d+) distinct comparisons \((\d+) pairs\)",
                                              text).groups())
    assert passed <= total < pairs

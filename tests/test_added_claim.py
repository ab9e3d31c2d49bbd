"""A claim added as one file (replication.claims.ADDED) with its figure reaches the first screen's table, DETAILS.md,
the rules, the figure list and its caption, touching no other file; a claim the report has no words of its own for
is written in its own words, never in another claim's format."""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

from replication.core.paths import REFERENCE, ROOT

TOY = '''"""A toy claim: every check of the cross-check passed (added by tests/test_added_claim.py, then removed)."""

from replication.claims import Claim
from replication.core.judging import Verdict
from replication.core.objectives import CAUCHY
from replication.core.plotting import Figure, save, subplots


def checks_of(run):
    return run.crosscheck.checks if run.crosscheck else []


def evaluate(run, objective):
    checks = checks_of(run)
    if objective is not CAUCHY or not checks:
        return Verdict()
    share = sum(check.passed for check in checks) / len(checks)
    return Verdict(value=share, verdict=CLAIM.rule.grade(share), text=f"toy: {share:.0%} of {len(checks)} checks")


def shows(all_runs):
    runs = [run for run in all_runs if checks_of(run)]
    return (runs,) if runs else None


def draw(all_runs, folder):
    (runs,) = shows(all_runs)
    figure, axis = subplots(figsize=(4, 3))
    axis.bar(range(len(runs)), [evaluate(run, CAUCHY).value for run in runs])
    return save(figure, folder, FIGURE.stem)


FIGURE = Figure("fig_toy_checks", lambda runs: "toy: the share of cross-checks passed; "
                + "; ".join(run.short_title for run in runs))
CLAIM = Claim("C9", "Toy: every check of the cross-check passes.", "toy checks", "toy: all checks pass",
              "all pass", "share of the cross-check's checks passed", 1.0, 0.9, evaluate=evaluate,
              reason="no cross-check in this run (toy)", figure=FIGURE, draw=draw, shows=shows)
'''


def test_a_claim_added_as_one_file_reaches_every_table_and_the_figure_list(tmp_path):
    added = pathlib.Path(importlib.util.find_spec("replication.claims.added").submodule_search_locations[0])
    toy = added / "toy_checks.py"
    references = tmp_path / "references"
    run = references / "2026-12-05_vm_amd-epyc-2c-3"  # its cross-check alone: the toy judges nothing else
    shutil.copytree(REFERENCE / run.name / "crosscheck", run / "crosscheck")
    shutil.copy(REFERENCE / run.name / "run.json", run / "run.json")
    out = tmp_path / "out"
    try:
        toy.write_text(TOY)
        options = ["--reference", str(references), "--reference-only", "--output", str(out)]
        script = ("import sys; from replication import cli; "  # a new interpreter: claims are found as it loads
                  f"sys.exit(cli.main(['figures', *{options!r}]) or cli.main(['report', *{options!r}]))")
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                              env=os.environ | {"MPLBACKEND": "Agg"}, check=False)
        assert done.returncode == 0, done.stderr
    finally:
        toy.unlink(missing_ok=True)
        for cached in (added / "__pycache__").glob("toy_checks.*"):
            cached.unlink()
    report, details = (out / "REPORT.md").read_text(), (out / "DETAILS.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| C9 | "))
    assert row.startswith("| C9 | toy: all checks pass | toy: 100% of ")  # its own words, not C5a's "pairs, worst"
    assert "pairs" not in row
    assert "C9 all pass" in " ".join(report.split())  # the legend's bar
    assert "| C9: toy checks | toy: 100% of " in details  # the claims table
    methods = (out / "METHODS.md").read_text()
    assert "| C9 | Toy: every check of the cross-check passes. | share of the cross-check's checks passed" in methods
    caption = next(line for line in report.splitlines() if "toy: the share of cross-checks passed" in line)
    assert caption.startswith("*Figure ")
    assert (out / "figures" / "fig_toy_checks.png").is_file()
    assert "fig_toy_checks.png" in report
    assert not toy.exists()


def test_no_module_outside_the_claims_names_a_claim_by_its_id():
    """The report reads every claim through the same methods (claims.claim.Claim): no string that is a claim's id
    (C1 ... C6, an added claim's) appears in replication/ outside replication/claims/, and every claim, the paper's
    too, carries its own evaluation."""
    import ast

    from replication import claims

    ids = {claim.id for claim in claims.CLAIMS}
    found = []
    for path in sorted((ROOT / "replication").rglob("*.py")):
        if "claims" in path.relative_to(ROOT / "replication").parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in ids:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not found, found
    assert all(claim.evaluate is not None for claim in claims.CLAIMS)

"""The peers' gate: the JAX peer checked against NumPy before it is timed (peers.read makes the report's
table)."""

from replication.core import registry
from replication.core.objectives import CAUCHY, LEAST_SQUARES
from replication.core.results import write_json

CHECK_POINTS = ((16, 2), (33, 3), (64, 4), (128, 6), (256, 8))
"""(npix, nzern) of the gate: odd and even grids, low and high orders."""


def run_peers_check(results_dir, points=CHECK_POINTS):
    """Check the JAX peer against NumPy at every point and objective; write check.json; the content."""
    jax_peer = registry.JAX.module()  # the optional peer's tree, loaded only where jax is installed
    rows = []
    for npix, nzern in points:
        for objective in (CAUCHY, LEAST_SQUARES):
            try:
                value_error, grad_error = jax_peer.check_against_numpy(npix, nzern, objective)
                passed, message = True, ""
            except AssertionError as error:
                value_error = grad_error = None
                passed, message = False, str(error)
            rows.append({"npix": npix, "nzern": nzern, "objective": objective.name, "objective_error": value_error,
                         "gradient_error": grad_error, "passed": passed, "message": message})
            print(f"{registry.JAX.name} vs {registry.reference().name} npix={npix} nzern={nzern} {objective}: " +
                  (f"objective {value_error:.1e}, gradient {grad_error:.1e}" if passed else f"FAILED: {message}"))
    content = {**registry.JAX.installed_versions(), "objective_tolerance": jax_peer.OBJECTIVE_TOLERANCE,
               "gradient_tolerance": jax_peer.GRADIENT_TOLERANCE, "rows": rows,
               "passed": all(row["passed"] for row in rows)}
    write_json(results_dir / "check.json", content)
    return content

"""C3 and C4 judged again on the cold-start retrievals' speed-ups, by the sweep's rules."""

from replication.claims.speed import C3, C4, verdict_c3, verdict_c4
from replication.studies.retrieval.read import speedup_ratios

JUDGED = (C3, C4)
"""The claims the retrievals judge again."""


def retrieval_claims(records) -> dict:
    """C3 and C4 from the cold-start fits, by the sweep's rules: {claim: verdict}."""
    ratios = speedup_ratios(records)
    return {C3: verdict_c3(ratios), C4: verdict_c4(ratios)}

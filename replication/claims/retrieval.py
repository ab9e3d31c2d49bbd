"""C3 and C4 judged again on the cold-start retrievals' speed-ups, by the sweep's rules."""

from replication.claims.verdicts import RULES, verdict_c3, verdict_c4
from replication.studies.retrieval.read import speedup_ratios


def retrieval_claims(records):
    """C3 and C4 from the cold-start fits, by the sweep's rules (RULES), with the ratios they were judged on."""
    ratios = speedup_ratios(records)
    return {"C3": verdict_c3(ratios), "C4": verdict_c4(ratios), "ratios": ratios,
            "rules": {claim: RULES[claim].text for claim in ("C3", "C4")}}

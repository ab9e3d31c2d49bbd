"""Claims added one file each (see replication.claims.ADDED): each module holds a Claim named CLAIM. None ships
today; tests/test_added_claim.py adds one, renders the report and removes it."""

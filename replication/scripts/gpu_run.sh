#!/usr/bin/env bash
# One call on a lent GPU machine (the device tool), run from the repository root with python3 holding torch:
# the CUDA cross-check, the sweep for torch-cuda (float64 and float32), then NumPy and torch-cpu on the same host
# for as long as CPU_SECONDS allows (the sweep writes each point at once, so what finishes is kept).
# Everything lands in $OUT (at most 8 files): commit them under replication/results/h200/.
# The copy of the tree there has no .git: pass the commit, e.g. REPLICATION_COMMIT=<hash> bash ....
set -u
OUT=${OUT:?set OUT to the folder for the results}
PROFILE=${PROFILE:-quick}
CPU_SECONDS=${CPU_SECONDS:-240}
export PYTHONUNBUFFERED=1
# The allocator settings of the nox timing sessions (noxfile.ALLOCATOR), for every implementation alike.
export MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736
mkdir -p "$OUT/crosscheck" "$OUT/$PROFILE"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true; } > "$OUT/gpu.txt"
python3 -m replication crosscheck --results "$OUT/crosscheck" 2>&1 | tee "$OUT/log.txt"
python3 -m replication sweep --profile "$PROFILE" --impl torch-cuda --results "$OUT/$PROFILE" --quiet 2>&1 | tee -a "$OUT/log.txt"
timeout "$CPU_SECONDS" python3 -m replication sweep --profile "$PROFILE" --impl torch-cpu --impl numpy \
    --results "$OUT/$PROFILE" --quiet 2>&1 | tee -a "$OUT/log.txt"
echo "cpu sweep exit status: ${PIPESTATUS[0]} (124: stopped by the time limit; finished points are kept)" | tee -a "$OUT/log.txt"

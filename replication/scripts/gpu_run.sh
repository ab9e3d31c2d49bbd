#!/usr/bin/env bash
# One call on a lent GPU machine (the device tool), run from the repository root with python3 holding torch:
# the cross-check, the sweep for torch-cuda (float64 and float32, scipy BFGS and on-device BFGS), then NumPy and
# torch-cpu on the same host for as long as CPU_SECONDS allows (the sweep writes each point at once, so what
# finishes is kept).
# Everything lands in one run folder under $OUT (7 files: run.json, crosscheck/ (2), sweep-<profile>/ (2),
# gpu.txt, log.txt). Back here, `python -m replication contribute --run <that folder> --note "..."` makes it a
# reference run. The copy of the tree there has no .git: pass the commit, REPLICATION_COMMIT=<hash> bash ....
set -u
OUT=${OUT:?set OUT to the folder for the results}
PROFILE=${PROFILE:-quick}
CPU_SECONDS=${CPU_SECONDS:-240}
export PYTHONUNBUFFERED=1
RUN=$(python3 -c "from replication import runs; print(runs.new_run('$OUT'))")
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true; } > "$RUN/gpu.txt"
python3 -m replication crosscheck --run "$RUN" 2>&1 | tee "$RUN/log.txt"
python3 -m replication sweep --profile "$PROFILE" --impl torch-cuda --run "$RUN" --quiet 2>&1 | tee -a "$RUN/log.txt"
timeout "$CPU_SECONDS" python3 -m replication sweep --profile "$PROFILE" --impl torch-cpu --impl numpy \
    --run "$RUN" --quiet 2>&1 | tee -a "$RUN/log.txt"
echo "cpu sweep exit status: ${PIPESTATUS[0]} (124: stopped by the time limit; finished points are kept)" | tee -a "$RUN/log.txt"
rm -f "$RUN/.lock"

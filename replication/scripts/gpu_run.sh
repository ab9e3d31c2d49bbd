#!/usr/bin/env bash
# One call on a lent GPU machine (the device tool), run from the repository root with python3 holding torch.
# Everything lands in one run folder under $OUT; every finished point is written at once, so whatever the time
# limit cuts off is lost alone. Steps, most important first, each bounded by what is left of DEADLINE seconds:
#   1. the cross-check (both objectives; torch-cuda float64 and float32, the on-device BFGS)       <= 90 s
#   2. the quick profile's Cauchy sweep of torch-cuda (float64, float32, on-device BFGS)            <= 150 s
#   3. the same sweep of NumPy and torch-cpu on this host with all its cores (C1, C3; the threads
#      a user gets there), into the same run (the report states the threads)         all but the last 120 s
#   4. the gradient variants on CUDA (torch-cuda with the adjoint and with finite differences)     <= 60 s
#   5. least squares at n = 2, 3, 4 for torch-cuda, NumPy and torch-cpu                             <= 60 s
# The per-evaluation bench on CUDA is not part of it (the bench times the CPU libraries only).
# On a machine without CUDA it runs the same steps and the CUDA series are reported as not available (the CPU
# dry run: PROFILE=smoke DEADLINE=240 OUT=/tmp/gpu-dry bash replication/scripts/gpu_run.sh).
# Back here, `python -m replication contribute --run <that folder> --note "..."` makes it a reference run. The
# copy of the tree there has no .git: pass the commit, REPLICATION_COMMIT=<hash> bash ....
set -u
OUT=${OUT:?set OUT to the folder for the results}
PROFILE=${PROFILE:-quick}
DEADLINE=${DEADLINE:-450}
CORES=$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")
export PYTHONUNBUFFERED=1
START=$(date +%s)
RUN=$(python3 -c "from replication import runs; print(runs.new_run('$OUT'))")
LOG="$RUN/log.txt"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1 \
    || echo "no nvidia-smi: no GPU here"; } > "$RUN/gpu.txt"

left() {  # seconds left of DEADLINE, at most $1
    local rest=$((DEADLINE - ($(date +%s) - START)))
    (( rest > $1 )) && rest=$1
    (( rest < 0 )) && rest=0
    echo "$rest"
}

step() {  # step NAME CAP COMMAND...: run COMMAND for at most min(CAP, time left); say how it ended
    local name=$1 cap=$2
    shift 2
    local budget
    budget=$(left "$cap")
    if (( budget < 5 )); then
        echo "== $name: skipped, the time limit was reached" | tee -a "$LOG"
        return
    fi
    echo "== $name (at most ${budget} s)" | tee -a "$LOG"
    timeout "$budget" "$@" 2>&1 | tee -a "$LOG"
    local status=${PIPESTATUS[0]}
    echo "== $name: exit status $status$( (( status == 124 )) && echo ' (stopped by the time limit; finished points are kept)')" \
        | tee -a "$LOG"
}

step "cross-check" 90 python3 -m replication crosscheck --run "$RUN"
step "Cauchy sweep, torch-cuda" 150 python3 -m replication sweep --profile "$PROFILE" --impl torch-cuda \
    --threads "$CORES" --run "$RUN" --quiet
step "Cauchy sweep, NumPy and torch-cpu on $CORES cores" "$(( $(left 100000) - 120 ))" python3 -m replication sweep --profile "$PROFILE" \
    --impl numpy --impl torch-cpu --threads "$CORES" --run "$RUN" --quiet
step "gradient variants, torch-cuda" 60 python3 -m replication sweep --profile "$PROFILE" --impl torch-cuda \
    --gradient adjoint --gradient finite-differences --gradient autograd --threads "$CORES" --run "$RUN" --quiet
step "least squares, every implementation" 60 python3 -m replication sweep --profile "$PROFILE" \
    --objective least-squares --impl torch-cuda --impl numpy --impl torch-cpu --threads "$CORES" --run "$RUN" --quiet
rm -f "$RUN/.lock"
echo "== done in $(( $(date +%s) - START )) s: $RUN" | tee -a "$LOG"

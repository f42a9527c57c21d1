#!/usr/bin/env bash
# Issue 22 on a many-core machine (run once on a 16-core device machine: results/device/; docs/cpsat-formulation.md
# section 3 lists what each step should print). From the repository root:
#
#   PY=.venv/bin/python benchmarks/device_parallel.sh repro   # ~3 min on 16 idle cores
#   PY=.venv/bin/python benchmarks/device_parallel.sh speed   # ~6 min
#
# Results go to $OUT (default benchmarks/results/device/). Exit status 1 from `repro` means a
# plan differed between thread counts, core sets or machines.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-benchmarks/results/device}
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}  # carried wheels (device README) stay reachable
mkdir -p "$OUT"
echo "cores: $(nproc) usable of $(getconf _NPROCESSORS_ONLN); $($PY -c 'import ortools; print("ortools", ortools.__version__)')"

repro() {
    # the same instances on every core, on one core and on four, 3 to 32 threads
    $PY benchmarks/bench_parallel.py --workers 1,3,8,16,32 --overload --tag all-cores \
        --output "$OUT/parallel-all.json"
    taskset -c 0 $PY benchmarks/bench_parallel.py --workers 1,3,16 --tag one-core \
        --output "$OUT/parallel-one.json"
    taskset -c 0-3 $PY benchmarks/bench_parallel.py --workers 3,16 --tag four-cores \
        --output "$OUT/parallel-four.json"
    # and against the 2-core development machine's records (same OR-Tools version expected)
    $PY benchmarks/bench_parallel.py --compare benchmarks/results/parallel-2core.json \
        benchmarks/results/parallel-1core.json "$OUT"/parallel-*.json
}

speed() {
    # 120 % demand, 10 seeds: the sequential default, the portfolio on 16 threads, and CP-SAT's
    # non-deterministic parallel search on 16 (the issue's "--parallel --workers 16")
    $PY benchmarks/bench_overload.py --loads 1.2 --output "$OUT/overload-sequential.json"
    $PY benchmarks/bench_overload.py --loads 1.2 --workers 16 \
        --output "$OUT/overload-portfolio16.json"
    $PY benchmarks/bench_overload.py --loads 1.2 --parallel --workers 16 \
        --output "$OUT/overload-parallel16.json"
}

case "${1:-repro}" in
    repro) repro ;;
    speed) speed ;;
    all) repro; speed ;;
    *) echo "usage: $0 [repro|speed|all]" >&2; exit 2 ;;
esac

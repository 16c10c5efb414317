#!/usr/bin/env bash
# Instructions per operation of Statehouse's hot paths and of their floors, counted by callgrind: stable on a noisy
# machine, so a regression shows in any run. Needs valgrind (apt-get install valgrind).
#
#     Benchmarks/instructions.sh            # builds the benchmarks in release first
#
# Each path runs twice, LOW and HIGH times, under `valgrind --tool=callgrind`; the difference of the instructions
# over the difference of the counts is the cost of one operation, without start-up and set-up.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Hashing is seeded at random in each process: dictionary probes, and so the counts, would differ from run to run.
export SWIFT_DETERMINISTIC_HASHING=1
low=${LOW:-2000}
high=${HIGH:-22000}
swift build -c release --package-path "$root/Benchmarks" --product StatehouseBenchmarks >&2
# Valgrind cannot read the debug information Swift writes ("Possibly corrupted debuginfo file"): count a copy
# without it.
binary="$(mktemp)"
trap 'rm -f "$binary"' EXIT
objcopy --strip-debug "$(swift build -c release --package-path "$root/Benchmarks" --show-bin-path)/StatehouseBenchmarks" "$binary"

instructions() {  # path count -> total instructions of the run
    local total
    total=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" --repeat "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    [[ -n "$total" ]] || { echo "callgrind counted nothing for $1 (is valgrind installed?)" >&2; exit 1; }
    echo "$total"
}

per_operation() {  # path -> instructions per operation, one decimal
    local a b
    a=$(instructions "$1" "$low")
    b=$(instructions "$1" "$high")
    awk -v a="$a" -v b="$b" -v n=$((high - low)) 'BEGIN { printf "%.1f", (b - a) / n }'
}

printf '%-36s %12s %12s %8s\n' "path (instructions per operation)" "Statehouse" "floor" "ratio"
for path in modify dispatch dispatch-watched subscribe-cancel store-subscribe scope-read; do
    ours=$(per_operation "$path")
    floor=$(per_operation "$path-floor")
    ratio=$(awk -v a="$ours" -v b="$floor" 'BEGIN { printf "×%.2f", a / b }')
    printf '%-36s %12s %12s %8s\n' "$path" "$ours" "$floor" "$ratio"
done

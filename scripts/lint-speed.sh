#!/usr/bin/env bash
# lint-speed.sh: wall time of `wymcp-check lint` on recorded real
# traffic (testdata/recorded, repeated to about 20,000 exchanges) with
# one worker and with the default, against `jq -c .` reading the same
# file, run alternately five times; prints the medians and the ratios to
# jq. The benchmark BenchmarkLintRecorded measures the judging in
# process; this measures the command as a user runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
want=${EXCHANGES:-20000}
if ! command -v jq >/dev/null; then
  echo "lint-speed.sh: jq is not installed (apt-get install jq)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/wymcp-check" ./cmd/wymcp-check

file="$work/recorded.jsonl"
per=$(cat testdata/recorded/*.jsonl | grep -c '"transport"')
for _ in $(seq $(((want + per - 1) / per))); do grep -h '"transport"' testdata/recorded/*.jsonl; done >"$file"
echo "$(wc -l <"$file") exchanges, $(($(wc -c <"$file") / 1024)) KB; $(nproc) CPUs; $runs alternating runs"

now_ms() { date +%s%3N; }
one=() all=() jqs=()
for i in $(seq "$runs"); do
  t0=$(now_ms)
  "$work/wymcp-check" lint --format json --parallel 1 "$file" >/dev/null || true
  t1=$(now_ms)
  "$work/wymcp-check" lint --format json "$file" >/dev/null || true
  t2=$(now_ms)
  jq -c . "$file" >/dev/null
  t3=$(now_ms)
  one+=($((t1 - t0))) all+=($((t2 - t1))) jqs+=($((t3 - t2)))
  echo "run $i: lint --parallel 1 $((t1 - t0)) ms, lint $((t2 - t1)) ms, jq $((t3 - t2)) ms"
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m1=$(median "${one[@]}") ma=$(median "${all[@]}") mj=$(median "${jqs[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "median: lint --parallel 1 $m1 ms ($(ratio "$mj" "$m1") × jq's throughput), lint $ma ms ($(ratio "$mj" "$ma") × jq), jq $mj ms"

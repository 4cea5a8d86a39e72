#!/usr/bin/env bash
# Side-by-side bench: toolcost beside its peers on the same inputs, the same load client and
# the same machine, runs alternated (toolcost, peer, toolcost, peer, ...), written to
# reports/bench/ as CSV (every run), JSON and Markdown (medians, ratios, the machine).
#
#   benches/side_by_side.sh                      # every job, 3 alternated runs each
#   JOBS=count,serve RUNS=1 REQUESTS=500 benches/side_by_side.sh   # a short run
#
# Settings (environment): JOBS (comma list of count, weigh, measure, sweep, serve, server,
# gateway, lint, families; default all), RUNS (alternated runs per job, default 3), REQUESTS (requests per
# load run, default 5000), BIG (rows of the large catalogue, default 85600), HUGE (rows of the
# largest measure, default 1000000; 0 skips it), OUT (default reports/bench), NOTE (a line put
# in the report, e.g. that this was a short run). Peers are installed under target/bench:
# @modelcontextprotocol/sdk@1.32.2 and gpt-tokenizer@4.0.0 (npm), mcp==2.3.0,
# mcp-token-lint==0.2.0 and litellm[proxy]==1.80.0 (PyPI, Python 3.13); nginx (the
# distribution's package, installed with apt-get when missing) is the plain reverse proxy the
# gateway is measured against.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
JOBS=${JOBS:-count,weigh,measure,sweep,serve,server,gateway,lint,families}
RUNS=${RUNS:-3}
REQUESTS=${REQUESTS:-5000}
BIG=${BIG:-85600}
HUGE=${HUGE:-1000000}
OUT=${OUT:-reports/bench}
NOTE=${NOTE:-}
# Python 3.13 for the peers (mcp-token-lint needs it); any python3 runs the helpers.
PY=${PYTHON313:-}
if [ -z "$PY" ]; then
  if python3.13 -c "" 2>/dev/null; then PY=python3.13; else PY=$HOME/.pyenv/versions/3.13.0/bin/python3; fi
fi
work=$root/target/bench
mkdir -p "$work" "$OUT"
target=${CARGO_TARGET_DIR:-$root/target}
bin=${TOOLCOST_BIN:-$target/release/toolcost}
load=${LOAD_BIN:-$target/release/examples/load}
floor=${FLOOR_BIN:-$target/release/examples/static_answer}
families=${FAMILIES_BIN:-$target/release/examples/family_speed}

has() { [[ ",$JOBS," == *",$1,"* ]]; }

# --- build and install -------------------------------------------------------------------
[ -n "${TOOLCOST_BIN:-}" ] || cargo build --release --locked -q --bin toolcost --example load --example static_answer
if has families && [ ! -x "$families" ]; then
  cargo build --release --locked -q --example family_speed
fi
if has server && [ ! -x "$floor" ]; then
  cargo build --release --locked -q --example static_answer
fi
if has count || has weigh || has server; then
  [ -d "$work/npm/node_modules/@modelcontextprotocol/sdk" ] && [ -d "$work/npm/node_modules/gpt-tokenizer" ] ||
    npm install --prefix "$work/npm" --no-audit --no-fund --loglevel=error \
      @modelcontextprotocol/sdk@1.32.2 gpt-tokenizer@4.0.0
  cp benches/peers/*.mjs "$work/npm/"
fi
if has server || has lint || has gateway; then
  [ -x "$work/venv/bin/python" ] || "$PY" -m venv "$work/venv"
  "$work/venv/bin/pip" install -q --disable-pip-version-check mcp==2.3.0 mcp-token-lint==0.2.0 uvicorn==0.54.0
fi
if has gateway; then
  # The plain reverse proxy: the distribution's nginx.
  command -v nginx >/dev/null || { apt-get install -y -q nginx-light >/dev/null 2>&1 || {
    apt-get update -q >/dev/null 2>&1 && apt-get install -y -q nginx-light >/dev/null 2>&1; }; }
  command -v nginx >/dev/null || { echo "nginx is not installed and could not be (apt-get install nginx-light)" >&2; exit 1; }
  # LiteLLM's proxy pins an older `mcp`, so it lives in a virtual environment of its own.
  [ -x "$work/venv-litellm/bin/litellm" ] || {
    "$PY" -m venv "$work/venv-litellm"
    "$work/venv-litellm/bin/pip" install -q --disable-pip-version-check "litellm[proxy]==1.80.0"
  }
fi

# --- inputs --------------------------------------------------------------------------------
[ -s "$work/cat856.jsonl" ] || "$bin" generate --rows 856 --output "$work/cat856.jsonl"
[ -s "$work/cat$BIG.jsonl" ] || "$bin" generate --rows "$BIG" --output "$work/cat$BIG.jsonl"
# tools/list captures of both catalogues, written by the reference server itself (page size 0:
# one answer holds every tool).
capture() { # rows-file out-file
  local log=$work/capture.log
  "$bin" serve --catalogue "$1" --page-size 0 --listen 127.0.0.1:0 >"$log" 2>&1 &
  local pid=$!
  local url=""
  for _ in $(seq 600); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  curl -sf -X POST "$url/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' |
    "$PY" -c 'import json,sys; json.dump({"tools": json.load(sys.stdin)["result"]["tools"]}, sys.stdout, separators=(",", ":"))' >"$2"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
[ -s "$work/tools856.json" ] || capture "$work/cat856.jsonl" "$work/tools856.json"
[ -s "$work/tools$BIG.json" ] || capture "$work/cat$BIG.jsonl" "$work/tools$BIG.json"

"$PY" -c 'import json,sys; json.dump({"toolcost": json.load(open(sys.argv[1]))["tools"]}, open(sys.argv[2], "w"))' \
  "$work/tools856.json" "$work/lint856.json"
"$bin" check --file "$work/tools856.json" --lock "$work/check.lock.json" --update >/dev/null 2>&1 || true

csv=$OUT/runs.csv
echo "job,side,run,metric,value,command" >"$csv"
record() { # job side run metric value command
  printf '%s,%s,%s,%s,%s,"%s"\n' "$1" "$2" "$3" "$4" "$5" "${6//\"/\'}" >>"$csv"
}

# One timed command: wall seconds and peak RSS (MB) from GNU time.
timed() { # job side run command...
  local job=$1 side=$2 run=$3
  shift 3
  local t=$work/time.txt
  # A budget gate may exit 1 on purpose; the time is still the time. Its status is recorded.
  local rc=0
  /usr/bin/time -f '%e %M' -o "$t" "$@" >/dev/null 2>"$work/stderr.txt" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "failed ($rc): $*" >&2; tail -5 "$work/stderr.txt" >&2; return 1
  fi
  read -r secs kb < <(tail -1 "$t")
  record "$job" "$side" "$run" seconds "$secs" "$*"
  record "$job" "$side" "$run" peak_mb "$((kb / 1024))" "$*"
}

# A server started in the background, in a process group of its own (so that stop reaches
# every process it starts: LiteLLM's workers outlived its shell and took the CPU of the runs
# after it); sets $url (printed address) and $spid.
start() { # log command...
  local log=$1
  shift
  setsid "$@" >"$log" 2>&1 &
  spid=$!
  url=""
  for _ in $(seq 1200); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 || true)
    [ -n "$url" ] && return 0
    sleep 0.05
  done
  echo "no address from: $*" >&2; cat "$log" >&2; return 1
}
# A peer that ignores SIGTERM while connections hang (the Python server does) is killed after 5 s.
# A run that fails part way stops the server it started last, too.
spid=""
trap '[ -z "$spid" ] || stop' EXIT
stop() {
  kill -- "-$spid" 2>/dev/null || kill "$spid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill -9 -- "-$spid" 2>/dev/null || kill -9 "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
}

# The load client: requests/s and p50 from one run.
loaded() { # job side run url body concurrency [extra args]
  local job=$1 side=$2 run=$3 u=$4 body=$5 c=$6
  shift 6
  local line
  line=$("$load" "$u" "$body" -c "$c" -n "$REQUESTS" "$@")
  local rps p50 errors
  rps=$(sed -E 's/.* ([0-9.]+) req\/s.*/\1/' <<<"$line")
  p50=$(sed -E 's/.*p50 ([0-9.]+) ms.*/\1/' <<<"$line")
  errors=$(sed -E 's/.*c=[0-9]+, ([0-9]+) errors.*/\1/' <<<"$line")
  record "$job" "$side" "$run" req_s "$rps" "load -c $c -n $REQUESTS $u"
  record "$job" "$side" "$run" p50_ms "$p50" "load -c $c -n $REQUESTS $u"
  record "$job" "$side" "$run" errors "$errors" "load -c $c -n $REQUESTS $u"
}

list='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"NOW","arguments":{}}}'

for run in $(seq "$RUNS"); do
  if has count; then
    timed count-big toolcost "$run" "$bin" measure --catalogue "$work/tools$BIG.json" --surface per-row-mcp --tokenizer o200k
    timed count-big gpt-tokenizer "$run" node "$work/npm/count_tokens.mjs" "$work/tools$BIG.json"
  fi
  if has weigh; then
    timed weigh-big toolcost "$run" "$bin" weigh --file "$work/tools$BIG.json"
    timed weigh-big gpt-tokenizer "$run" node "$work/npm/count_tokens.mjs" "$work/tools$BIG.json"
    timed weigh-856 toolcost "$run" "$bin" weigh --file "$work/tools856.json"
  fi
  if has lint; then
    timed check-856 toolcost "$run" "$bin" check --file "$work/tools856.json" --lock "$work/check.lock.json"
    timed check-856 mcp-token-lint "$run" "$work/venv/bin/mcp-token-lint" check --tools-json "$work/lint856.json" --budget 100000
  fi
  if has measure; then
    timed measure-all-big toolcost "$run" "$bin" measure --rows "$BIG" --surface all --tokenizer o200k
    if [ "$HUGE" -gt 0 ]; then
      timed measure-all-huge toolcost "$run" "$bin" measure --rows "$HUGE" --surface all --tokenizer o200k
    fi
  fi
  if has sweep; then
    timed sweep-defaults toolcost "$run" "$bin" sweep --out "$work/sweep"
  fi
  if has serve; then
    # Ready: from start to the first tools/list answered.
    t0=$(date +%s.%N)
    start "$work/serve.log" /usr/bin/time -f '%M' -o "$work/serve-rss.txt" "$bin" serve --catalogue "$work/cat$BIG.jsonl" --listen 127.0.0.1:0
    curl -sf -o /dev/null -X POST "$url/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d "$list"
    t1=$(date +%s.%N)
    # Stop the server, not GNU time, so that time writes the peak.
    kill "$(pgrep -P "$spid" | head -1)" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    record serve-big-ready toolcost "$run" seconds "$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }")" "serve --catalogue cat$BIG.jsonl"
    record serve-big-ready toolcost "$run" peak_mb "$(($(tail -1 "$work/serve-rss.txt") / 1024))" "serve --catalogue cat$BIG.jsonl"
  fi
  if has server; then
    export BENCH_TOKEN=bench-token
    for c in 1 32; do
      start "$work/tc.log" "$bin" serve --catalogue "$work/cat856.jsonl" --listen 127.0.0.1:0 --token-env BENCH_TOKEN
      loaded "tools-list-c$c" toolcost "$run" "$url/mcp" "$list" "$c" --init --header "authorization: Bearer bench-token"
      loaded "tools-call-c$c" toolcost "$run" "$url/mcp" "$call" "$c" --init --header "authorization: Bearer bench-token"
      # The floor: the same answers' bytes served with no work at all, through the same client.
      for kind in list call; do
        curl -sf -o "$work/$kind-answer.json" -X POST "$url/mcp" -H 'content-type: application/json' \
          -H 'accept: application/json, text/event-stream' -H "authorization: Bearer bench-token" \
          -d "${!kind}"
      done
      stop
      for kind in list call; do
        start "$work/floor.log" "$floor" "$work/$kind-answer.json"
        loaded "tools-$kind-c$c" static-bytes "$run" "$url/mcp" "${!kind}" "$c"
        stop
      done
      start "$work/ts.log" node "$work/npm/ts_server.mjs" "$work/tools856.json"
      loaded "tools-list-c$c" ts-sdk "$run" "$url/mcp" "$list" "$c" --init
      loaded "tools-call-c$c" ts-sdk "$run" "$url/mcp" "$call" "$c" --init
      stop
      start "$work/py.log" "$work/venv/bin/python" benches/peers/py_server.py "$work/tools856.json"
      loaded "tools-list-c$c" python-mcp "$run" "$url/mcp" "$list" "$c" --init
      loaded "tools-call-c$c" python-mcp "$run" "$url/mcp" "$call" "$c" --init
      stop
    done
  fi
  if has gateway; then
    body=$("$PY" -c 'import json; print(json.dumps({"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"what time is it"}]}))')
    start "$work/mock.log" "$bin" gateway --upstream mock --listen 127.0.0.1:0 --log "$work/mock-log.sqlite"
    mock=$url mockpid=$spid
    for c in 1 32; do
      loaded "gateway-c$c" direct "$run" "$mock/v1/messages" "$body" "$c" --header "x-api-key: bench"
      # One worker, as the reference proxy below has (with the load client and the upstream on
      # the same two cores, one event loop also serves more than two).
      start "$work/fwd.log" "$bin" gateway --upstream "$mock" --listen 127.0.0.1:0 --log "$work/fwd-log.sqlite" --workers 1
      loaded "gateway-c$c" toolcost "$run" "$url/v1/messages" "$body" "$c" --header "x-api-key: bench"
      stop
      # The plain reverse proxy: one nginx worker, keep-alive to the same mock, buffering the
      # request and the answer as a gateway that reads them would.
      PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
      mkdir -p "$work/nginx"
      cat >"$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  upstream mock { server ${mock#http://}; keepalive 64; }
  server {
    listen 127.0.0.1:$PORT;
    client_max_body_size 256m;
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering on;
      proxy_request_buffering on;
    }
  }
}
NGINX
      start "$work/nginx.log" bash -c "echo 'listening on http://127.0.0.1:$PORT'; exec nginx -p '$work/nginx' -c '$work/nginx/nginx.conf' -g 'daemon off;'"
      # The line above is printed before nginx binds: wait until it answers.
      for _ in $(seq 200); do curl -s -o /dev/null --max-time 1 "$url/" && break; sleep 0.05; done
      loaded "gateway-c$c" nginx "$run" "$url/v1/messages" "$body" "$c" --header "x-api-key: bench"
      stop
      PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
      BENCH_UPSTREAM=$mock "$PY" benches/peers/litellm_config.py >"$work/litellm.yaml"
      start "$work/litellm.log" bash -c "'$work/venv-litellm/bin/litellm' --config '$work/litellm.yaml' --host 127.0.0.1 --port $PORT 2>&1 | sed -u 's#Uvicorn running on http://127.0.0.1:$PORT#listening on http://127.0.0.1:$PORT#'"
      loaded "gateway-c$c" litellm "$run" "$url/v1/messages" "$body" "$c" --header "x-api-key: bench"
      stop
    done
    spid=$mockpid; stop
  fi
done

# Counting speed per tokenizer family on one core, beside each family's reference on the same
# texts (the example takes the best of RUNS passes itself).
rm -f "$OUT/families.csv"
if has families; then
  RUNS=$RUNS "$families" >"$OUT/families.csv"
fi

"$PY" benches/summarise.py "$csv" "$OUT" "$NOTE"
echo "wrote $OUT/runs.csv, $OUT/summary.json, $OUT/README.md"

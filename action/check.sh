#!/usr/bin/env bash
# The steps of toolcost's GitHub Action (action.yml) as one script, so that a test can run
# them on any machine: find or build toolcost once per version, run `toolcost check` against
# the repository's budget, write the per-tool diff to the job summary, annotate the pull
# request, and exit as `check` does (0 within budget, 1 over it, 2 an error).
#
# Environment (all optional):
#   TOOLCOST_BIN      a toolcost binary to use as it is (skips the build)
#   TOOLCOST_SOURCE   the toolcost source to build from (the action's own checkout)
#   TOOLCOST_CACHE    where built binaries are kept, one folder per version
#   TOOLCOST_VERSION  the version being built (the action's ref)
#   TOOLCOST_CONFIG   the budget file (default toolcost.toml)
#   TOOLCOST_LOCK     the baseline lock (default toolcost.lock.json)
#   GITHUB_STEP_SUMMARY  the job summary file GitHub Actions provides
#   TOOLCOST_COMMENT_FILE  where to keep a copy of the report (a pull-request comment)
#   TOOLCOST_GITHUB_TOKEN  a token that may write issue comments: the report is posted as the
#                     pull request's comment (updated on later pushes); with GITHUB_EVENT_PATH,
#                     GITHUB_REPOSITORY and GITHUB_API_URL, which Actions provides
set -euo pipefail

config="${TOOLCOST_CONFIG:-toolcost.toml}"
lock="${TOOLCOST_LOCK:-toolcost.lock.json}"
bin="${TOOLCOST_BIN:-}"

if [ -z "$bin" ]; then
  source_dir="${TOOLCOST_SOURCE:?set TOOLCOST_SOURCE to the toolcost source, or TOOLCOST_BIN to a binary}"
  root="${TOOLCOST_CACHE:-$HOME/.cache/toolcost}/${TOOLCOST_VERSION:-local}"
  bin="$root/bin/toolcost"
  if [ ! -x "$bin" ]; then
    echo "building toolcost ${TOOLCOST_VERSION:-local} once into $root (later runs reuse it)" >&2
    cargo install --locked --quiet --root "$root" --path "$source_dir"
  fi
fi
if [ ! -f "$lock" ]; then
  echo "::error::no baseline $lock: run \`toolcost check --update\` and commit the lock" >&2
  exit 2
fi

report="$(mktemp)"
errors="$(mktemp)"
trap 'rm -f "$report" "$errors"' EXIT
set +e
"$bin" check --config "$config" --lock "$lock" --format md >"$report" 2>"$errors"
code=$?
set -e
# The report names the tools, which the server chose, and the check's stderr may quote the
# server: no line of either may act as a workflow command, so the log reads them between
# stop-commands markers with a token no one can guess.
token="toolcost-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$token"
cat "$report"
cat "$errors" >&2
echo "::$token::"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  # A check that could not run (exit 2, or no report) says why, as text, never an empty section.
  if ! ( {
    echo "## toolcost check"
    echo
    if [ "$code" -ge 2 ] || [ ! -s "$report" ]; then
      echo "The check could not run (exit $code). What it said:"
      echo
      echo '~~~~text'
      tail -c 2000 "$errors" | sed 's/^~~~~/ ~~~~/'
      echo
      echo '~~~~'
    else
      cat "$report"
    fi
  } >>"$GITHUB_STEP_SUMMARY" ) 2>/dev/null; then
    # Not a finding: the gate's verdict stands, and the log says why the summary is missing.
    echo "::warning::toolcost could not write the job summary at $GITHUB_STEP_SUMMARY" >&2
  fi
fi
if [ -n "${TOOLCOST_COMMENT_FILE:-}" ]; then
  if ! cp "$report" "$TOOLCOST_COMMENT_FILE" 2>/dev/null; then
    echo "::warning::toolcost could not write the comment file (comment-file)" >&2
  fi
fi
if [ -n "${TOOLCOST_GITHUB_TOKEN:-}" ]; then
  # A check that could not run (exit 2, or no report) says so and keeps the last report.
  args=("$report")
  if [ "$code" -ge 2 ] || [ ! -s "$report" ]; then
    args=(--failed "$(tail -c 2000 "$errors" | tr '\n' ' ')")
  fi
  # Not a finding either way: a refused comment (a fork's read-only token) is a warning.
  if ! why="$(python3 "$(dirname "$0")/comment.py" "${args[@]}" 2>&1)"; then
    echo "::warning::toolcost could not post the pull-request comment: ${why//$'\n'/ }" >&2
  else
    [ -z "$why" ] || echo "$why" >&2
  fi
fi
if [ "$code" -eq 1 ]; then
  # The same findings as annotations on the pull request's files.
  "$bin" check --config "$config" --lock "$lock" --format github || true
fi
exit "$code"

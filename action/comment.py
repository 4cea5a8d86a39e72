#!/usr/bin/env python3
"""Post toolcost's report as the pull request's comment, or update the one posted before.

usage: comment.py REPORT_FILE
       comment.py --failed WHY   (the check did not run: say so, and keep the last report)
Environment: TOOLCOST_GITHUB_TOKEN (a token that may write issue comments), GITHUB_EVENT_PATH
(the event; only pull_request events have a number to comment on), GITHUB_REPOSITORY (owner/name),
GITHUB_API_URL (default https://api.github.com). Standard library only.

Exit 0 when the comment is posted or updated, or when there is nothing to comment on; 1 with
one line on stderr when GitHub refuses (a fork's pull request gets a read-only token: see
docs/ci.md for the workflow_run recipe). The caller turns 1 into a warning: the gate's verdict
does not depend on the comment.
"""
import json
import os
import re
import sys
import urllib.error
import urllib.request

MARKER = "<!-- toolcost-check -->"
FAILED_END = "<!-- toolcost-check-failed -->"


def call(method, url, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "Content-Type": "application/json",
        "User-Agent": "toolcost-action",
    })
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def own_login(api, token):
    """The login the token comments as: its user's, or the Actions bot's for GITHUB_TOKEN (whose
    token cannot read /user)."""
    try:
        return call("GET", f"{api}/user", token).get("login")
    except (urllib.error.URLError, OSError, ValueError, AttributeError):
        return "github-actions[bot]"


def cut(report, limit=60000):
    """The report within GitHub's limit (65,536 characters), cut between rows, never inside one."""
    if len(report) <= limit:
        return report
    head = report[:limit]
    at = head.rfind("\n")
    head = head[:at] if at > 0 else head
    return head + "\n\n(cut: the whole report is in the job summary)\n"


def fenced(text):
    """Text as a fenced code block: what a failing server printed renders as text (no mention
    notifies, no HTML or image loads), its fence longer than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def defused(text):
    """Text from outside (a server's words, a tool's name) with toolcost's markers made inert, so
    the only marker a comment holds is the one toolcost wrote."""
    return text.replace(FAILED_END, "<!-- toolcost-check-failed (quoted) -->").replace(
        MARKER, "<!-- toolcost-check (quoted) -->")


def comment_body(report, failed, previous):
    """The comment's body: the report, or for a check that failed a note quoting why (fenced)
    above the last report, which `previous` (the comment's body before, or "") holds."""
    if failed is not None:
        last = previous[len(MARKER):].lstrip("\n") if previous.startswith(MARKER) else ""
        # Cut at toolcost's own note's end: quoted text cannot hold the marker (defused).
        last = last.split(FAILED_END, 1)[-1].lstrip("\n")
        note = f"### toolcost: check failed\n\n{fenced(defused(failed[:2000]))}\n{FAILED_END}\n"
        report = note + ("\n" + last if last else "")
    else:
        report = defused(report)
    return f"{MARKER}\n{cut(report)}"


def main():
    token = os.environ.get("TOOLCOST_GITHUB_TOKEN", "")
    event_path = os.environ.get("GITHUB_EVENT_PATH", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    if not token or not event_path or not repo:
        return 0
    with open(event_path, encoding="utf-8") as f:
        event = json.load(f)
    number = (event.get("pull_request") or {}).get("number")
    if not isinstance(number, int):
        return 0
    failed = None
    if sys.argv[1] == "--failed":
        failed = " ".join(sys.argv[2:]).strip() or "no reason given"
        report = ""
    else:
        with open(sys.argv[1], encoding="utf-8") as f:
            report = f.read()
        if not report.strip():
            failed = "the check wrote no report"
    try:
        me = own_login(api, token)
        mine = None
        for page in range(1, 11):
            comments = call("GET", f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}", token)
            if not comments:
                break
            for c in comments:
                # Only toolcost's own comment: the token's user wrote it and it starts with the
                # marker (someone else's comment quoting the marker is left alone).
                if (c.get("user") or {}).get("login") == me and (c.get("body") or "").startswith(MARKER):
                    mine = c
        # A check that failed says so; the last report stays below, never replaced by nothing.
        body = {"body": comment_body(report, failed, (mine or {}).get("body") or "")}
        if mine is not None:
            call("PATCH", f"{api}/repos/{repo}/issues/comments/{mine['id']}", token, body)
            print(f"toolcost: updated the pull request's comment {mine['id']}", file=sys.stderr)
        else:
            made = call("POST", f"{api}/repos/{repo}/issues/{number}/comments", token, body)
            print(f"toolcost: commented on the pull request ({made.get('id')})", file=sys.stderr)
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"could not comment on pull request {number}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the subject of every non-merge commit in BASE..HEAD (default BASE: the
# baseline below, main's head when the rule was introduced; older subjects
# predate it): at most 72 characters, with a conventional-commit prefix
#   type(optional scope)!: summary
# type one of feat fix docs test refactor perf bench ci build chore style.
# Run it before pushing (CONTRIBUTING.md); tests/test_commits.py runs it in CI.
#   scripts/check-commits.sh [BASE] [HEAD]
# Exit 0 when every subject passes, 1 (listing each offender on stderr) when
# not, 2 on a usage error.
set -euo pipefail

BASELINE=9a8083b
MAX=72
TYPES='feat|fix|docs|test|refactor|perf|bench|ci|build|chore|style'
PATTERN="^($TYPES)(\\([a-z0-9][a-z0-9,./_-]*\\))?!?: [^ ]"

case "${1:-}" in
-h | --help)
    sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
[ $# -le 2 ] || { echo "usage: $0 [BASE] [HEAD]" >&2; exit 2; }
base=${1:-$BASELINE}
head=${2:-HEAD}
git rev-parse --verify -q "$base^{commit}" >/dev/null || { echo "check-commits: unknown commit '$base'" >&2; exit 2; }
git rev-parse --verify -q "$head^{commit}" >/dev/null || { echo "check-commits: unknown commit '$head'" >&2; exit 2; }

bad=0
n=0
while IFS= read -r line; do
    sha=${line%% *}
    subject=${line#* }
    n=$((n + 1))
    why=()
    [ ${#subject} -le $MAX ] || why+=("${#subject} characters (at most $MAX)")
    [[ $subject =~ $PATTERN ]] || why+=("no conventional-commit prefix ($TYPES)(scope)!?: ")
    if [ ${#why[@]} -gt 0 ]; then
        bad=$((bad + 1))
        printf '%s %s\n' "$sha" "$subject" >&2
        for w in "${why[@]}"; do printf '    %s\n' "$w" >&2; done
    fi
done < <(git log --no-merges --format='%h %s' "$base..$head")

if [ $bad -gt 0 ]; then
    echo "check-commits: $bad of $n commit subject(s) since $base break the rule" >&2
    exit 1
fi
echo "check-commits: $n commit subject(s) since $base pass"

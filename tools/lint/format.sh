#!/usr/bin/env bash
# The formatters and linters of a change (CONTRIBUTING.md, "Style"):
#   - clang-format (.clang-format) on the C and C++ lines the change touches
#     (git clang-format: lines, not whole files, so old code is reformatted
#     only where it is edited);
#   - ruff (lab/pyproject.toml, [tool.ruff]) on the whole lab;
#   - commit subjects under 72 characters (merges aside).
# The change: from the merge base of HEAD and $STRATA_LINT_BASE (default
# origin/main, else main) to the working tree; when HEAD is that base (on
# main itself), the last commit (HEAD~1). A clone without that history (a
# shallow clone of depth 1) checks ruff only, with a warning.
# Usage: tools/lint/format.sh [bin directory holding clang-format, git-clang-format and ruff]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.venv/bin}
[[ -d "$bin" ]] && bin=$(cd "$bin" && pwd)
for tool in clang-format git-clang-format ruff; do
  [[ -x "$bin/$tool" ]] || { echo "lint: $bin/$tool missing (make lint installs tools/lint/requirements.txt)" >&2; exit 2; }
done

ref=${STRATA_LINT_BASE:-}
if [[ -z "$ref" ]]; then
  if git rev-parse -q --verify origin/main >/dev/null; then ref=origin/main; else ref=main; fi
fi
base=$(git merge-base HEAD "$ref" 2>/dev/null || true)
if [[ -z "$base" || "$base" == "$(git rev-parse HEAD)" ]]; then
  base=$(git rev-parse -q --verify HEAD~1 || true)
fi
status=0
if [[ -z "$base" ]]; then
  # A shallow clone of depth 1 has no change to read: ruff still runs below.
  echo "lint: WARNING: no base commit ($ref and HEAD~1 missing): the formatting of changed lines and the" >&2
  echo "lint: WARNING: commit subjects are not checked; git fetch --deepen=1, or set STRATA_LINT_BASE" >&2
else
  echo "lint: changes since $(git rev-parse --short "$base")"
fi

# C and C++: the changed lines, formatted as .clang-format says.
[[ -n "$base" ]] && diff=$(PATH="$bin:$PATH" git clang-format --binary "$bin/clang-format" --diff --extensions c,h,cpp,hpp "$base" -- \
         src include tests bench fuzz workloads 2>&1 || true) || diff=""
if [[ -n "$diff" && "$diff" != *"no modified files to format"* && "$diff" != *"did not modify any files"* ]]; then
  echo "$diff"
  echo "lint: C/C++ lines above are not formatted: git clang-format --binary $bin/clang-format $base" >&2
  status=1
fi

# Python: the lab, as [tool.ruff] in lab/pyproject.toml says.
if ! (cd lab && "$bin/ruff" check --quiet .); then
  echo "lint: ruff found the problems above in lab/" >&2
  status=1
fi

# Commit subjects: under 72 characters.
while IFS= read -r line; do
  subject=${line#* }
  if (( ${#subject} >= 72 )); then
    echo "lint: commit ${line%% *}'s subject is ${#subject} characters (under 72, please): $subject" >&2
    status=1
  fi
done < <([[ -n "$base" ]] && git log --no-merges --format='%h %s' "$base..HEAD")

(( status == 0 )) && echo "lint: clean"
exit $status

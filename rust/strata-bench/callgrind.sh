#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind, deterministic) of one run of
# every workload x contender, as a markdown table with ratios to bumpalo.
# Only paired::run_once is counted (not the set-up). Run from rust/ after
# `cargo build --release -p strata-bench --bin paired`.
set -euo pipefail
paired=${PAIRED:-target/release/paired}
contenders=("strata-reap" "bumpalo" "bump-scope" "typed-arena" "Box (system)" "Box (mimalloc)" "Box (strata-alloc)")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
count() {  # workload contender -> instructions
  STRATA_REAP_CHECK=0 valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
    --toggle-collect='paired::run_once' "$paired" once "$1" "$2" 2>&1 >/dev/null | grep -oP 'Collected : \K[0-9]+'
}
printf '| workload |'; printf ' %s |' "${contenders[@]}"; printf '\n|---|'; printf -- '---:|%.0s' "${contenders[@]}"; echo
for w in alloc_only vec_growth parse_tree churn; do
  base=$(count "$w" bumpalo)
  printf '| %s |' "$w"
  for c in "${contenders[@]}"; do
    if [[ $c == typed-arena && ( $w == vec_growth || $w == churn ) ]]; then printf ' — |'; continue; fi
    n=$([[ $c == bumpalo ]] && echo "$base" || count "$w" "$c")
    awk -v n="$n" -v b="$base" -v c="$c" 'BEGIN { printf " %.1f M%s |", n / 1e6, c == "bumpalo" ? "" : sprintf(" (%.2f)", n / b) }'
  done
  echo
done

#!/usr/bin/env bash
# Real programs on a preloaded malloc: run_program.sh CASE LIBRARY
#
# Runs the program of CASE (python3 perl sqlite3 git gcc xz pigz) twice on the
# same generated input: once on the system malloc, once with LD_PRELOAD=LIBRARY.
# Passes only if
#   - both runs succeed and their outputs (stdout and produced files) are
#     byte-identical, and
#   - the library really served the preloaded run: ld.so's binding log
#     (LD_DEBUG=bindings) shows, in every process that looked up malloc, malloc
#     and friends bound to LIBRARY (directly, or through the main program's
#     canonical PLT entry, see check_bindings) and to no other malloc. A missing or
#     unloadable LD_PRELOAD is only a warning from ld.so, so without this check
#     the test would pass on glibc.
set -Eeuo pipefail
trap 'echo "FAIL: exit status $? from: $BASH_COMMAND (line $LINENO, ${MODE:-setup} run)" >&2' ERR

usage() { echo "usage: $0 {python3|perl|sqlite3|git|gcc|xz|pigz} LIBRARY" >&2; exit 2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
(($# == 2)) || usage
CASE=$1
LIB=$2
HERE=$(cd "$(dirname "$0")" && pwd)

[[ $LIB != NOT-BUILT ]] || fail "libstrata.so was not built (no CMake target strata::strata): nothing to preload"
[[ -f $LIB ]] || fail "library to preload '$LIB' does not exist"
LIB=$(realpath "$LIB")

# System tools, not shims (pyenv and the like) that would put other processes
# between us and the program.
export PATH=/usr/bin:/bin:$PATH
export LC_ALL=C TZ=UTC
unset LD_PRELOAD

need() {  # need COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null || fail "'$1' not found: install the Debian package $2 (tools/apt/programs.txt)"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-programs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
IN=$WORK/input
mkdir -p "$IN"

# under_test CMD...: the program being tested. In the preload run it gets the
# library and writes ld.so's binding log (one file per process).
under_test() {
  if [[ $MODE == preload ]]; then
    env LD_PRELOAD="$LIB" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$WORK/lddebug/out" "$@"
  else
    "$@"
  fi
}

# ---- the cases: prepare_X makes the input once; run_X RESULT_DIR runs the
# ---- program (through under_test) and leaves everything to compare in RESULT_DIR.

prepare_python3() { need python3 python3; }
run_python3() {
  PYTHONHASHSEED=0 under_test python3 "$HERE/churn_dicts.py" >"$1/stdout"
}

prepare_perl() {
  need perl perl
  # 80k lines of pseudo-random words from a fixed LCG.
  perl -e 'my $x = 12345; my @syl = qw(ka lo mi nu pe ra si tu va xe zo an el in);
           for my $l (1 .. 80000) { my @w;
             for (1 .. 4 + $l % 9) { my $w = "";
               for (0 .. $x % 4) { $x = ($x * 1103515245 + 12345) % 2147483648; $w .= $syl[$x % @syl] }
               push @w, $w }
             print join(" ", @w), ($l % 5 ? "." : "!"), "\n" }' >"$IN/words.txt"
}
run_perl() {
  # Word frequencies, the first three line numbers of each word, sorted.
  under_test perl -lne '$n++; for (split /[^a-z]+/, lc) { next unless length; $c{$_}++;
      $at{$_} .= "$n," if $c{$_} <= 3 }
      END { print "$_ $c{$_} $at{$_}" for sort { $c{$b} <=> $c{$a} or $a cmp $b } keys %c }' \
    "$IN/words.txt" >"$1/stdout"
}

prepare_sqlite3() {
  need sqlite3 sqlite3
  {
    echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER, payload BLOB);"
    echo "BEGIN;"
    # 100k single-row INSERT statements: the parser and the B-tree both allocate.
    perl -e 'for my $i (1 .. 100000) {
               printf "INSERT INTO t(k, v, payload) VALUES (%s, %d, zeroblob(%d));\n",
                      sprintf("\x27k%06d\x27", ($i * 7919) % 100000), ($i * 31337) % 1000, $i % 200 }'
    echo "COMMIT;"
    cat <<'SQL'
CREATE INDEX t_k ON t(k);
SELECT count(*), sum(v), sum(length(payload)) FROM t;
SELECT v % 10, count(*), avg(v), min(k), max(k) FROM t GROUP BY v % 10 ORDER BY 1;
SELECT k, v FROM t WHERE k BETWEEN 'k050000' AND 'k050010' ORDER BY k;
SELECT group_concat(k, ',') FROM (SELECT k FROM t ORDER BY v DESC, k LIMIT 20);
DELETE FROM t WHERE v % 3 = 0;
VACUUM;
SELECT count(*), sum(v) FROM t;
PRAGMA integrity_check;
SQL
  } >"$IN/script.sql"
}
run_sqlite3() {
  under_test sqlite3 "$1/db.sqlite" <"$IN/script.sql" >"$1/stdout"
  rm "$1/db.sqlite"
}

prepare_git() {
  need git git
  mkdir -p "$IN/tree/src" "$IN/tree/docs"
  for i in $(seq 1 150); do
    seq "$i" 7 $((i * 60)) | sed "s/^/line of file $i: /" >"$IN/tree/src/file$i.txt"
  done
  seq 1 20000 >"$IN/tree/docs/numbers.txt"
}
run_git() {
  local repo=$1/repo
  # Fixed identities and dates, no user or system configuration: the commit
  # hashes are then the same in both runs.
  export HOME=$1/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
  export GIT_AUTHOR_NAME="Strata Test" GIT_AUTHOR_EMAIL=test@strata.invalid
  export GIT_COMMITTER_NAME="Strata Test" GIT_COMMITTER_EMAIL=test@strata.invalid
  export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
  mkdir -p "$HOME"
  under_test git init -q -b main "$repo"
  cp -r "$IN/tree/." "$repo/"
  (
    cd "$repo"
    under_test git add .
    under_test git commit -q -m "first commit"
    sed -i 's/line/LINE/' src/file1*.txt
    rm docs/numbers.txt
    echo "a new file" >new.txt
    under_test git add -A
    GIT_AUTHOR_DATE="2024-01-02T00:00:00Z" GIT_COMMITTER_DATE="2024-01-02T00:00:00Z" \
      under_test git commit -q -m "second commit"
    under_test git log --stat --format=fuller
    under_test git diff --numstat HEAD~1 HEAD
    under_test git -c pack.threads=2 gc -q
    under_test git fsck --full --no-progress
    under_test git rev-parse HEAD HEAD~1 'HEAD^{tree}'
  ) >"$1/stdout"
  rm -rf "$repo" "$HOME"
}

prepare_gcc() { need gcc gcc; cp "$HERE/sample.c" "$IN/sample.c"; }
run_gcc() {
  # Compile from the input directory in both runs: the debug info records it.
  (cd "$IN" && under_test gcc -O2 -g -c sample.c -o "$1/sample.o")
  (cd "$IN" && under_test gcc "$1/sample.o" -o "$WORK/sample-$MODE")
  "$WORK/sample-$MODE" >"$1/program-output"  # the compiled program itself on glibc
}

# Input for the compressors: 9 MiB, text with some incompressible noise, so
# xz -T2 splits it into several blocks that two threads compress at once.
prepare_compressible() {
  perl -e 'my $x = 7; for my $i (1 .. 120000) {
             $x = ($x * 1103515245 + 12345) % 2147483648;
             printf "%08d %s %x\n", $i, ("abcdefghij" x (1 + $i % 5)), $x }' >"$IN/data"
  head -c 2000000 /dev/zero | tr '\0' 'z' >>"$IN/data"
  perl -e 'srand(3); for (1 .. 1200) { print pack("C*", map { int rand 256 } 1 .. 1000) }' >>"$IN/data"
}
prepare_xz() { need xz xz-utils; prepare_compressible; }
run_xz() {
  under_test xz -T2 -1 -c "$IN/data" >"$1/data.xz"
  under_test xz -T2 -d -c "$1/data.xz" >"$WORK/decompressed-$MODE"
  cmp "$IN/data" "$WORK/decompressed-$MODE" || fail "xz ($MODE): decompressed data differ from the input"
  rm "$WORK/decompressed-$MODE"
}

prepare_pigz() { need pigz pigz; prepare_compressible; }
run_pigz() {
  under_test pigz -p 2 -c <"$IN/data" >"$1/data.gz"
  under_test pigz -p 2 -d -c <"$1/data.gz" >"$WORK/decompressed-$MODE"
  cmp "$IN/data" "$WORK/decompressed-$MODE" || fail "pigz ($MODE): decompressed data differ from the input"
  rm "$WORK/decompressed-$MODE"
}

# ---- the check that LIB served every process of the preloaded run ----------

# Each log file is one process's ld.so output. Lines look like
#   binding file /usr/bin/sqlite3 [0] to /path/libstrata.so [0]: normal symbol `malloc' [GLIBC_2.2.5]
# A reference may also bind to the main program instead of LIB: an executable
# that takes malloc's address makes its own PLT entry the canonical address
# of malloc, and that entry is in turn bound to LIB (its own line). So: every
# binding of malloc/calloc/realloc/free is to LIB, or to an object whose own
# binding of that symbol is to LIB; and malloc is bound to LIB at least once.
bindings_outside_lib() {  # LOG -> prints offending bindings, if any
  sed -nE "s/.*binding file (.*) \[[0-9]+\] to (.*) \[[0-9]+\]: normal symbol \`(malloc|calloc|realloc|free)'.*/\1|\2|\3/p" "$1" |
    awk -F'|' -v lib="$LIB" '
      { from[NR] = $1; to[NR] = $2; sym[NR] = $3; if ($2 == lib) served[$1 "|" $3] = 1; if ($2 == lib && $3 == "malloc") any = 1 }
      END {
        if (!any) print "no binding of malloc to the library at all"
        for (i = 1; i <= NR; i++)
          if (to[i] != lib && from[i] != lib && !served[to[i] "|" sym[i]])
            print from[i] " -> " to[i] ": " sym[i]
      }'
}

check_bindings() {
  local logs=("$WORK"/lddebug/out.*) served=0 log wrong
  [[ -e ${logs[0]} ]] || fail "no ld.so binding log: the preloaded run started no dynamically linked process"
  for log in "${logs[@]}"; do
    grep -qE "symbol \`(malloc|free)'" "$log" || continue  # a process that never looked malloc up
    wrong=$(bindings_outside_lib "$log")
    [[ -z $wrong ]] || fail "malloc was not bound to $LIB in process ${log##*.}:"$'\n'"$wrong"
    served=$((served + 1))
  done
  ((served > 0)) || fail "malloc was not bound to $LIB: no process looked up malloc"
  echo "$LIB served malloc in $served process(es)"
}

declare -F "run_$CASE" >/dev/null || usage
"prepare_$CASE"
declare -A seconds
for MODE in plain preload; do
  mkdir -p "$WORK/$MODE" "$WORK/lddebug"
  start=$(date +%s.%N)
  "run_$CASE" "$WORK/$MODE"  # any failure stops the test (set -e, trap ERR)
  seconds[$MODE]=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
done
# For information only (the preloaded run also writes ld.so's binding log):
echo "wall time: system malloc ${seconds[plain]} s, preloaded ${seconds[preload]} s"

check_bindings
if ! diff -r "$WORK/plain" "$WORK/preload" >"$WORK/diff" 2>&1; then
  head -c 4000 "$WORK/diff" >&2
  fail "$CASE: output with LD_PRELOAD=$LIB differs from the output on the system malloc"
fi
echo "$CASE: identical output with and without LD_PRELOAD=$LIB ($(find "$WORK/plain" -type f -exec cat {} + | wc -c) bytes compared)"

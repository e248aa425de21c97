#!/usr/bin/env bash
# make setup: install what `make test` and `make lab` need on Debian 12.
#  1. Debian packages listed in tools/apt/*.txt (one file per part of strata);
#     as root they are installed, otherwise the exact apt-get line is printed.
#  2. The lab's Python virtual environment (.venv) from lab/pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t wanted < <(cat tools/apt/*.txt | sed 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing Debian packages. Run as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# The lab's Python environment, rebuilt when pyproject.toml changes.
if [[ -f lab/pyproject.toml ]]; then
  if [[ ! -x .venv/bin/python || lab/pyproject.toml -nt .venv/.installed ]]; then
    echo "setup: creating .venv for the lab"
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -e 'lab[test]'
    touch .venv/.installed
  fi
fi

# The Rust crates in rust/ (make test-rust): cargo and a Rust >= 1.85; their
# crates come from crates.io when cargo first builds them.
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found (needed by make test-rust for rust/). Install Rust >= 1.85 with rustup" >&2
  echo "  (Debian 12's apt cargo is too old for the crates' dependencies)." >&2
  exit 1
fi

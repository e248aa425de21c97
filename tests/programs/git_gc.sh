#!/bin/sh
# git_gc.sh SOURCE: clone the bare repository SOURCE (every object through
# pack-objects and index-pack), repack it from scratch (`repack -a -d -f`) on 2 threads
# and check it; prints what must not depend on the allocator: every object
# reachable and how many are packed.
set -eu
git clone -q --bare --no-local "$1" repo.git
git -C repo.git -c pack.threads=2 repack -q -a -d -f
git -C repo.git fsck --no-progress --no-dangling
git -C repo.git rev-list --all --objects | sort | sha256sum
git -C repo.git count-objects -v | grep -E '^(count|in-pack):'
rm -rf repo.git

#!/bin/sh
# redis_job.sh REQUESTS: Debian's redis-server, under the caller's LD_PRELOAD,
# driven by redis-benchmark (on glibc: only the server's allocator is
# measured) over a Unix socket in the working directory: REQUESTS of each of
# redis-benchmark's own tests, pipelined, 8 clients, 256-byte values (a list
# of REQUESTS x 2 elements at its peak). Prints what must not depend on the
# allocator: the data set's digest and size, and the list's length. Debian
# links redis-server with jemalloc: without a preload (the glibc contender)
# libc is preloaded, so that glibc's malloc serves it.
set -eu
requests=$1
sock=$PWD/redis.sock
LD_PRELOAD=${LD_PRELOAD:-/lib/x86_64-linux-gnu/libc.so.6} redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --enable-debug-command yes \
  --logfile "$PWD/redis.log" &
server=$!
client() { env -u LD_PRELOAD "$@"; }
tries=0
until client redis-cli -s "$sock" ping >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -gt 500 ]; then echo "redis-server did not start" >&2; kill "$server"; exit 1; fi
  sleep 0.01
done
client redis-benchmark -s "$sock" -n "$requests" -c 8 -P 16 -d 256 -q \
  -t set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,lrange_100,mset >/dev/null
client redis-cli -s "$sock" debug digest
client redis-cli -s "$sock" dbsize
client redis-cli -s "$sock" llen mylist
client redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1 || true
wait "$server"
rm -f redis.log

#!/bin/sh
# A kubelet probe of `svkit serve` (GET /readyz) against an exec probe of
# `svctl status`, with 10 and 100 live slots in the sandbox: latency and
# CPU per probe, and the server's memory (PSS) at rest. Side by side, one
# run, same machine. Prints a Markdown section on stdout.
#
# CPU per probe: for the exec probe, what `svctl status` costs as a child
# (cutime + cstime of the shell that ran it, R times); for the HTTP probe,
# what the server spends (its utime + stime over R requests). The client's
# own side is the kubelet's in both: not counted. Latency: the exec probe
# timed from the shell (fork, exec, the status); the HTTP probe from one
# python3 client (connect, request, the whole answer).
set -eu
cd "$(dirname "$0")/.."
sbx=./target/$(rustc --print host-tuple)/release/svkit-sandbox
# shellcheck source=bench/sleepers.sh
. bench/sleepers.sh
R=${SERVE_BENCH_RUNS:-200}

# The in-sandbox half: one exec runs the whole measurement, so nsenter is
# not timed. Args: N R.
inside() {
  cat <<'SH'
set -eu
n=$1 R=$2
i=0
until svctl status >/dev/null 2>&1 && [ -S /run/svkit-http.sock ]; do
  i=$((i + 1)); [ "$i" -lt 300 ] || { echo "slots not up" >&2; exit 1; }; sleep 0.1
done
pid=$(s6-svstat -o pid /run/service/svkit-serve)
# utime + stime of PID; cutime + cstime of this shell (children it waited for).
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
cticks() { awk '{ sub(/.*\) /, ""); print $14 + $15 }' "/proc/$$/stat"; }
ns() { date +%s%N; }
pss=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")
c0=$(cticks); t0=$(ns); r=0
while [ "$r" -lt "$R" ]; do svctl status >/dev/null || true; r=$((r + 1)); done
t1=$(ns); c1=$(cticks)
exec_us=$(( (t1 - t0) / R / 1000 )); exec_ticks=$((c1 - c0))
s0=$(ticks "$pid")
http_us=$(python3 - "$R" <<'PY'
import socket, sys, time
R = int(sys.argv[1])
t = time.monotonic()
for _ in range(R):
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/svkit-http.sock")
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    while s.recv(65536):
        pass
    s.close()
print(int((time.monotonic() - t) / R * 1e6))
PY
)
s1=$(ticks "$pid")
hz=$(getconf CLK_TCK)
# Microseconds: exec latency, exec CPU, HTTP latency, HTTP CPU; PSS in KiB.
echo "$exec_us $((exec_ticks * 1000000 / hz / R)) $http_us $(((s1 - s0) * 1000000 / hz / R)) $pss"
SH
}

# CPU (us) per `svkit-sandbox exec ID -- svctl status`, run R times from
# the host: the exec probe as a container runtime makes it, entering the
# container's namespaces from outside (cutime + cstime of the shell that
# ran them). A lower bound of a real runtime's: runc and containerd do
# more than this one setns-and-exec.
runtime_exec_cpu() {
  # shellcheck disable=SC2016 # expanded by that sh
  sh -c 'r=0; while [ "$r" -lt "$3" ]; do "$1" exec "$2" -- svctl status >/dev/null 2>&1 || true; r=$((r + 1)); done
    awk -v R="$3" -v hz="$(getconf CLK_TCK)" "{ sub(/.*\\) /, \"\"); print int((\$14 + \$15) * 1000000 / hz / R) }" /proc/$$/stat' \
    _ "$sbx" "$1" "$R"
}

run_one() { # N: prints one table row
  n=$1
  conf=$(mktemp -d)
  sleepers_rootfs "$conf" "$n" '"http": { "listen": "unix:/run/svkit-http.sock" },'
  inside > "$conf/serve-bench.sh"
  id=$($sbx run -d --rootfs "$conf" -- sleep 100000)
  # shellcheck disable=SC2046 # five numbers
  set -- $($sbx exec "$id" -- sh /serve-bench.sh "$n" "$R")
  rt=$(runtime_exec_cpu "$id")
  $sbx stop "$id" >/dev/null 2>&1 || true
  rm -rf "$conf"
  awk -v n="$n" -v eus="$1" -v ecpu="$2" -v hus="$3" -v hcpu="$4" -v pss="$5" -v rt="$rt" 'BEGIN {
    h = (hcpu > 0 ? hcpu : 1)
    inside = sprintf("%.0fx less", ecpu / h); if (ecpu / h < 20) inside = inside " **missed**"
    outside = sprintf("%.0fx less", rt / h); if (rt / h < 20) outside = outside " **missed**"
    printf "| %d | %.2f | %.2f | %d | %d | %d | %s | %s | %.1f |\n", n, eus / 1000, hus / 1000, ecpu, rt, hcpu, inside, outside, pss / 1024
  }'
}

echo "## svkit serve: GET /readyz against an exec probe of svctl status"
echo
echo "$R probes each. CPU per probe: the exec probe's svctl (user + system, as a child),"
echo "the server's own for the HTTP probe (the client is the kubelet's in both)."
echo
echo "| slots | exec probe (ms) | GET /readyz (ms) | exec CPU inside (us) | exec CPU from the runtime (us) | HTTP CPU (us) | HTTP vs exec inside (target >= 20x less) | HTTP vs exec from the runtime (target >= 20x less) | server PSS at rest (MiB) |"
echo "|---:|---:|---:|---:|---:|---:|---|---|---:|"
run_one 10
run_one 100

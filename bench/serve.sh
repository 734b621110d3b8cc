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
awk -v n="$n" -v eus="$exec_us" -v et="$exec_ticks" -v hus="$http_us" -v ht="$((s1 - s0))" \
    -v R="$R" -v hz="$(getconf CLK_TCK)" -v pss="$pss" 'BEGIN {
  ecpu = et / hz / R * 1e6; hcpu = ht / hz / R * 1e6
  if (ht == 0) verdict = "the server used under one tick in all"
  else {
    verdict = sprintf("%.0fx less", ecpu / hcpu)
    if (ecpu / hcpu < 20) verdict = verdict " **missed**"
  }
  printf "| %d | %.2f | %.2f | %.0f | %.0f | %s | %.1f |\n", n, eus / 1000, hus / 1000, ecpu, hcpu, verdict, pss / 1024
}'
SH
}

run_one() { # N: prints one table row
  n=$1
  conf=$(mktemp -d)
  mkdir -p "$conf/etc/svkit" "$conf/etc/cont-init.d"
  names=$(i=1; while [ "$i" -le "$n" ]; do printf '"i%03d"' "$i"; [ "$i" -lt "$n" ] && printf ','; i=$((i + 1)); done)
  cat > "$conf/etc/svkit/10-bench.json" <<JSON
{ "http": { "listen": "unix:/run/svkit-http.sock" },
  "slots": [ { "name": "s-{instance}", "instances": { "names": [$names] },
               "command": ["sleep", "100000"] } ] }
JSON
  printf '#!/bin/sh\nexec svkit-reconcile >/dev/null\n' > "$conf/etc/cont-init.d/50-svkit"
  chmod +x "$conf/etc/cont-init.d/50-svkit"
  inside > "$conf/serve-bench.sh"
  id=$($sbx run -d --rootfs "$conf" -- sleep 100000)
  $sbx exec "$id" -- sh /serve-bench.sh "$n" "$R"
  $sbx stop "$id" >/dev/null 2>&1 || true
  rm -rf "$conf"
}

echo "## svkit serve: GET /readyz against an exec probe of svctl status"
echo
echo "$R probes each. CPU per probe: the exec probe's svctl (user + system, as a child),"
echo "the server's own for the HTTP probe (the client is the kubelet's in both)."
echo
echo "| slots | exec probe (ms) | GET /readyz (ms) | exec CPU (us) | HTTP CPU (us) | HTTP vs exec CPU (target >= 20x less) | server PSS at rest (MiB) |"
echo "|---:|---:|---:|---:|---:|---|---:|"
run_one 10
run_one 100

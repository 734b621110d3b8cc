# shellcheck shell=sh
# Sourced by the sandbox benches that need N idle slots (status.sh, top.sh, serve.sh),
# never run: a rootfs overlay whose config declares N instances of
# `sleep 100000` (s-i001, s-i002, …) and a cont-init hook that reconciles
# them at boot, as an image's would.

# sleepers_rootfs DIR N [TOP]: write that overlay into DIR (emptied first);
# TOP, top-level keys with a trailing comma, goes in the config too.
sleepers_rootfs() {
  rm -rf "${1:?}"/*
  mkdir -p "$1/etc/svkit" "$1/etc/cont-init.d"
  names=$(i=1; while [ "$i" -le "$2" ]; do printf '"i%03d"' "$i"; [ "$i" -lt "$2" ] && printf ','; i=$((i + 1)); done)
  cat > "$1/etc/svkit/10-bench.json" <<JSON
{ ${3:-}"slots": [ { "name": "s-{instance}", "instances": { "names": [$names] },
               "command": ["sleep", "100000"] } ] }
JSON
  printf '#!/bin/sh\nexec svkit-reconcile >/dev/null\n' > "$1/etc/cont-init.d/50-svkit"
  chmod +x "$1/etc/cont-init.d/50-svkit"
}

# shellcheck shell=bash
# The report half of scale.sh (sourced by it once every run is done, not
# run by `make bench`): reads $tmp/runs ("V N boot status apply floor pss
# nproc" a line, µs and KiB), prints the Markdown section and draws $SVG.
# shellcheck disable=SC2154 # tmp, SIZES, LABEL, ... are scale.sh's

# med V N K: the median of column K of V's runs at N; "-" when it has none.
med() {
  awk -v v="$1" -v n="$2" -v k="$3" '$1 == v && $2 == n && $k != "-" { print $k }' "$tmp/runs" |
    median | awk '{ print } END { if (NR == 0) print "-" }'
}
best() {
  awk -v v="$1" -v n="$2" -v k="$3" '$1 == v && $2 == n { print $k }' "$tmp/runs" | minimum
}
ms() { awk -v u="$1" 'BEGIN { printf (u < 100000 ? "%.1f" : "%.0f"), u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# verdict VALUE LIMIT: met when VALUE <= LIMIT.
verdict() { awk -v r="$1" -v l="$2" 'BEGIN { print (r + 0 <= l + 0) ? "met" : "**missed**" }'; }

# The medians, one "metric variant N value" a line: boot, status, apply
# and floor in µs, pss in KiB, nproc.
: >"$tmp/medians"
for n in "${SIZES[@]}"; do
  for v in "${VARIANTS[@]}"; do
    k=3
    for m in boot status apply floor pss nproc; do
      x=$(med "$v" "$n" "$k")
      [ "$x" = - ] || echo "$m $v $n $x" >>"$tmp/medians"
      k=$((k + 1))
    done
  done
done
# M METRIC V N: one median.
M() { awk -v m="$1" -v v="$2" -v n="$3" '$1 == m && $2 == v && $3 == n { print $4 }' "$tmp/medians"; }
# fit METRIC V: the least-squares slope of log(value) over log(N), then
# of value over N (the marginal cost of one slot, in the metric's unit).
fit() {
  awk -v m="$1" -v v="$2" '$1 == m && $2 == v {
      k++; x[k] = log($3); y[k] = log($4); X[k] = $3; Y[k] = $4 }
    function slope(a, b,   i, ma, mb, sab, saa) {
      for (i = 1; i <= k; i++) { ma += a[i] / k; mb += b[i] / k }
      for (i = 1; i <= k; i++) { sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) ^ 2 }
      return saa ? sab / saa : 0
    }
    END { printf "%.2f %.1f\n", slope(x, y), slope(X, Y) }' "$tmp/medians"
}
loglog() { fit "$1" "$2" | awk '{ print $1 }'; }
marginal() { fit "$1" "$2" | awk '{ print $2 }'; }

# The worst (a)/(b) ratio of METRIC over the sizes, "RATIO at N slots".
worst() {
  local n r w=0 at=
  for n in "${SIZES[@]}"; do
    r=$(ratio "$(M "$1" svkit "$n")" "$(M "$1" "${2:-plain}" "$n")")
    if awk -v r="$r" -v w="$w" 'BEGIN { exit !(r > w) }'; then w=$r at=$n; fi
  done
  echo "$w $at"
}
read -r boot_w boot_at <<<"$(worst boot)"
read -r status_w status_at <<<"$(worst status)"
read -r pss_w pss_at <<<"$(worst pss)"
apply_w=0 apply_at=
for n in "${SIZES[@]}"; do
  r=$(ratio "$(M apply svkit "$n")" "$(M floor svkit "$n")")
  if awk -v r="$r" -v w="$apply_w" 'BEGIN { exit !(r > w) }'; then apply_w=$r apply_at=$n; fi
done
slopes=
v_linear=met
for m in boot status apply pss; do
  s=$(loglog "$m" svkit)
  slopes="$slopes, $m $s"
  [ "$(verdict "$s" 1.1)" = met ] || v_linear="**missed**"
done
slopes=${slopes#, }
top=${SIZES[${#SIZES[@]} - 1]}

# -------------------------------------------------------------- the plot --

{
  for n in "${SIZES[@]}"; do
    for v in "${VARIANTS[@]}"; do
      printf 'boot: docker run → every slot up, ms\t%s\t%s\t%s\n' "${LABEL[$v]}" "$n" "$(ms "$(M boot "$v" "$n")")"
    done
  done
  for n in "${SIZES[@]}"; do
    printf 'status of every slot, ms\t%s\t%s\t%s\n' "svctl status" "$n" "$(ms "$(M status svkit "$n")")"
    printf 'status of every slot, ms\t%s\t%s\t%s\n' "s6-svstat per service dir" "$n" "$(ms "$(M status plain "$n")")"
  done
  for n in "${SIZES[@]}"; do
    printf 'no-op apply, ms\t%s\t%s\t%s\n' "svctl apply" "$n" "$(ms "$(M apply svkit "$n")")"
    printf 'no-op apply, ms\t%s\t%s\t%s\n' "floor: cat every managed file" "$n" "$(ms "$(M floor svkit "$n")")"
  done
  for n in "${SIZES[@]}"; do
    for v in "${VARIANTS[@]}"; do
      printf 'supervision memory, PSS KiB\t%s\t%s\t%s\n' "${LABEL[$v]}" "$n" "$(M pss "$v" "$n")"
    done
  done
} | awk -v xlabel="slots (each with its logger)" -f bench/loglog.awk >"$SVG.new"
mv "$SVG.new" "$SVG"

# ------------------------------------------------------------ the table --

# rows TITLE METRIC FORMAT [B]: one row per size, (a), B's figure (default
# (b)'s), and their ratio.
rows() {
  local title=$1 m=$2 f=$3 b=${4:-plain} n a x
  for n in "${SIZES[@]}"; do
    a=$(M "$m" svkit "$n") x=$(M "$m" "$b" "$n")
    [ "$b" != floor ] || x=$(M floor svkit "$n")
    printf '| %s | %s | %s | %s | %s |\n' "$title" "$n" "$("$f" "$a")" "$("$f" "$x")" "$(ratio "$a" "$x")"
    title=
  done
}
kib() { echo "$1"; }
# persl TITLE: the memory per slot at each size, both.
persl() {
  local title=$1 n
  for n in "${SIZES[@]}"; do
    printf '| %s | %s | %s | %s | |\n' "$title" "$n" \
      "$(awk -v p="$(M pss svkit "$n")" -v n="$n" 'BEGIN { printf "%.1f", p / n }')" \
      "$(awk -v p="$(M pss plain "$n")" -v n="$n" 'BEGIN { printf "%.1f", p / n }')"
    title=
  done
}
# profile V N: the supervision's processes by name in V's last run at N,
# "name ×count PSS" (KiB), the programs left out.
profile() {
  awk '$1 != "sleep" { n[$1]++; p[$1] += $2 } END { for (k in n) print p[k], k, n[k] }' \
    "$tmp/profile-$1-$2" | sort -rn |
    awk '{ printf "%s`%s` ×%d %d", (NR > 1 ? ", " : ""), $2, $3, $1 }'
}
# span V N A [B]: the median over V's runs at N of column A minus column
# B (0: none), in ms; "–" when a run has no figure (no stage stamps).
span() {
  awk -v v="$1" -v n="$2" -v a="$3" -v b="${4:-0}" '$1 == v && $2 == n {
      if ($a == "-" || (b && $b == "-")) print "-"; else print $a - (b ? $b : 0) }' "$tmp/runs" >"$tmp/span"
  if grep -qx -- - "$tmp/span" || [ ! -s "$tmp/span" ]; then echo "–"; else ms "$(median <"$tmp/span")"; fi
}
# steps TITLE A [B]: one row per size, (a)'s span and (b)'s.
steps() {
  local title=$1 n
  for n in "${SIZES[@]}"; do
    printf '| %s | %s | %s | %s |\n' "$title" "$n" "$(span svkit "$n" "$2" "${3:-0}")" "$(span plain "$n" "$2" "${3:-0}")"
    title=
  done
}
# of V N NAME COLUMN: the sum of COLUMN (2: PSS, 3: anonymous) of the
# processes called NAME in V's last run at N, KiB.
of() { awk -v c="$3" -v k="$4" '$1 == c { s += $k } END { print s + 0 }' "$tmp/profile-$1-$2"; }
watch_pss=$(of svkit "$top" svkit 2)
watch_anon=$(of svkit "$top" svkit 3)
watch_small=$(of svkit "${SIZES[0]}" svkit 2)
sup_n=$(awk '$1 == "s6-supervise" { n++; s += $2 } END { printf "%.1f", n ? s / n : 0 }' "$tmp/profile-plain-$top")
log_n=$(awk '$1 == "s6-log" { n++; s += $2 } END { printf "%.1f", n ? s / n : 0 }' "$tmp/profile-plain-$top")
# (a) without its watcher against (b), at the largest size.
rest_ratio=$(ratio "$(($(M pss svkit "$top") - watch_pss))" "$(M pss plain "$top")")
server=$("$DOCKER" version -f '{{.Server.Version}}' 2>/dev/null || echo unknown)
files_a=$(cat "$tmp/files-svkit-$top") files_b=$(cat "$tmp/files-plain-$top")
# The file system under Docker's storage. ext4 without a journal checks,
# for every inode it allocates, whether that inode was freed in the last
# minutes and skips it if so: right after a container's removal (the
# previous run's thousands of files) each new file costs a scan.
storage() {
  local root src fs dev
  root=$("$DOCKER" info -f '{{.DockerRootDir}}' 2>/dev/null) || { echo "unknown"; return; }
  read -r src fs < <(findmnt -no SOURCE,FSTYPE -T "$root" 2>/dev/null) || { echo "unknown"; return; }
  dev=${src%%\[*}
  dev=${dev#/dev/}
  if [ "$fs" = ext4 ] && [ -d "/proc/fs/ext4/$dev" ]; then
    if compgen -G "/proc/fs/jbd2/$dev-*" >/dev/null; then echo "ext4 (with a journal)"; else echo "ext4 without a journal"; fi
  else
    echo "${fs:-unknown}"
  fi
}
store=$(storage)

cat <<MD
## $HEADING

The same N slots in both, N = ${SIZES[*]}, each a shell that writes one
line and execs \`sleep infinity\` (\`sh -c '$PROGRAM'\`, as \`nobody\`),
each with its own logger (\`s6-log\`, 10 archives of 1 MB, the arguments
svkit writes, into a bind-mounted dir per slot): (a) the shipped
Dockerfile's offline image, \`/init\` with no CMD, one templated slot of
N instances in \`/etc/svkit\` (its \`svkit-reconcile\` hook makes the
slots at boot, its \`svkit-log-watch\` service runs); (b) the same
s6-overlay tarballs with N \`/etc/services.d/s-NNN/run\` and \`log/run\`
written by hand (boot.sh's (b) image, the dir mounted). Docker $server,
\`--network none\`, \`--tmpfs /data\` in both. Median of $RUNS runs,
(a) and (b) alternated size by size (which goes first changes every
run), after one warm-up each at ${SIZES[0]} slots. Plot:
[scale.svg](scale.svg) (log-log; the grey dotted line has slope 1).

![scale curves](scale.svg)

- **boot**: from \`docker run -d\` to the moment the host sees every
  slot's line in its log file (polled every 10 ms): every program
  started and every logger writing. Best of the runs in brackets.
- **status**: inside the container (one \`docker exec\`, the clock read
  by bash), one full status of every slot, median of $REPS after a
  warm-up: (a) \`svctl status\` (the table; it reads each slot's and its
  logger's \`supervise/status\`, the config and the log state); (b) what
  an operator of plain s6 runs for the same facts: \`s6-svstat\` on every
  service dir, each slot and its logger, one process a dir.
- **no-op apply**: \`svctl apply\` with nothing changed (checked: every
  slot reported unchanged). Plain s6-overlay has no equivalent to measure:
  \`/etc/services.d\` is copied once at boot, and \`s6-svscanctl -a\`
  only asks for a rescan and returns before it, comparing nothing. So the
  figure stands beside its floor, one \`cat\` of every file \`svctl
  apply\` manages in the scandir (what a no-op must at least read).
- **supervision memory**: once the process set has not changed for 0.5 s,
  every process of the container except the N \`sleep\` programs, its
  PSS counted within the container (\`bench/cpss.c\`, as in the boot
  section).

| measure | slots | (a) svkit | (b) s6-overlay by hand | (a) / (b) |
|---|---:|---:|---:|---:|
$(rows "boot: \`docker run\` → every slot up, ms" boot ms)
$(rows "status of every slot, ms" status ms)
$(rows "no-op apply, ms ((b): its floor, \`cat\` of every managed file)" apply ms floor)
$(rows "supervision memory, PSS KiB" pss kib)
$(persl "supervision memory / slots, KiB")
$(rows "supervision processes" nproc kib)

| target | measured | verdict |
|---|---:|---|
| boot: (a) ≤ 1.1 × (b) at every size | worst ${boot_w}× (${boot_at} slots) | $(verdict "$boot_w" 1.1) |
| status: (a) ≤ 1.1 × (b) at every size | worst ${status_w}× (${status_at} slots) | $(verdict "$status_w" 1.1) |
| supervision memory: (a) ≤ 1.1 × (b) at every size | worst ${pss_w}× (${pss_at} slots) | $(verdict "$pss_w" 1.1) |
| no-op apply: no (b) to compare; (a) ≤ 2 × its floor (the apply section's target) | worst ${apply_w}× (${apply_at} slots) | $(verdict "$apply_w" 2) |
| growth no worse than linear: (a)'s fitted log-log slopes ≤ 1.1 | $slopes | $v_linear |

Per slot, from a least-squares line through the ${#SIZES[@]} sizes (the
marginal cost of one more slot with its logger; the fixed part is the
rest): boot (a) $(marginal boot svkit | awk '{ printf "%.1f", $1 / 1000 }') ms, (b) $(marginal boot plain | awk '{ printf "%.1f", $1 / 1000 }') ms; status (a) $(marginal status svkit | awk '{ printf "%.3f", $1 / 1000 }') ms, (b) $(marginal status plain | awk '{ printf "%.3f", $1 / 1000 }') ms;
supervision memory (a) $(marginal pss svkit) KiB, (b) $(marginal pss plain) KiB
(the trial measured about 21.5 KiB). Fitted log-log slopes of (b): boot
$(loglog boot plain), status $(loglog status plain), memory $(loglog pss plain) (1 is
linear; a fixed part pulls a slope below 1).

Where the boot goes (median ms of each step over the same runs, so the
steps need not add up to the total): the engine's part, up to the
container's start (\`State.StartedAt\`), then the steps s6-overlay stamps in
\`docker logs -t\`, from that start. (a)'s slots start as soon as
\`svkit-reconcile\` has made them, within \`cont-init.d\`: its last step
can be negative.

| step | slots | (a) svkit | (b) s6-overlay by hand |
|---|---:|---:|---:|
$(steps "\`docker run\` → container started (engine)" 9)
$(steps "… → s6-overlay's \`legacy-cont-init\` starts" 11)
$(steps "… \`cont-init.d\` ((a): \`svkit-reconcile\` makes the slots; (b): none)" 12 11)
$(steps "… \`legacy-services\` ((b): \`services-up\` copies \`services.d\`; (a): the log watcher)" 13 12)
$(steps "… → every slot up, after \`legacy-services\`" 10 13)

What the supervision is made of at $top slots (the last run; PSS KiB by
process name, the programs left out):

- ${LABEL[svkit]}: $(profile svkit "$top")
- ${LABEL[plain]}: $(profile plain "$top")

Why the figures are what they are:

- **Boot** grows with the files each slot needs on the container's
  \`/run\`: s6-overlay finds no tmpfs there under a plain \`docker run\`,
  so \`/run\` is the image's overlay file system, where every new
  directory, file and FIFO is a metadata write to the host's disk. (a)
  makes each slot's dirs and files in \`cont-init.d\` (\`svkit-reconcile\`:
  $(span svkit "$top" 12 11) ms at $top slots), (b) has \`services-up\` copy each
  \`services.d\` dir and link it in \`legacy-services\` ($(span plain "$top" 13 12) ms); then in both
  s6-svscan starts two supervisors a slot, each makes its \`supervise/\`
  files and runs its \`run\` script ((a)'s also claims its pid with
  \`svkit slot-claim\` and sets up through \`with-contenv\`; its logger's
  script checks the log dir) — the last row above, most of the total.
  One slot with its logger ends up with ${files_a} dirs, files and FIFOs
  on \`/run\` in (a) (its \`finish\`, \`timeout-finish\`, svkit's marker
  and the program's pid record are the extra ones) and ${files_b} in (b).
  Docker's storage here is ${store}$(case $store in
    "ext4 without a journal") printf '%s' ": such an ext4 skips, at every
  inode it allocates, the inodes freed in the last minutes, so right after
  the previous container's removal each new file costs a scan, and the
  boot grows with the files made more than on most hosts" ;;
  esac). Both curves grow by about the same per slot; where a ratio moves
  from size to size and run to run, so does (b) against itself: this is a
  disk- and CPU-bound boot on a shared machine.
- **Memory**: the processes are the same in (a) and (b) — one
  \`s6-supervise\` per service (${sup_n} KiB each here: the trial's 21.5 KiB a
  slot matches this one process, not a slot with its logger) and one \`s6-log\` per logger (${log_n} KiB), so
  about $(awk -v a="$sup_n" -v b="$log_n" 'BEGIN { printf "%.0f", 2 * a + b }') KiB a slot with its logger — plus, in (a), svkit's log
  watcher (\`svkit log-watch\`, one process whatever the number of slots,
  under its own \`s6-supervise\`): ${watch_small} KiB at ${SIZES[0]} slots, ${watch_pss} KiB at $top
  (${watch_anon} KiB of it anonymous: its heap, each slot's log dir it
  keeps of the config, and its stack; the rest is pages
  of the static svkit binary it runs, mapped by it alone). Without it, (a) is ${rest_ratio}× (b) at $top slots. That one process is the
  whole difference, and at ${SIZES[0]} slots it is more than 10% of (b)'s
  entire supervision: no process of the svkit binary fits in that
  margin (the kernel maps it around every page it runs, so any process
  of it that stays holds most of the binary's pages), and the 1.1× target
  holds at small sizes only without a resident watcher — the one that
  reports a full log disk, a vanished log dir or a stalled pipe in
  \`docker logs\` and mends the dir and the lock ([config.md](config.md#when-logging-fails)).
- **status**: \`svctl status\` is one process that reads every status file
  itself; the s6-svstat loop starts two processes a slot.
- **no-op apply** reads, renders and compares every managed file; its
  cost over the \`cat\` floor is the config load, the render and its own
  start-up.
MD

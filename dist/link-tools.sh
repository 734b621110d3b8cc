#!/bin/sh
# dist/link-tools.sh DIR: links every tool name DIR/svkit answers to
# (`svkit --list`) to it, inside DIR, as an image installs it. For the
# target dirs, so scripts can run `DIR/svctl` as they would in an image.
set -eu
dir=${1:?usage: dist/link-tools.sh DIR}
names=$("$dir/svkit" --list) || {
  printf 'dist/link-tools.sh: fatal: %s/svkit --list failed\n' "$dir" >&2
  exit 111
}
for t in $names; do ln -sfn svkit "$dir/$t"; done

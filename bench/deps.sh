#!/usr/bin/env bash
# What the full `make bench` needs beyond `make deps` (which brings gcc for the C yardstick and the
# project's .venv with Shapely, NumPy and psycopg2): PostGIS 3 for PostgreSQL 15 and wrk (HTTP load),
# from Debian. Idempotent: one line and no network when everything is present. `make bench-deps` runs it.
set -euo pipefail

packages=(postgresql-15 postgresql-15-postgis-3 wrk)
installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)"
missing=()
for package in "${packages[@]}"; do
    grep -qx "$package install ok installed" <<<"$installed" || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
    echo "bench-deps: all ${#packages[@]} Debian packages present"
    exit 0
fi
echo "bench-deps: installing ${missing[*]}"
sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

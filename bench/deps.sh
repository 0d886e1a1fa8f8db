#!/usr/bin/env bash
# Installs what `make bench` needs beyond `make deps`: PostGIS 3 for PostgreSQL 15 (Debian), wrk (HTTP load), gcc for the C
# yardstick, and a private Python venv (bench/work/venv) with Shapely 2, NumPy and psycopg2 from PyPI.
# Idempotent: does nothing (and needs no network) when everything is present. `make bench-deps` runs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$here/work"
mkdir -p "$work"

packages=(postgresql-15 postgresql-15-postgis-3 gcc python3-venv wrk)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
    echo "bench-deps: installing ${missing[*]}"
    sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    echo "bench-deps: all ${#packages[@]} Debian packages present"
fi

venv="$work/venv"
if ! "$venv/bin/python" -c 'import shapely, numpy, psycopg2; assert shapely.__version__ >= "2"' 2>/dev/null; then
    echo "bench-deps: creating $venv (shapely, numpy, psycopg2-binary)"
    python=/usr/bin/python3; [[ -x $python ]] || python="$(command -v python3)"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "shapely>=2,<3" numpy psycopg2-binary
else
    echo "bench-deps: $venv ready ($("$venv/bin/python" -c 'import shapely; print("shapely", shapely.__version__)'))"
fi

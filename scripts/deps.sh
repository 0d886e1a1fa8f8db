#!/usr/bin/env bash
# Installs the Debian packages Perimeter needs, only those that are missing.
# Does nothing (and needs no network) when everything is already installed.
set -euo pipefail

packages=(
    gzip          # the geodesic conformance test reads a .gz fixture
    make
    libsqlite3-dev  # PerimeterSQLite (the CSQLite system library target)
    libmicrohttpd-dev  # PerimeterHTTP (the CMicroHTTPD system library target): perimeter serve
    chromium           # the live map page test drives headless Chromium (skipped when missing)
    python3-websocket  # scripts/browser-check.py speaks Chromium's DevTools protocol (/usr/bin/python3)
)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
    echo "deps: all ${#packages[@]} Debian packages present"
    exit 0
fi

echo "deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The dependency step of every make target that builds, tests, demonstrates or benchmarks (make deps).
#
# 1. Installs the Debian packages Perimeter needs, only those that are missing.
# 2. Creates the project's Python virtual environment, .venv (ignored by git), with the tools of
#    scripts/python-tools.txt; Debian's own Python refuses `pip install` outside one.
#
# Idempotent: when everything is present it needs no network, takes a few tens of milliseconds and
# prints one line. When something is missing it says what it installs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
    gzip               # the geodesic conformance test reads a .gz fixture
    make
    gcc                # the benchmark's C yardstick (refgrid)
    libsqlite3-dev     # PerimeterSQLite (the CSQLite system library target)
    libmicrohttpd-dev  # PerimeterHTTP (the CMicroHTTPD system library target): perimeter serve
    libcurl4-openssl-dev  # PerimeterHTTPClient (the CCurl system library target): webhooks over http and https
    libssl-dev         # PerimeterCrypto (the CCrypto system library target): SHA-256, HMAC, CRYPTO_memcmp
    libnats-dev        # PerimeterNATS (the CNATS system library target): the cluster's JetStream client
    nats-server        # the cluster tests start their own NATS servers (docs/cluster.md)
    openssl            # the HTTPS webhook tests make a throw-away CA and certificates with it
    python3            # scripts/webhook-receiver.py: the HTTPS receiver of the webhook tests and benchmark
    chromium           # the live map page test drives headless Chromium
    python3-websocket  # scripts/browser-check.py speaks Chromium's DevTools protocol (/usr/bin/python3)
    python3-venv       # the project's virtual environment, .venv
)
requirements="$root/scripts/python-tools.txt"
venv="$root/.venv"
stamp="$venv/perimeter-python-tools.txt"   # a copy of the requirements the venv was made from

# One dpkg-query for every package: a package that is unknown or not fully installed is missing.
installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)"
missing=()
for package in "${packages[@]}"; do
    grep -qx "$package install ok installed" <<<"$installed" || missing+=("$package")
done
venv_ready=false
if [[ -x $venv/bin/python ]] && cmp -s "$requirements" "$stamp"; then venv_ready=true; fi

if ((${#missing[@]} == 0)) && $venv_ready; then
    echo "deps: all ${#packages[@]} Debian packages present; .venv ready"
    exit 0
fi

if ((${#missing[@]} > 0)); then
    echo "deps: installing Debian packages: ${missing[*]}"
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! $venv_ready; then
    tools="$(grep -o '^[^#[:space:]]*' "$requirements" | grep . | tr '\n' ' ')"
    echo "deps: creating .venv with ${tools% } (PyPI; about a minute)"
    rm -rf "$venv"
    # Debian's interpreter: python3-venv above belongs to it, whatever python3 comes first on PATH.
    python=/usr/bin/python3
    [[ -x $python ]] || python="$(command -v python3)"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --requirement "$requirements"
    cp "$requirements" "$stamp"   # last: an interrupted install is redone next time
fi
echo "deps: done"

#!/usr/bin/env bash
# Installs the Debian packages troupe builds with, skipping those already present.
# Used by `make demo`, `make test` and .ci/run; arguments name extra packages (make fuzz).
# Needs root (or sudo) only when something is missing.
set -euo pipefail
packages=(build-essential cmake ccache clang-format libcaf-dev protobuf-compiler libprotobuf-dev
          libboost-dev libboost-program-options-dev libgtest-dev libgmock-dev libopenblas-dev
          libyaml-cpp-dev libssl-dev python3 libdnnl-dev zlib1g-dev)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "troupe: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

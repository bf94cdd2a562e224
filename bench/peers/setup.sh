#!/usr/bin/env bash
# Installs the peers troupe is compared with, from package registries only, idempotently:
#   - PyTorch (with gloo), OpenMPI + mpi4py, numpy and matplotlib from Debian's archive;
#   - TensorFlow CPU from PyPI, pinned, in a virtual environment beside this script (git-ignored).
# Nothing here runs at troupe build time; bench/run-all calls it first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The pinned TensorFlow release (the newest tensorflow-cpu wheel on PyPI when this was written).
TF_VERSION="${TF_VERSION:-2.21.0}"
DEBIAN_PACKAGES=(python3-torch openmpi-bin libopenmpi-dev python3-mpi4py python3-numpy
                 python3-matplotlib python3-venv iproute2 util-linux)

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "peers: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
    install -y --no-install-recommends "${missing[@]}" >&2
fi

venv="$here/.venv"
if ! "$venv/bin/python" -c "import tensorflow as tf, sys; sys.exit(tf.__version__ != '$TF_VERSION')" \
     2>/dev/null; then
  echo "peers: installing tensorflow-cpu==$TF_VERSION from PyPI into $venv" >&2
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "tensorflow-cpu==$TF_VERSION" >&2
fi
echo "peers: ready (tensorflow-cpu $TF_VERSION in $venv; torch, OpenMPI from Debian)" >&2

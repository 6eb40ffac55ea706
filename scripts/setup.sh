#!/usr/bin/env bash
# Installs what kbench needs on Debian 12 (idempotent, quiet; run as root or with sudo available),
# then configures and builds the CPU flavour into build/. The CUDA toolkit is expected at
# /usr/local/cuda (NVRTC compiles without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build libtorch-dev python3-torch python3-numpy
          libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev catch2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=(); [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ! -x /usr/local/cuda/bin/nvcc && ! -e /usr/local/cuda/lib64/libnvrtc.so ]]; then
  echo "setup: the CUDA toolkit (NVRTC) is missing at /usr/local/cuda; install CUDA 12 or 13 there" >&2
  exit 1
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake --preset cpu >/dev/null
cmake --build --preset cpu
echo "setup: built build/kbench"

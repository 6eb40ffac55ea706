#!/usr/bin/env bash
# Installs what kbench needs on Debian 12 (idempotent, quiet; run as root or with sudo available),
# then configures and builds the CPU flavour into build/, and puts kbench on the PATH (as root:
# /usr/local/bin/kbench; otherwise it prints the command that does). The CUDA toolkit is expected at
# /usr/local/cuda (NVRTC compiles without a GPU). A bare Debian 12 with the toolkit is enough: the
# compiler, CMake, Ninja, Python, Debian's libtorch and the libraries (libmicrohttpd and cpp-httplib
# for kbench serve among them) come from apt.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH:/usr/sbin:/sbin

cuda_lib=
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  compgen -G "$dir/libnvrtc.so*" >/dev/null && { cuda_lib=$dir; break; }
done
if [[ -z $cuda_lib ]]; then
  echo "setup: the CUDA toolkit (NVRTC) is missing at /usr/local/cuda; install CUDA 12 or 13 there" >&2
  exit 1
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "setup: installing packages needs root: run this as root, or install sudo" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

start=$SECONDS
packages=(build-essential cmake ninja-build libtorch-dev python3-torch python3-numpy python3-dev pybind11-dev
          libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev catch2 libcpp-httplib-dev libmicrohttpd-dev libcsv-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# NVRTC opens libnvrtc-builtins by name at run time, through the loader's cache: a toolkit installed
# without a loader entry (the runfile installer, a copied directory) would fail every compile.
if ! ldconfig -p | grep libnvrtc-builtins >/dev/null; then
  echo "setup: adding $cuda_lib to the dynamic loader's paths (/etc/ld.so.conf.d/kbench-cuda.conf)"
  echo "$cuda_lib" | "${sudo_cmd[@]}" tee /etc/ld.so.conf.d/kbench-cuda.conf >/dev/null
  "${sudo_cmd[@]}" ldconfig
fi
installed=$SECONDS

cmake --preset cpu >/dev/null
cmake --build --preset cpu
echo "setup: built build/kbench (packages $((installed - start)) s, build $((SECONDS - installed)) s)"

# kbench on the PATH: installed into /usr/local/bin where this runs as root, else the line that does.
if [[ $(id -u) -eq 0 ]]; then
  cmake --install build >/dev/null
  echo "setup: installed $(command -v kbench || echo /usr/local/bin/kbench)"
else
  echo "setup: to put kbench on the PATH: sudo cmake --install build"
fi

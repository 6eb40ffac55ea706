#!/usr/bin/env bash
# libmicrohttpd and cpp-httplib (kbench serve) and libcsv (--ncu) for a machine where apt cannot install them, such as a GPU machine without
# network: Debian 12's packages are downloaded on a machine with apt, carried over in .deb/
# (git-ignored), and unpacked there beside the build. CMake finds the unpacked copy through
# CMAKE_PREFIX_PATH; its shared library then finds its own dependencies (Brotli) beside it.
#   scripts/fetch-debs.sh download        # here: the .debs into .deb/
#   scripts/fetch-debs.sh unpack DIR      # there: unpack them into DIR, then: cmake -DCMAKE_PREFIX_PATH=DIR/usr
#   scripts/fetch-debs.sh cmake-args DIR  # what the GPU scripts pass to cmake: nothing where both are
#                                         # installed, else the prefix of the copy it unpacks into DIR
set -euo pipefail
cd "$(dirname "$0")/.."
# cpp-httplib, its headers' dependencies (OpenSSL, zlib and Brotli headers: Debian builds it with
# all three) and the Brotli libraries it links (OpenSSL and zlib are on every system); libcsv;
# libmicrohttpd (it links GnuTLS, which every system with apt has).
PACKAGES=(libcpp-httplib-dev libcpp-httplib0.11 libssl-dev zlib1g-dev libbrotli-dev libbrotli1 libcsv-dev libcsv3
          libmicrohttpd-dev libmicrohttpd12)
case ${1:-} in
download)
  mkdir -p .deb
  (cd .deb && apt-get download "${PACKAGES[@]}")
  ls -l .deb ;;
unpack)
  dest=${2:?usage: scripts/fetch-debs.sh unpack DIR}
  compgen -G ".deb/*.deb" >/dev/null || { echo "fetch-debs: no .deb/*.deb here: run scripts/fetch-debs.sh download where apt works, and carry .deb/ over" >&2; exit 1; }
  mkdir -p "$dest"
  for deb in .deb/*.deb; do dpkg -x "$deb" "$dest"; done
  echo "fetch-debs: unpacked $(ls .deb/*.deb | wc -l) packages into $dest: cmake -DCMAKE_PREFIX_PATH=$dest/usr" ;;
cmake-args)
  dest=${2:?usage: scripts/fetch-debs.sh cmake-args DIR}
  if [[ ! -f /usr/include/httplib.h || ! -f /usr/include/csv.h || ! -f /usr/include/microhttpd.h ]]; then
    "$0" unpack "$dest" >&2
    echo "-DCMAKE_PREFIX_PATH=$(realpath "$dest")/usr"
  fi ;;
*)
  echo "usage: scripts/fetch-debs.sh download | unpack DIR | cmake-args DIR" >&2
  exit 2 ;;
esac

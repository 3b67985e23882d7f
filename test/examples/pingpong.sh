#!/bin/bash
# Usage: pingpong.sh BUILD_DIR EXAMPLES_DIR
# Installs BUILD_DIR into a scratch prefix, builds examples/pingpong through the CMake package
# and through pkg-config, and runs each as server and client with data verification.
set -euo pipefail
build=$1
src=$2
if ! ibv_devinfo 2>/dev/null | grep -q PORT_ACTIVE; then
    echo "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ibmsg-example.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -1)
PKG_CONFIG_PATH=$libdir cc -o "$work/pingpong-pc" "$src/pingpong.c" \
    $(PKG_CONFIG_PATH=$libdir pkg-config --cflags --libs ibmsg) -Wl,-rpath,"${libdir%/pkgconfig}"

run_pair() { # binary port
    "$1" -s 4096 -n 200 -p "$2" & server=$!
    "$1" -s 4096 -n 200 -p "$2" 127.0.0.1
    wait "$server"
}
port=$((20000 + RANDOM % 20000))
run_pair "$work/cmake/pingpong" "$port"
run_pair "$work/pingpong-pc" "$((port + 1))"
echo "example_pingpong: ok"

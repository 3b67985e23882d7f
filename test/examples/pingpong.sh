#!/bin/bash
# Usage: pingpong.sh build|run BUILD_DIR EXAMPLES_DIR WORK_DIR
#   build: install BUILD_DIR into WORK_DIR/prefix, build examples/pingpong through the CMake
#          package (WORK_DIR/cmake/pingpong) and through pkg-config (WORK_DIR/pingpong-pc)
#   run:   run each as server and client (data verified by the program), examples/first
#          (README.md's first program, output compared) and examples/event_loop (lines each way
#          through one epoll of ibmsg's fd and stdin, output compared); builds when needed
set -euo pipefail
mode=$1 build=$2 src=$3 work=$4

do_build() {
    rm -rf "$work"
    mkdir -p "$work"
    cmake --install "$build" --prefix "$work/prefix" >/dev/null
    cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
    cmake --build "$work/cmake" >/dev/null
    local pc
    pc=$(dirname "$(find "$work/prefix" -name ibmsg.pc | head -1)")
    # --define-variable: the .pc names the configured prefix, not this scratch one.
    cc -o "$work/pingpong-pc" "$src/pingpong.c" \
        $(PKG_CONFIG_PATH=$pc pkg-config --define-variable=prefix="$work/prefix" --cflags --libs ibmsg) \
        -Wl,-rpath,"$(dirname "$pc")"
    "$work/pingpong-pc" -h 2>/dev/null || [ $? -eq 2 ] # links and starts
}

run_pair() { # binary port
    "$1" -s 4096 -n 200 -p "$2" &
    local server=$!
    "$1" -s 4096 -n 200 -p "$2" 127.0.0.1
    wait "$server"
}

case $mode in
build) do_build ;;
run)
    if ! ibv_devinfo 2>/dev/null | grep PORT_ACTIVE >/dev/null; then
        echo "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
        exit 77
    fi
    # Built by example_build, or again here when missing or older than an example's source or
    # the library (ctest -R example_pingpong after an edit runs what was edited).
    [ -x "$work/cmake/pingpong" ] && [ -x "$work/cmake/first" ] && [ -x "$work/pingpong-pc" ] &&
        [ -x "$work/cmake/event_loop" ] &&
        [ -z "$(find "$src" "$build"/libibmsg.so.* -newer "$work/pingpong-pc" -print -quit 2>/dev/null)" ] ||
        do_build
    port=$((20000 + RANDOM % 20000))
    run_pair "$work/cmake/pingpong" "$port"
    run_pair "$work/pingpong-pc" "$((port + 1))"
    # README.md's first program: one message each way, counted by the tool interface.
    first=$work/cmake/first
    "$first" "$((port + 2))" >"$work/first-server.out" &
    server=$!
    "$first" "$((port + 2))" 127.0.0.1 >"$work/first-client.out"
    wait "$server"
    printf 'server got "ping"\ncore_eager_msgs_sent: 1\n' | diff - "$work/first-server.out"
    printf 'client got "pong"\ncore_eager_msgs_sent: 1\n' | diff - "$work/first-client.out"
    # examples/event_loop: ibmsg and stdin in one epoll; lines each way, then goodbyes.
    loop=$work/cmake/event_loop
    printf 'hello\nworld\n' | "$loop" "$((port + 3))" >"$work/loop-server.out" &
    server=$!
    # The client's input stays open a second after its line: the server's goodbye (its input
    # ends at once) arrives first, and the client goes on reading its input without a receive.
    (sleep 1; printf 'ping\n'; sleep 1) | "$loop" "$((port + 3))" 127.0.0.1 >"$work/loop-client.out"
    wait "$server"
    printf 'got: ping\n' | diff - "$work/loop-server.out"
    printf 'got: hello\ngot: world\n' | diff - "$work/loop-client.out"
    echo "example_pingpong: ok"
    ;;
*) echo "usage: $0 build|run BUILD_DIR EXAMPLES_DIR WORK_DIR" >&2; exit 2 ;;
esac

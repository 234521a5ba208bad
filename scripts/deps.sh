#!/usr/bin/env bash
# Installs hq's build dependencies from Debian packages when any is missing. Idempotent:
# does nothing (and needs no network) when everything is already there.
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config file
      lld  # links the static binaries fast, and lays out hq's client code (cmake/hot_symbols.txt)
      libasio-dev libsqlite3-dev libmbedtls-dev libhwloc-dev libcli11-dev
      libtomlplusplus-dev libspdlog-dev libfmt-dev doctest-dev
      libprotobuf-dev protobuf-compiler clang libclang-rt-14-dev
      libboost-dev curl  # HTTP: Boost.Beast's parser (header-only, net/http_server.cpp); curl for its tests
      libpmix-dev libevent-dev   # srun --mpi=pmix: OpenPMIx linked statically (cmd/agent/pmix_server.cpp)
      libpq-dev postgresql-server-dev-15 libssl-dev  # the accounting store's PostgreSQL backend, libpq linked statically
      postgresql-15  # a private PostgreSQL server for the accounting store's tests (initdb in the build dir)
      iproute2   # ip netns: the multi-host end-to-end test
      gdb        # what a command builds as it starts (scripts/check_lazy_streams.sh)
      python3    # the chaos suite's proxy and invariant checks (scripts/chaos.sh)
      openmpi-bin python3-mpi4py  # mpirun across nodes through srun (tests/e2e/steps_test.cpp)
      mpich libmpich-dev  # MPICH programs under srun --mpi=pmi2 (tests/e2e/pmi_test.cpp; mpicc.mpich)
      chromium)  # the web dashboard's tests in a real browser (tests/e2e/dashboard_test.cpp)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

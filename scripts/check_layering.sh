#!/usr/bin/env bash
# Fails when core/ reaches outside the standard library or reads a clock (it must stay
# pure domain logic; time is injected), or when any layer names a standard stream bare.
# Run by CTest as layering_core_is_pure.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fail=0
if grep -rnE '#include *[<"](asio|sqlite3|mbedtls|spdlog|fmt|google/protobuf|hwloc|toml|CLI|hq\.pb|net/|store/|cmd/)' "$root/core"; then
  echo "core/ includes an I/O library or an outer layer"; fail=1
fi
if grep -rnE '(system_clock|steady_clock|high_resolution_clock)::now|[^_]time\(nullptr\)|gettimeofday|clock_gettime' "$root/core"; then
  echo "core/ reads the clock; inject time instead"; fail=1
fi
if grep -rnE '\b(getenv|fopen|ifstream|ofstream|socket|fork|exec[lv]p?)\(' "$root/core"; then
  echo "core/ does I/O; move it to net/, store/ or cmd/"; fail=1
fi
# The static executables build the standard streams at first use (core/std_streams.hpp):
# a bare std::cout before that is zeroed memory. Comment lines are not code.
if grep -rnE '\bstd::(cout|cerr|clog|cin|wcout|wcerr|wclog|wcin)\b' "$root/core" "$root/cmd" "$root/net" "$root/store" \
    | grep -v -e '/core/std_streams\.cpp:' | grep -vE '^[^:]+:[0-9]+: *//'; then
  echo "the standard streams are named bare; use hq::cout(), hq::cerr() or hq::cin() (core/std_streams.hpp)"; fail=1
fi
if grep -rnE 'using +namespace +std *;' "$root/core" "$root/cmd" "$root/net" "$root/store"; then
  echo "using namespace std: it would let a bare cout past the check above"; fail=1
fi
[ $fail -eq 0 ] && echo "core/ is pure"
exit $fail

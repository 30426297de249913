#!/usr/bin/env bash
# scripts/setup.sh -- installs what ania's build, tests and benchmarks need, from Debian 12's packages only.
# Idempotent: when everything is installed it asks dpkg and returns (well under a second).
set -euo pipefail

packages=(
  meson ninja-build pkgconf cmake g++ clang python3
  libboost1.81-dev nlohmann-json3-dev catch2 libsqlite3-dev sqlite3 libbenchmark-dev zlib1g-dev
  libclang-rt-14-dev gcovr
  libicu-dev   # tests only: the generated Unicode tables are checked against ICU
  libcurl4-openssl-dev   # the model clients (ania-openai)
  libcpp-httplib-dev     # tests only: the loopback HTTP server the clients are tested against
  libpq-dev              # the PostgreSQL store (ania-postgres)
  postgresql-15          # tests only: the throwaway cluster the PostgreSQL tests start
  pgbouncer              # tests only: the PostgreSQL suite once more through PgBouncer in transaction mode
  chromium chromium-driver python3-selenium   # tests only: the admin console's page in a real headless browser
)

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"

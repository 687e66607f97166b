# Sourced by the fetch-debian-*.sh scripts: an apt configuration of kfdo's own (its own
# sources list, lists, caches and an empty dpkg status), so that nothing here reads or
# changes the system's apt. apt still checks every download against the Release file
# signed by Debian's archive key.
#
#   isolated_apt_setup ROOT LINE    # LINE: one sources.list line, e.g.
#                                   #   "deb-src [signed-by=KEYRING] MIRROR bookworm main"
#   apt-get "${apt_opts[@]}" ...    # then use apt with these options
#   isolated_apt_update ROOT        # refreshes the index once a day at most

keyring=/usr/share/keyrings/debian-archive-keyring.gpg

isolated_apt_check_tools() {
  local tool
  for tool in apt-get "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "$(basename "$0"): '$tool' not found (install: apt-get install dpkg-dev util-linux apt)" >&2
      exit 1
    fi
  done
  if [ ! -r "$keyring" ]; then
    echo "$(basename "$0"): $keyring missing (install: apt-get install debian-archive-keyring)" >&2
    exit 1
  fi
}

isolated_apt_setup() {
  local root="$1" line="$2"
  mkdir -p "$root/etc/sources.list.d" "$root/etc/preferences.d" \
           "$root/state/lists/partial" "$root/cache/archives/partial"
  touch "$root/state/status"
  printf '%s\n' "$line" >"$root/etc/sources.list"
  apt_opts=(
    -o "Dir::Etc::SourceList=$root/etc/sources.list"
    -o "Dir::Etc::SourceParts=$root/etc/sources.list.d"
    -o "Dir::Etc::Preferences=$root/etc/preferences"
    -o "Dir::Etc::PreferencesParts=$root/etc/preferences.d"
    -o "Dir::State=$root/state"
    -o "Dir::State::Lists=$root/state/lists"
    -o "Dir::State::status=$root/state/status"
    -o "Dir::Cache=$root/cache"
    -o "Dir::Cache::pkgcache="
    -o "Dir::Cache::srcpkgcache="
    -o "APT::Sandbox::User=root"
    -o "Debug::NoLocking=1"
  )
}

isolated_apt_update() {
  local root="$1" stamp="$1/state/.updated"
  if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
    echo "$(basename "$0"): updating the isolated index ($(cat "$root/etc/sources.list"))" >&2
    apt-get "${apt_opts[@]}" -qq update >&2
    touch "$stamp"
  fi
}

#!/usr/bin/env bash
# Builds, or reuses, the Debian bookworm root filesystem that the real-systemd
# end-to-end tests boot with systemd-nspawn, and prints its path on stdout.
#
# The cache key is the hash of this file: the file is the recipe, so any change
# to it (packages, masked units, configuration) builds a new tree beside the
# old one instead of silently reusing a tree made by another recipe.
#
# Usage: scripts/e2e-rootfs.sh
# Environment:
#   AKS_FLEX_NODE_E2E_CACHE   cache directory (default /var/cache/aks-flex-node-e2e)
#   AKS_FLEX_NODE_E2E_MIRROR  Debian mirror URL (default: the bookworm entry of
#                             this machine's /etc/apt/sources.list*)
set -euo pipefail

readonly script_name="${0##*/}"
readonly suite="bookworm"
# systemd and dbus boot the host; the rest is what the product's scripts call.
# procps (ps, pgrep) is there for people debugging a scenario by hand.
# iproute2, nftables and iptables: the real-shaped node
# (test/e2e/harness/real-node.ts) lays out links, policy routes, nft tables
# and the Go releases' iptables nat chains, and reset removes them.
readonly packages="systemd,systemd-sysv,dbus,bash,curl,tar,jq,coreutils,util-linux,procps,iproute2,nftables,iptables"
# Units that only add boot time or noise in a throwaway container: nobody logs
# in on the console, and the maintenance timers would fire during a scenario.
readonly masked_units=(
  console-getty.service
  apt-daily.timer
  apt-daily-upgrade.timer
  dpkg-db-backup.timer
  e2scrub_all.timer
  fstrim.timer
)
readonly cache_dir="${AKS_FLEX_NODE_E2E_CACHE:-/var/cache/aks-flex-node-e2e}"

build_dir=""

log() {
  printf '%s: %s\n' "$script_name" "$*" >&2
}

die() {
  log "error: $*"
  exit 1
}

require_root_and_tools() {
  [[ ${EUID} -eq 0 ]] || die "must run as root (debootstrap and chroot need it)"
  local tool
  for tool in debootstrap sha256sum flock findmnt chroot; do
    command -v "${tool}" >/dev/null || die "${tool} not found; install it (apt-get install debootstrap util-linux)"
  done
}

recipe_hash() {
  sha256sum "${BASH_SOURCE[0]}" | cut -c1-16
}

# Prints the first URI of a deb822 stanza (*.sources) or one-line entry
# (*.list) that serves the suite, so the build talks only to the mirror this
# machine is already configured for.
find_mirror() {
  if [[ -n ${AKS_FLEX_NODE_E2E_MIRROR:-} ]]; then
    printf '%s\n' "${AKS_FLEX_NODE_E2E_MIRROR}"
    return
  fi
  local file mirror=""
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f ${file} ]] || continue
    if [[ ${file} == *.sources ]]; then
      mirror="$(awk -v suite="${suite}" -f - "${file}" <<'AWK'
BEGIN { RS = ""; FS = "\n" }
{
  types = ""; uris = ""; suites = ""; enabled = "yes"
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^Types:/) types = substr($i, 7)
    if ($i ~ /^URIs:/) uris = substr($i, 6)
    if ($i ~ /^Suites:/) suites = substr($i, 8)
    if ($i ~ /^Enabled:/) enabled = substr($i, 9)
  }
  if (enabled ~ /no/) next
  if ((" " types " ") !~ / deb /) next
  if ((" " suites " ") !~ (" " suite " ")) next
  split(uris, list, " "); for (u in list) if (list[u] != "") { print list[u]; exit }
}
AWK
)"
    else
      mirror="$(awk -v suite="${suite}" '
        $1 == "deb" { n = 2; if ($2 ~ /^\[/) { while ($n !~ /\]$/) n++; n++ }
                      if ($(n + 1) == suite) { print $n; exit } }' "${file}")"
    fi
    if [[ -n ${mirror} ]]; then
      printf '%s\n' "${mirror}"
      return
    fi
  done
  die "no '${suite}' entry in /etc/apt/sources.list*; set AKS_FLEX_NODE_E2E_MIRROR to a Debian mirror"
}

# Unmounts whatever a killed debootstrap left mounted below a directory
# (proc, sys, devpts), deepest first, then removes it without crossing into
# any mount that could not be unmounted.
remove_build_dir() {
  local dir="$1" target
  while read -r target; do
    umount --lazy "${target}" || log "warning: could not unmount ${target}"
  done < <(findmnt -rn -o TARGET | grep -F "${dir}/" | sort -r)
  rm -rf --one-file-system "${dir}"
}

remove_stale_builds() {
  local dir
  for dir in "${cache_dir}"/.build-*; do
    [[ -d ${dir} ]] || continue
    log "removing an unfinished build left by an earlier run: ${dir}"
    remove_build_dir "${dir}"
  done
}

on_exit() {
  if [[ -n ${build_dir} && -d ${build_dir} ]]; then
    remove_build_dir "${build_dir}"
  fi
}

configure_rootfs() {
  local root="$1" hash="$2"
  # An empty machine-id lets each machine get its own from nspawn's --uuid,
  # which the harness keeps across reboots so the journal stays readable.
  # dbus's copy would otherwise give every machine the same identity.
  : >"${root}/etc/machine-id"
  ln -sfn /etc/machine-id "${root}/var/lib/dbus/machine-id"
  # nspawn names the host after the machine; a copied hostname would win.
  rm -f "${root}/etc/hostname"
  # Persistent journal: scenarios read units' logs across reboots.
  mkdir -p "${root}/var/log/journal"
  systemctl --root="${root}" --quiet mask "${masked_units[@]}"
  chroot "${root}" apt-get clean
  rm -rf "${root}/var/lib/apt/lists/"*
  printf 'recipe=%s\nsuite=%s\n' "${hash}" "${suite}" >"${root}/etc/aks-flex-node-e2e-rootfs"
}

build_rootfs() {
  local target="$1" hash="$2" mirror started
  mirror="$(find_mirror)"
  build_dir="$(mktemp -d "${cache_dir}/.build-XXXXXX")"
  chmod 0755 "${build_dir}"
  log "building ${suite} rootfs from ${mirror} (recipe ${hash}); this takes a few minutes"
  started="${SECONDS}"
  debootstrap --variant=minbase --include="${packages}" --components=main \
    "${suite}" "${build_dir}" "${mirror}" >&2
  configure_rootfs "${build_dir}" "${hash}"
  # The rename is the commit point: a build killed before it leaves only a
  # .build-* directory, which the next run removes, never a half cache.
  mv -T "${build_dir}" "${target}"
  build_dir=""
  log "built ${target} in $((SECONDS - started)) s"
}

main() {
  require_root_and_tools
  local hash target
  hash="$(recipe_hash)"
  target="${cache_dir}/rootfs-${hash}"
  mkdir -p "${cache_dir}"
  trap on_exit EXIT
  # One builder at a time: parallel test workers and CI share the cache.
  exec 9>"${cache_dir}/.lock"
  flock 9
  if [[ ! -d ${target} ]]; then
    remove_stale_builds
    build_rootfs "${target}" "${hash}"
  fi
  printf '%s\n' "${target}"
}

main "$@"

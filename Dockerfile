# One Dockerfile, one image per service:
#   docker build --target gateway -t version-router-gateway .
#   docker build --target backend -t version-router-backend .
# Each service is an npm workspace package (gateway/, services/users-orders/) depending on the shared one
# (platform/). Its image holds that package's production dependencies and compiled files, and platform's,
# nothing of the other service: the gateway image has no PostgreSQL driver, the backend image no proxy.
#
# Base: Node 24 (LTS, supported until 2028-04) on Debian 13 "trixie" slim. Node 20 is
# end-of-life; 22 leaves maintenance in 2027-04. The code also runs on Node 20 (our machines),
# and `npm run test:e2e:image-node` runs the end-to-end suite under this major as well
# (it reads the major from the FROM line below, so keep that line's form `node:<major>-...`).
ARG NODE_IMAGE=node:24-trixie-slim

# ---- manifests: the lockfile and every workspace's package.json, which npm ci checks against it ------
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY platform/package.json platform/package.json
COPY gateway/package.json gateway/package.json
COPY services/users-orders/package.json services/users-orders/package.json
COPY client/package.json client/package.json

# ---- build: all dependencies, compile every package to its dist/ ------------------------------------
FROM manifests AS build
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY platform/tsconfig.build.json platform/tsconfig.build.json
COPY platform/src platform/src
COPY services services
COPY gateway gateway
# The consumer kit (@version-router/client) is no part of either image; `npm run build` compiles it too.
COPY client/tsconfig.build.json client/tsconfig.build.json
COPY client/src client/src
# `npm run build` is scripts/build.mjs (tsc -b with progress lines), then copy-styles.mjs (the pages' style sheets).
COPY scripts/paths.mjs scripts/build.mjs scripts/copy-styles.mjs scripts/
RUN npm run build

# ---- gateway-deps, backend-deps: one workspace's production dependencies (platform's included) -------
FROM manifests AS gateway-deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --workspace gateway --no-audit --no-fund

FROM manifests AS backend-deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --workspace services/users-orders --no-audit --no-fund

# ---- runtime: what both services run on ------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Files stay owned by root and are not writable by the `node` user that runs the process.
# node_modules/@version-router/platform is a link to platform/, which needs its package.json (exports map)
# and its compiled files.
COPY platform/package.json platform/package.json
COPY --from=build /app/platform/dist platform/dist
USER node
# Node is PID 1 and receives SIGTERM itself (exec-form CMD, no npm or shell in between);
# runProcess installs the handler that drains for up to 10 s and exits 0. Give `docker stop`
# more than that (`--stop-timeout 15`, compose `stop_grace_period: 15s`): Docker's default 10 s
# would SIGKILL a drain that uses its full budget. compose also sets `init: true` so signals
# are handled and children reaped even before the handler is installed.
STOPSIGNAL SIGTERM

# ---- backend (internal service: never published) --------------------------------------------
FROM runtime AS backend
COPY --from=backend-deps /app/node_modules node_modules
# The package's package.json is needed at run time: its "type": "module" makes dist/**/*.js ES modules.
# dist/tools (the OpenAPI snapshot writer) is a build tool and stays out.
COPY services/users-orders/package.json services/users-orders/package.json
COPY --from=build /app/services/users-orders/dist/src services/users-orders/dist/src
# A default baked in so `docker run` works without mounts; docker-compose.yml mounts ops/seed read-only over
# it so an operator changes the seed without a rebuild.
COPY ops/seed ops/seed
ENV BACKEND_HOST=0.0.0.0 \
    BACKEND_PORT=8081 \
    BACKEND_ADMIN_PORT=9465 \
    BACKEND_ADMIN_HOST=0.0.0.0 \
    ORDERS_FILE=/app/ops/seed/orders.json
EXPOSE 8081 9465
# Readiness on the admin port (this replica only: healthy while PostgreSQL is down too, db_up shows
# that); slim images have no curl, so Node's fetch does the probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --start-interval=1s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.BACKEND_ADMIN_PORT || 9465) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The node flags are scripts/paths.mjs `nodeFlags.backend` (why: there; checked in test/static).
CMD ["node", "--max-semi-space-size=4", "services/users-orders/dist/src/main.js"]

# ---- gateway (public; the default target) ----------------------------------------------------
FROM runtime AS gateway
COPY --from=gateway-deps /app/node_modules node_modules
# What npm could not hoist (nodemailer: a test tool pins another release at the root) sits in the package's own node_modules.
COPY --from=gateway-deps /app/gateway/node_modules gateway/node_modules
# The package's package.json is needed at run time: its "type": "module" makes dist/**/*.js ES modules.
COPY gateway/package.json gateway/package.json
COPY --from=build /app/gateway/dist/src gateway/dist/src
# A default baked in so `docker run` works without mounts; docker-compose.yml mounts ops/ read-only over it so
# an operator changes the version policy without a rebuild.
COPY ops/versions.json ops/versions.json
ENV GATEWAY_HOST=0.0.0.0 \
    GATEWAY_PORT=8080 \
    GATEWAY_ADMIN_PORT=9464 \
    GATEWAY_ADMIN_HOST=0.0.0.0 \
    API_VERSIONS_FILE=/app/ops/versions.json \
    GATEWAY_DATA_DIR=/var/lib/gateway
# The embedded consumer store's directory (without DATABASE_URL), owned by the user that runs the
# process; a volume mounted here starts from it (docker-compose.yml mounts one).
USER root
RUN mkdir -p /var/lib/gateway && chown node:node /var/lib/gateway && chmod 0700 /var/lib/gateway
USER node
EXPOSE 8080 9464
# /readyz: healthy means this replica can take traffic, whether or not the backend answers
# (backend_up shows that). The first start on a new embedded consumer store creates its database
# (tens of seconds of CPU on a busy host): a long start period, probed every second, so a quick
# start is still healthy at once.
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --start-interval=1s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GATEWAY_ADMIN_PORT || 9464) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "gateway/dist/src/main.js"]

# syntax=docker/dockerfile:1
# Dimsum's container image: `dimsum serve` with its state in the /app/data volume (DIMSUM_HOME).
#
#   docker build -t dimsum .
#   docker run -p 18800:18800 -v dimsum-data:/app/data dimsum
#
# Build arguments: BASE_IMAGE (any Debian-based image with Node 20.19+ and npm; default
# node:22-slim); VERSION, REVISION (the commit) and SOURCE (the repository's URL) for the OCI labels.
# A private CA for the npm registry goes in as a build secret, never into a layer:
# `--secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt`.
# The shell tool's sandbox (bubblewrap) needs container options: see README → Deploy → "Sandbox in
# containers"; without them Dimsum does not offer the shell to agents and says why.
ARG BASE_IMAGE=node:22-slim

# ---- toolchain: better-sqlite3 installs its prebuilt binary when one exists for the platform and
# GitHub is reachable, and compiles itself otherwise; the compiler stays out of the runtime image.
FROM ${BASE_IMAGE} AS toolchain
RUN if ! command -v python3 >/dev/null || ! command -v g++ >/dev/null || ! command -v make >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*; \
    fi

# ---- build: every dependency, then TypeScript, the CLI bundle and the web UI ----
FROM toolchain AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts wait for the sources (`prepare` builds); better-sqlite3's install script runs in the rebuild,
# compiling against the base image's Node headers when it has them (no download from nodejs.org).
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    if [ -f /usr/local/include/node/common.gypi ]; then export npm_config_nodedir=/usr/local; fi; \
    npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle-cli.mjs ./scripts/
COPY bin ./bin
COPY src ./src
COPY web ./web
COPY tools ./tools
COPY skills ./skills
COPY templates ./templates
RUN npm run build && find dist -name '*.map' -delete

# ---- deps: the production dependencies alone, from the lockfile (cached until it changes) ----
FROM toolchain AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    if [ -f /usr/local/include/node/common.gypi ]; then export npm_config_nodedir=/usr/local; fi; \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3

# ---- runtime: the built files and the production dependencies only ----
FROM ${BASE_IMAGE}
# bubblewrap for the shell tool's sandbox; tini reaps the commands' orphaned processes as PID 1.
RUN if ! command -v bwrap >/dev/null || ! command -v tini >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends bubblewrap tini ca-certificates && rm -rf /var/lib/apt/lists/*; \
    fi \
 && groupadd --system --gid 10001 dimsum \
 && useradd --system --uid 10001 --gid dimsum --home-dir /app/data --no-create-home --shell /usr/sbin/nologin dimsum \
 && mkdir -p /app/data && chown dimsum:dimsum /app/data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/web/dist ./web/dist
COPY --from=build /src/tools/http ./tools/http
COPY --from=build /src/skills ./skills
COPY --from=build /src/templates ./templates
RUN ln -s /app/bin/dimsum.js /usr/local/bin/dimsum
# No secret here: DIMSUM_SECRET_KEY, provider keys and DIMSUM_OWNER_PASSWORD come from the
# environment at run time (compose.yaml, `docker run -e`), or the key is made in the volume.
ENV NODE_ENV=production \
    DIMSUM_HOME=/app/data \
    HOME=/app/data \
    PORT=18800
VOLUME ["/app/data"]
WORKDIR /app/data
EXPOSE 18800
USER dimsum:dimsum
# The readiness probe: the server answers and its database too.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 18800}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["tini", "--"]
# Listens on every interface of the container, on $PORT (default 18800).
CMD ["sh", "-c", "exec dimsum serve --host 0.0.0.0 --port \"${PORT:-18800}\""]
# Last, so that a new revision changes only this layer.
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=
LABEL org.opencontainers.image.title="Dimsum" \
      org.opencontainers.image.description="TypeScript agent runtime and multi-agent team platform" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"

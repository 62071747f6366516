# syntax=docker/dockerfile:1
#
# Weft in a container: `docker build -t weft .`, then (SQLite in the volume /data):
#   docker run --rm -v weft-data:/data weft keys create --tenant default --scopes admin
#   docker run -p 4000:4000 -v weft-data:/data weft
# The image binds 0.0.0.0, where Weft refuses to serve without an API key: create one first as
# above (it prints the key once; `--tenant default` is the tenant of data written in open mode),
# or run `docker run -e WEFT_ALLOW_OPEN=true …` on a private network only. With Postgres:
#   docker run -e DATABASE_URL=postgres://… weft keys create --tenant default --scopes admin
#   docker run -p 4000:4000 -e DATABASE_URL=postgres://… -e REDIS_URL=redis://… weft
# The image runs `weft serve` — what `npm start` runs, compiled: migrations are applied on start,
# then it serves on $PORT. Any other weft command replaces `serve` (`… weft keys list`). See
# docs/deployment.md for the environment.

# Node 24 is the current LTS line (Node 20 has reached end of life).
ARG NODE_VERSION=24

# ---- build: every dependency, the generated Prisma clients, the compiled JavaScript ----------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 is native: its prebuilt binary is fetched on install, compiled when there is none.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Install scripts off (Prisma's would fetch engines it does not need), then build the one native
# module that needs its script; the clients are generated below, once the schemas are copied.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY prisma ./prisma
COPY scripts ./scripts
COPY src ./src
COPY bin ./bin
# The Prisma clients are generated into src/generated and compiled with the rest into dist/.
RUN npm run prisma:generate && npm run build
# The Weft Console (served at /console): codegen, then Vite, into console/dist.
COPY codegen.ts ./
COPY schema ./schema
COPY console ./console
RUN npm run console:build
# Production dependencies only (the prisma CLI, tsx, vitest, biome … go); the native build of
# better-sqlite3 stays. --omit=optional too: the prisma CLI is an optional peer of @prisma/client,
# which npm keeps under --omit=dev alone (see docs/deployment.md).
RUN npm prune --omit=dev --omit=optional --ignore-scripts

# ---- runtime: production dependencies, dist/, the SQL migrations; a non-root user -------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATABASE_URL=file:/data/weft.db
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/prisma ./prisma
COPY --from=build --chown=root:root /app/console/dist ./console/dist
# The application files belong to root and are read-only for the `node` user (uid 1000) that runs
# it; only /data (the SQLite database, when DATABASE_URL is a file) is writable.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# /readyz answers 200 once the database does (it is also what a load balancer should probe).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Exec form: node runs as PID 1 and gets SIGTERM itself (`docker stop`), then drains and exits 0;
# WEFT_SHUTDOWN_GRACE_MS (default 8 s) fits inside `docker stop`'s default 10 s before SIGKILL.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]

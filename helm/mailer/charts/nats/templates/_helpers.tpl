{{- define "nats.fullname" -}}
{{- printf "%s-nats" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nats.selectorLabels" -}}
app.kubernetes.io/name: nats
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "nats.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "nats.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mailer
{{- end }}

{{/*
persistence.size in bytes: a Kubernetes quantity (2Gi, 1536Mi, 5G, 1.5Gi, or plain bytes). The
config gets plain bytes: nats-server reads "2G" as 10^9 like Kubernetes but "2GB" as 2^30, and
no fraction at all.
*/}}
{{- define "nats.sizeBytes" -}}
{{- $size := toString .Values.persistence.size }}
{{- $m := regexFindAll "^([0-9]+(?:\\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" $size 1 }}
{{- if not $m }}
{{- fail (printf "nats.persistence.size %q is not a size such as 2Gi or 5G." $size) }}
{{- end }}
{{- $number := regexReplaceAll "[a-zA-Z]+$" $size "" | float64 }}
{{- $suffix := regexReplaceAll "^[0-9.]+" $size "" }}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000 "E" 1000000000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624 "Ei" 1152921504606846976 }}
{{- mulf $number (get $units $suffix) | floor | int64 }}
{{- end }}

{{/*
JetStream's file store limit (max_file_store), in bytes: 75 % of the volume, the share NATS
takes by default, but of the volume's size rather than of its free space when the server starts.
That default shrank as EMAILS and EVENTS filled the volume, until the 1 GiB TRACKING reserves
(its max_bytes, counted against this limit at creation and when the server restores it at a
restart) no longer fit and the stream was lost. The quarter left covers the filesystem's own
overhead and JetStream's index and consumer files.
*/}}
{{- define "nats.maxFileStore" -}}
{{- div (mul (include "nats.sizeBytes" . | int64) 3) 4 }}
{{- end }}

{{/*
The smallest persistence.size the chart accepts: 2Gi gives a 1.5 GiB max_file_store, which holds
the 1 GiB TRACKING reserves and leaves at least 0.5 GiB for EMAILS and EVENTS even while TRACKING
is full. With 1Gi the store (768 MiB) could not even create TRACKING, and no service would start.
*/}}
{{- define "nats.minSizeBytes" -}}
{{- mul 2 1073741824 }}
{{- end }}

{{/*
DaemonSet name and selector per strategy: the vendor's names, so an existing
vendor installation is upgraded in place and the modes never collide (dra:
our own names; Hygon's DRA driver is removed first, doc/dra.md).
*/}}
{{- define "hcu-device-plugin.dsName" -}}
{{- if eq .Values.strategy "mig" -}}hcu-device-plugin-mig
{{- else if eq .Values.strategy "hami" -}}hcu-device-plugin-hami
{{- else if eq .Values.strategy "dra" -}}hcu-device-plugin-dra
{{- else -}}hcu-device-plugin
{{- end -}}
{{- end -}}

{{- define "hcu-device-plugin.selectorName" -}}
{{- if eq .Values.strategy "mig" -}}hcu-dp-ds-mig
{{- else if eq .Values.strategy "hami" -}}hcu-dp-ds-hami
{{- else if eq .Values.strategy "dra" -}}hcu-dp-ds-dra
{{- else -}}hcu-dp-ds
{{- end -}}
{{- end -}}

{{- define "hcu-device-plugin.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object: the static manifests' two plus Helm's standard four. */}}
{{- define "hcu-device-plugin.labels" -}}
app.kubernetes.io/name: hcu-device-plugin
app.kubernetes.io/component: device-plugin
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "hcu-device-plugin.chart" . }}
{{- end -}}

{{- define "hcu-device-plugin.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Object names. Each object has a fixed name per strategy, the one of the static
manifests (manifests/): the DaemonSet's are the vendor's (hcu-device-plugin,
-mig, -hami; -dra is ours), so an existing vendor installation is upgraded in
place. The default release -- named hcu-device-plugin, or after the
strategy's DaemonSet (hcu-device-plugin-mig, ...) -- renders exactly those
names. Any other release prefixes every name with "<release>-", so that two
releases (two strategies, or one strategy twice for two node pools) never
own the same object. Only the DeviceClasses keep their names in every
release: claims name them (dra.deviceClasses turns them off for a second DRA
release).
*/}}
{{- define "hcu-device-plugin.baseDsName" -}}
{{- if eq .Values.strategy "mig" -}}hcu-device-plugin-mig
{{- else if eq .Values.strategy "hami" -}}hcu-device-plugin-hami
{{- else if eq .Values.strategy "dra" -}}hcu-device-plugin-dra
{{- else -}}hcu-device-plugin
{{- end -}}
{{- end -}}

{{- define "hcu-device-plugin.prefix" -}}
{{- if not (has .Release.Name (list "hcu-device-plugin" (include "hcu-device-plugin.baseDsName" .))) -}}
{{- printf "%s-" .Release.Name -}}
{{- end -}}
{{- end -}}

{{/*
The release's name for fixed name `index . 1` (`index . 0` is the root
context), with the optional suffix `index . 2` kept whole: at most 63
characters, a valid label value.
*/}}
{{- define "hcu-device-plugin.name" -}}
{{- $root := index . 0 -}}
{{- $suffix := "" -}}
{{- if gt (len .) 2 -}}{{- $suffix = index . 2 -}}{{- end -}}
{{- $name := printf "%s%s" (include "hcu-device-plugin.prefix" $root) (index . 1) -}}
{{- printf "%s%s" ($name | trunc (int (sub 63 (len $suffix))) | trimSuffix "-") $suffix -}}
{{- end -}}

{{- define "hcu-device-plugin.dsName" -}}
{{- include "hcu-device-plugin.name" (list . (include "hcu-device-plugin.baseDsName" .)) -}}
{{- end -}}

{{/* The pods' `name` label, the DaemonSet's (immutable) selector: the vendor's per strategy. */}}
{{- define "hcu-device-plugin.selectorName" -}}
{{- $base := "hcu-dp-ds" -}}
{{- if eq .Values.strategy "mig" -}}{{- $base = "hcu-dp-ds-mig" -}}
{{- else if eq .Values.strategy "hami" -}}{{- $base = "hcu-dp-ds-hami" -}}
{{- else if eq .Values.strategy "dra" -}}{{- $base = "hcu-dp-ds-dra" -}}
{{- end -}}
{{- include "hcu-device-plugin.name" (list . $base) -}}
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

{{/*
Node agent operations (doc/labels.md, doc/events.md), in every strategy
(dra too: the daemon runs them in --strategy=dra): whether they need the API
server, and so a ServiceAccount and RBAC.
*/}}
{{- define "hcu-device-plugin.opsRbac" -}}
{{- if and .Values.rbac.create (or (eq .Values.nodeLabels.mode "node") .Values.events) -}}true{{- end -}}
{{- end -}}

{{/*
The DaemonSet's ServiceAccount, one per strategy so that releases of two
strategies never share it: hami keeps the vendor's hcu-device-plugin, the
others are named after their strategy. The node-label and events RBAC
objects are named after it.
*/}}
{{- define "hcu-device-plugin.serviceAccountBase" -}}
{{- if eq .Values.strategy "hami" -}}hcu-device-plugin{{- else -}}hcu-device-plugin-{{ .Values.strategy }}{{- end -}}
{{- end -}}

{{- define "hcu-device-plugin.serviceAccount" -}}
{{- include "hcu-device-plugin.name" (list . (include "hcu-device-plugin.serviceAccountBase" .)) -}}
{{- end -}}

{{/* The name of an object of the ServiceAccount's with suffix `index . 1` ("-events"). */}}
{{- define "hcu-device-plugin.serviceAccountSuffixed" -}}
{{- $root := index . 0 -}}
{{- include "hcu-device-plugin.name" (list $root (include "hcu-device-plugin.serviceAccountBase" $root) (index . 1)) -}}
{{- end -}}

{{/* The container's environment for node labels and events (list items). */}}
{{- define "hcu-device-plugin.opsEnv" -}}
{{- if ne .Values.nodeLabels.mode "off" }}
- name: NODE_LABELS
  value: {{ .Values.nodeLabels.mode | quote }}
{{- end }}
{{- if eq .Values.nodeLabels.mode "nfd" }}
- name: NFD_FEATURES_DIR
  value: {{ .Values.nodeLabels.nfdFeaturesDir | quote }}
{{- end }}
{{- if .Values.events }}
{{- /* Without the chart's RBAC, "auto": a pod without credentials
       must still start (true without them is exit 2). */}}
- name: EVENTS
  value: {{ ternary "true" "auto" .Values.rbac.create | quote }}
{{- end }}
{{- end -}}

{{/* nodeLabels.mode=nfd: the host's features.d directory (mount and volume). */}}
{{- define "hcu-device-plugin.opsMounts" -}}
{{- if eq .Values.nodeLabels.mode "nfd" }}
- name: nfd-features
  mountPath: {{ .Values.nodeLabels.nfdFeaturesDir }}
{{- end }}
{{- end -}}

{{- define "hcu-device-plugin.opsVolumes" -}}
{{- if eq .Values.nodeLabels.mode "nfd" }}
- name: nfd-features
  hostPath:
    path: {{ .Values.nodeLabels.nfdFeaturesDir }}
    type: DirectoryOrCreate
{{- end }}
{{- end -}}

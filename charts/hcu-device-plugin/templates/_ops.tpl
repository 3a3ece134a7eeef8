{{/*
Node agent operations (doc/labels.md, doc/events.md): whether they need the
API server, and so a ServiceAccount and RBAC.
*/}}
{{- define "hcu-device-plugin.opsRbac" -}}
{{- if and .Values.rbac.create (or (eq .Values.nodeLabels.mode "node") .Values.events) -}}true{{- end -}}
{{- end -}}

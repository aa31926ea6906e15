{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcp-gateway.fullname" -}}
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

{{- define "mcp-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "mcp-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret and key holding the database URL, if any. */}}
{{- define "mcp-gateway.dbSecret" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecret }}{{ else }}{{ include "mcp-gateway.fullname" . }}{{ end }}
{{- end }}

{{- define "mcp-gateway.hasDatabase" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{- define "mcp-gateway.hasSessionKey" -}}
{{- if or .Values.sessionKey.value .Values.sessionKey.existingSecret }}true{{ end }}
{{- end }}

{{/* The named container port of /metrics and the probes: `ops` when service.opsPort is set. */}}
{{- define "mcp-gateway.opsPortName" -}}
{{- if gt (int .Values.service.opsPort) 0 }}ops{{ else }}http{{ end }}
{{- end }}

{{/* SQLite on a PersistentVolumeClaim: no database URL, persistence on. */}}
{{- define "mcp-gateway.sqliteClaim" -}}
{{- if and (not (include "mcp-gateway.hasDatabase" .)) .Values.persistence.enabled }}
{{- default (printf "%s-data" (include "mcp-gateway.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}
{{- end }}

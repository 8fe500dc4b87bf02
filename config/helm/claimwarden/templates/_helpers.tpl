{{- define "claimwarden.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "claimwarden.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "claimwarden.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "claimwarden.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "claimwarden.selectorLabels" -}}
app.kubernetes.io/name: {{ include "claimwarden.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* The full app.kubernetes.io set, on every object. */}}
{{- define "claimwarden.labels" -}}
{{ include "claimwarden.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: claimwarden
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "claimwarden.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "claimwarden.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "claimwarden.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The rules of one of the shared RBAC files (config/rbac, config/components),
     so the chart and config/default grant exactly the same. */}}
{{- define "claimwarden.rules" -}}
{{- $doc := .root.Files.Get (printf "files/%s" .file) | fromYaml -}}
{{- if not $doc.rules -}}{{- fail (printf "chart file files/%s is missing or has no rules" .file) -}}{{- end -}}
{{ toYaml $doc.rules }}
{{- end -}}

{{/* A ClusterRole or Role with the rules of a shared file, and its binding to
     the controller's ServiceAccount. */}}
{{- define "claimwarden.role" -}}
{{- $kind := .kind -}}
{{- $name := printf "%s%s" (include "claimwarden.fullname" .root) .suffix -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ $kind }}
metadata:
  name: {{ $name }}
  {{- if eq $kind "Role" }}
  namespace: {{ .root.Release.Namespace }}
  {{- end }}
  labels:
    {{- include "claimwarden.labels" .root | nindent 4 }}
rules:
{{ include "claimwarden.rules" . }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ $kind }}Binding
metadata:
  name: {{ $name }}
  {{- if eq $kind "Role" }}
  namespace: {{ .root.Release.Namespace }}
  {{- end }}
  labels:
    {{- include "claimwarden.labels" .root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: {{ $kind }}
  name: {{ $name }}
subjects:
- kind: ServiceAccount
  name: {{ include "claimwarden.serviceAccountName" .root }}
  namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{/* The configuration file: config with the ports the chart owns. */}}
{{- define "claimwarden.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "metricsAddr" (printf ":%v" .Values.metrics.port) -}}
{{- $_ := set $cfg "healthAddr" (printf ":%v" .Values.healthPort) -}}
{{ toYaml $cfg }}
{{- end -}}

{{- define "claimwarden.gitStatusOn" -}}
{{- if and .Values.config.gitStatus .Values.config.gitStatus.hosts -}}true{{- end -}}
{{- end -}}

{{/* Autoresize is on when namespaces are opted in (config.Autoresize.Enabled). */}}
{{- define "claimwarden.autoresizeOn" -}}
{{- if dig "autoresize" "namespaces" list .Values.config -}}true{{- end -}}
{{- end -}}

{{/* Convergence (re-creating StatefulSets) comes with every GitOps integration. */}}
{{- define "claimwarden.convergenceOn" -}}
{{- if or (dig "flux" "enabled" false .Values.config) (dig "flux" "helmReleases" false .Values.config) (dig "argocd" "enabled" false .Values.config) (dig "helm" "enabled" false .Values.config) -}}true{{- end -}}
{{- end -}}

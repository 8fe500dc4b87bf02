-- Argo CD health check of claimwarden.dev/VolumeClaimRollout, from its kstatus
-- conditions: Stalled (a person must act) is Degraded, Ready is Healthy,
-- anything else (claims patching or resizing, a re-create in flight, a
-- status not yet written) is Progressing. Install it in argocd-cm:
--   resource.customizations.health.claimwarden.dev_VolumeClaimRollout: |
--     <this file>
-- (the chart's and install.yaml's users: see docs/install.md).
local hs = {status = "Progressing", message = "Waiting for claimwarden to report"}
if obj.status == nil then
  return hs
end
local conditions = {}
for _, c in ipairs(obj.status.conditions or {}) do
  conditions[c.type] = c
end
local stalled, ready = conditions["Stalled"], conditions["Ready"]
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = (stalled.reason or "Stalled") .. ": " .. (stalled.message or "")
elseif obj.status.pendingRecreate ~= nil then
  hs.message = "Re-creating the StatefulSet with its new templates (Pods kept)"
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = obj.status.progress and (obj.status.progress .. " claims compatible") or (ready.message or "")
elseif ready ~= nil then
  hs.message = (ready.reason or "") .. ": " .. (ready.message or "")
end
return hs

# restart-window: claimwarden restarts a Pod, so that its claims' file
# systems grow, only within the hours restart_window allows. Off by default
# (null: restarts at any hour, when restarts are enabled at all).
#
# A Pod restart interrupts the database it runs, however briefly; many
# organisations allow that only at night. A refused restart waits and is
# asked again (policyRecheck), so it happens once the window opens.
#
# Parameters: restart_window is null or {"start": S, "end": E}, whole hours
# 0–23 in UTC, S ≠ E: restarts are allowed from S:00 to E:00, across
# midnight when E < S ({"start": 22, "end": 6} is the night).
package claimwarden.claims

deny contains {"policy": "restart-window", "msg": msg} if {
	input.change.restart == true
	w := params.restart_window
	w != null
	_restart_window_valid(w)
	hour := time.clock([time.now_ns(), "UTC"])[0]
	not _restart_hour_allowed(hour, w.start, w.end)
	not "restart-window" in _disabled_ids
	msg := sprintf(
		"%s: restarting Pod %s is allowed from %02d:00 to %02d:00 UTC (restart_window), and it is %02d:xx UTC; the restart waits for the window",
		[claim_ref, object.get(input, ["change", "pod"], "?"), w.start, w.end, hour],
	)
}

# A window the operator set but that cannot be applied is a denial of every
# restart: they must learn that it is not in force.
deny contains {"policy": "restart-window", "msg": msg} if {
	input.change.restart == true
	w := params.restart_window
	w != null
	not _restart_window_valid(w)
	not "restart-window" in _disabled_ids
	msg := sprintf(
		`parameter restart_window (policies.params) must be null or {"start": S, "end": E} of whole UTC hours 0-23 with S != E; got %s`,
		[json.marshal(w)],
	)
}

_restart_window_valid(w) if {
	is_object(w)
	_restart_hour(w.start)
	_restart_hour(w.end)
	w.start != w.end
}

_restart_hour(h) if {
	is_number(h)
	round(h) == h
	h >= 0
	h <= 23
}

_restart_hour_allowed(hour, start, end) if {
	start < end
	hour >= start
	hour < end
}

_restart_hour_allowed(hour, start, end) if {
	start > end
	hour >= start
}

_restart_hour_allowed(hour, start, end) if {
	start > end
	hour < end
}

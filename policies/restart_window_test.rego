package claimwarden.claims

# 2026-12-02T14:30:00Z and 2026-12-02T23:30:00Z.
afternoon := time.parse_rfc3339_ns("2026-12-02T14:30:00Z")

late_evening := time.parse_rfc3339_ns("2026-12-02T23:30:00Z")

night := {"restart_window": {"start": 22, "end": 6}}

test_restart_window_is_off_by_default if {
	count(denials("restart-window")) == 0 with input as mock_restart with time.now_ns as afternoon
}

test_restart_window_refuses_outside_the_window_naming_the_values if {
	denials("restart-window") == {"claim data-web-0 (StatefulSet shop/web): restarting Pod web-0 is allowed from 22:00 to 06:00 UTC (restart_window), and it is 14:xx UTC; the restart waits for the window"} with input as mock_restart
		with data.claimwarden.params as night
		with time.now_ns as afternoon
}

test_restart_window_allows_inside_a_window_across_midnight if {
	count(denials("restart-window")) == 0 with input as mock_restart
		with data.claimwarden.params as night
		with time.now_ns as late_evening
	count(denials("restart-window")) == 0 with input as mock_restart
		with data.claimwarden.params as night
		with time.now_ns as time.parse_rfc3339_ns("2026-12-02T03:00:00Z")
	count(denials("restart-window")) == 0 with input as mock_restart
		with data.claimwarden.params as {"restart_window": {"start": 14, "end": 15}}
		with time.now_ns as afternoon
}

test_restart_window_end_hour_is_outside if {
	count(denials("restart-window")) == 1 with input as mock_restart
		with data.claimwarden.params as {"restart_window": {"start": 9, "end": 14}}
		with time.now_ns as afternoon
}

test_restart_window_asks_nothing_of_claim_changes if {
	count(denials("restart-window")) == 0 with input as mock_claim(10, 20)
		with data.claimwarden.params as night
		with time.now_ns as afternoon
}

test_restart_window_malformed_is_a_denial if {
	some bad in [{"start": 22}, {"start": 6, "end": 6}, {"start": 1.5, "end": 6}, {"start": 22, "end": 24}, "22-6"]
	denials("restart-window") == {sprintf(`parameter restart_window (policies.params) must be null or {"start": S, "end": E} of whole UTC hours 0-23 with S != E; got %s`, [json.marshal(bad)])} with input as mock_restart
		with data.claimwarden.params as {"restart_window": bad}
		with time.now_ns as late_evening
}

test_restart_window_can_be_disabled if {
	count(denials("restart-window")) == 0 with input as mock_restart
		with data.claimwarden.params as object.union(night, {"disabled": ["restart-window"]})
		with time.now_ns as afternoon
}

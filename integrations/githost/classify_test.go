package githost

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	epoch := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"Retry-After seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"Retry-After HTTP date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"Retry-After date passed", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"Retry-After negative", http.Header{"Retry-After": {"-5"}}, 0},
		{"Retry-After wins over reset", http.Header{"Retry-After": {"3"}, "X-Ratelimit-Reset": {epoch(time.Hour)}}, 3 * time.Second},
		{"unparsable Retry-After falls back to reset", http.Header{"Retry-After": {"soon"}, "X-Ratelimit-Reset": {epoch(time.Minute)}}, time.Minute},
		{"X-RateLimit-Reset Unix seconds (GitHub)", http.Header{"X-Ratelimit-Reset": {epoch(42 * time.Second)}}, 42 * time.Second},
		{"RateLimit-Reset Unix seconds (GitLab)", http.Header{"Ratelimit-Reset": {epoch(30 * time.Second)}}, 30 * time.Second},
		{"RateLimit-Reset delta seconds (IETF draft)", http.Header{"Ratelimit-Reset": {"12"}}, 12 * time.Second},
		{"reset passed", http.Header{"X-Ratelimit-Reset": {epoch(-time.Minute)}}, 0},
		{"nothing said", http.Header{}, 0},
	} {
		if got := retryAfter(tc.header, now); got != tc.want {
			t.Errorf("%s: retryAfter = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHTTPStatusError(t *testing.T) {
	for _, tc := range []struct {
		code   int
		header http.Header
		want   string // ratelimit, unavailable, permanent, retry
	}{
		{429, nil, "ratelimit"},
		{403, http.Header{"X-Ratelimit-Remaining": {"0"}}, "ratelimit"},
		{403, http.Header{"Ratelimit-Remaining": {"0"}}, "ratelimit"},
		{403, http.Header{"Retry-After": {"60"}}, "ratelimit"}, // GitHub's secondary limit
		{403, http.Header{"X-Ratelimit-Remaining": {"12"}}, "permanent"},
		{400, nil, "permanent"},
		{401, nil, "permanent"},
		{404, nil, "permanent"},
		{422, nil, "permanent"},
		{408, nil, "retry"},
		{500, nil, "retry"},
		{502, nil, "retry"},
		{503, http.Header{"Retry-After": {"30"}}, "unavailable"},
		{500, http.Header{"Retry-After": {time.Now().Add(time.Minute).Format(http.TimeFormat)}}, "unavailable"},
		{503, http.Header{"Retry-After": {"0"}}, "retry"}, // "now" is no delay to honour
		{302, nil, "retry"},
	} {
		err := httpStatusError("p: POST /x", tc.code, tc.header, "")
		var rl *RateLimitError
		var perm *PermanentError
		var unavailable *UnavailableError
		got := "retry"
		if errors.As(err, &rl) {
			got = "ratelimit"
		} else if errors.As(err, &unavailable) {
			got = "unavailable"
		} else if errors.As(err, &perm) {
			got = "permanent"
		}
		if got != tc.want {
			t.Errorf("%d %v: %v is %s, want %s", tc.code, tc.header, err, got, tc.want)
		}
		if !strings.HasPrefix(err.Error(), "p: POST /x: "+strconv.Itoa(tc.code)) && !strings.HasPrefix(err.Error(), "rate limited: p: POST /x: ") && !strings.HasPrefix(err.Error(), "unavailable: p: POST /x: ") {
			t.Errorf("error %q does not name the request and the code", err)
		}
	}
}

// A host's message is kept, cut to a readable length, with the token
// scrubbed; the token may sit anywhere in it.
func TestHTTPStatusErrorScrubsAndShortens(t *testing.T) {
	err := httpStatusError("p", 401, nil, "bad credentials: "+testToken+strings.Repeat(" x", 400), testToken)
	msg := err.Error()
	if strings.Contains(msg, testToken) || !strings.Contains(msg, "bad credentials: xxxxx") {
		t.Errorf("message %q: token not scrubbed", msg)
	}
	if n := len([]rune(msg)); n > 400 {
		t.Errorf("message is %d characters, want it shortened", n)
	}
}

// A request that got no answer keeps its cause for errors.Is (the Reporter
// tells a cancelled post from a failed one), unless the cause quotes the
// token: then only the scrubbed text is kept.
func TestTransportError(t *testing.T) {
	err := transportError("p: POST /x", context.Canceled, testToken)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v does not wrap context.Canceled", err)
	}
	err = transportError("p: POST /x", errors.New("proxy said: Authorization: Bearer "+testToken), testToken)
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("%q shows the token", err)
	}
	if !strings.Contains(err.Error(), "Bearer xxxxx") {
		t.Errorf("%q lost the cause", err)
	}
}

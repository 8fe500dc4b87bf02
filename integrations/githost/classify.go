package githost

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// Every client's failed request is reported through httpStatusError (the
// host answered with a non-2xx code) or transportError (it did not answer),
// so that callers (the status Reporter, autoresize's back-off) can tell the
// three outcomes apart with errors.As:
//
//   - *RateLimitError: 429, or 403 with X-RateLimit-Remaining: 0 (GitHub's
//     primary limit) or with Retry-After (GitHub's secondary limit): wait
//     RetryAfter, then retry.
//   - *PermanentError: any other 4xx except 408: the token, the repository
//     or the request is wrong, and retrying cannot fix it.
//   - *UnavailableError: 5xx with Retry-After (or a reset header): wait
//     RetryAfter, then retry; the host said when it can take requests again.
//   - anything else (5xx, 408, no answer): retry with backoff.

// httpStatusError is the error for a response with a non-2xx code. op
// names the request ("github: POST /repos/o/r/statuses/<sha>"), detail is
// what the host said (may be empty). secrets are scrubbed from the message:
// hosts may echo a request, and a token must never reach a log.
func httpStatusError(op string, code int, header http.Header, detail string, secrets ...string) error {
	msg := fmt.Sprintf("%s: %d %s", op, code, http.StatusText(code))
	if detail = strings.TrimSpace(detail); detail != "" {
		msg += ": " + outcome.Shorten(detail, 300)
	}
	err := errors.New(scrubSecrets(msg, secrets))
	switch {
	case code == http.StatusTooManyRequests,
		code == http.StatusForbidden && rateLimitExhausted(header):
		return &RateLimitError{RetryAfter: retryAfter(header, time.Now()), Err: err}
	case code == http.StatusRequestTimeout:
		return err
	case code >= 500:
		if d := retryAfter(header, time.Now()); d > 0 {
			return &UnavailableError{RetryAfter: d, Err: err}
		}
		return err
	case code >= 400 && code < 500:
		return &PermanentError{Err: err}
	}
	return err
}

// transportError is the error for a request that got no response. It
// wraps err, so that errors.Is(err, context.Canceled) works, unless err's
// message holds a secret; then only the scrubbed text is kept.
func transportError(op string, err error, secrets ...string) error {
	msg := err.Error()
	if scrubbed := scrubSecrets(msg, secrets); scrubbed != msg {
		return fmt.Errorf("%s: %s", op, scrubbed)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// undecodedError is the error for a 2xx answer whose body could not be
// decoded: the request may have taken effect, but its result is unknown.
// It is retryable: neither a rate limit nor a refusal.
func undecodedError(op string, code int, err error, secrets ...string) error {
	return errors.New(scrubSecrets(fmt.Sprintf("%s: %d %s, but the answer could not be read: %v", op, code, http.StatusText(code), err), secrets))
}

// rateLimitExhausted reports whether a 403 is a rate limit rather than a
// refusal: GitHub answers its primary limit with 403 and
// X-RateLimit-Remaining: 0 (GitLab spells it RateLimit-Remaining), and its
// secondary limit with 403 and Retry-After.
func rateLimitExhausted(h http.Header) bool {
	return h.Get("X-RateLimit-Remaining") == "0" || h.Get("RateLimit-Remaining") == "0" || h.Get("Retry-After") != ""
}

// retryAfter is how long a rate-limited client should wait, from the first
// header that says: Retry-After (RFC 9110: delay-seconds or an HTTP-date),
// X-RateLimit-Reset (GitHub, Gitea: Unix seconds), RateLimit-Reset (GitLab:
// Unix seconds; the IETF draft: delta seconds). A reset value is taken for
// Unix seconds when it is past 10^9 (2001), for a delay otherwise. Zero
// when no header says, or the time has passed.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
			return max(time.Duration(secs)*time.Second, 0)
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	for _, name := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		v := strings.TrimSpace(h.Get(name))
		secs, err := strconv.ParseInt(v, 10, 64)
		if v == "" || err != nil {
			continue
		}
		if secs > 1e9 {
			return max(time.Unix(secs, 0).Sub(now), 0)
		}
		return max(time.Duration(secs)*time.Second, 0)
	}
	return 0
}

// scrubSecrets replaces every non-empty secret in s with "xxxxx".
func scrubSecrets(s string, secrets []string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "xxxxx")
		}
	}
	return s
}

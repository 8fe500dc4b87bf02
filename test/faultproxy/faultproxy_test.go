package faultproxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// post sends a status post for sha through p and returns the answer.
func post(t *testing.T, p *Proxy, sha, state string) *http.Response {
	t.Helper()
	body := `{"state":"` + state + `","context":"claimwarden/ns/web","description":"d"}`
	resp, err := http.Post(p.URL+"/api/v1/repos/o/r/statuses/"+sha, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// The storm answers in its cycle with both Retry-After forms, flags a
// request that came before the Retry-After it was given ran out, passes
// what it does not match, and after the storm forwards and records.
func TestStorm(t *testing.T) {
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) }))
	defer host.Close()
	p, err := New(host.URL, StatusPosts("o/r"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Slack = 0
	p.Storm(time.Minute, 2*time.Second)

	var codes []int
	var retryAfter []string
	for range len(cycle) {
		resp := post(t, p, "abc", "pending")
		codes = append(codes, resp.StatusCode)
		retryAfter = append(retryAfter, resp.Header.Get("Retry-After"))
	}
	for i, f := range cycle {
		if codes[i] != f.code {
			t.Errorf("answer %d: %d, want %d", i, codes[i], f.code)
		}
		switch f.retryAfter {
		case "seconds":
			if retryAfter[i] != "2" {
				t.Errorf("answer %d: Retry-After %q, want 2", i, retryAfter[i])
			}
		case "date":
			if at, err := http.ParseTime(retryAfter[i]); err != nil || time.Until(at) < time.Second {
				t.Errorf("answer %d: Retry-After %q, want an HTTP date about 2 s ahead (%v)", i, retryAfter[i], err)
			}
		default:
			if retryAfter[i] != "" {
				t.Errorf("answer %d: Retry-After %q, want none", i, retryAfter[i])
			}
		}
	}
	// Not matched: another repository passes, even during the storm.
	other, err := http.Post(p.URL+"/api/v1/repos/o/other/statuses/abc", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	other.Body.Close()
	if other.StatusCode != http.StatusCreated {
		t.Errorf("another repository's post: %d, want the host's 201", other.StatusCode)
	}

	p.Storm(0, time.Second)
	if resp := post(t, p, "abc", "success"); resp.StatusCode != http.StatusCreated {
		t.Errorf("after the storm: %d, want the host's 201", resp.StatusCode)
	}
	st := p.Stats()
	if st.Total() != len(cycle) || st.WithRetryAfter != 4 {
		t.Errorf("refused %d (%d with Retry-After), want %d (4)", st.Total(), st.WithRetryAfter, len(cycle))
	}
	// Every answer after the first Retry-After came within it, and so did
	// the post after the storm.
	if want := len(cycle) - 1; len(st.Early) != want {
		t.Errorf("%d early requests, want %d", len(st.Early), want)
	}
	if len(st.Forwarded) != 1 || st.Forwarded[0].State != "success" || st.Forwarded[0].SHA != "abc" || st.Forwarded[0].Code != http.StatusCreated {
		t.Errorf("forwarded %+v, want the one success for abc, answered 201", st.Forwarded)
	}
}

package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxHTTPBody bounds what HTTPGet reads: a metrics page of a scale run is a
// few megabytes; a server that streams without end must not fill memory.
const maxHTTPBody = 64 << 20

// HTTPGet returns the body of GET url through c when it answers 200. Any
// other status is an error carrying the start of the body; a body over
// 64 MiB is an error, not a truncated answer.
func HTTPGet(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		const show = 1 << 10
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body[:min(len(body), show)])))
	}
	if len(body) > maxHTTPBody {
		return "", fmt.Errorf("GET %s: the body exceeds %d bytes", url, maxHTTPBody)
	}
	return string(body), nil
}

// HTTPOK is a check for Poll: GET url through c answers 200.
func HTTPOK(c *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := HTTPGet(ctx, c, url)
		return err
	}
}

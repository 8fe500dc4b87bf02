package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// apiProxy is a TLS reverse proxy in front of kube-apiserver that only the
// controller talks to, counting each request by verb and resource.
//
// Why a proxy: the controller's own rest_client_requests_total has no
// resource label, so it cannot tell a PVC patch from an event patch, and
// kube-apiserver's apiserver_request_total has a resource label but no client
// label, while kube-controller-manager (garbage collector, PV binder) and the
// storage simulator write the same resources during the run. The proxy sees
// exactly the controller's requests, and its totals per HTTP method are
// cross-checked against rest_client_requests_total. It speaks HTTP/2 with a
// certificate of its own, as the API server would, so the controller's client
// behaves as it does against a real API server.
type apiProxy struct {
	url    string
	caPEM  []byte
	srv    *http.Server
	served chan error

	mu     sync.Mutex
	counts map[requestKey]int64
	// done and latency cover completed requests other than watches: how
	// many per response code, and the seconds the API server (through the
	// proxy) took in all. Time a request waited in the controller's own
	// client-side rate limiter is not in there.
	done    map[requestKey]map[int]int64
	latency map[requestKey]float64
	// arrivals counts requests per client group (see rateGroup) and second.
	arrivals map[string]map[int64]int
	// shapes counts PATCHes by the fields they write (see patchShape).
	shapes map[requestKey]map[string]int64
	// capturing makes the proxy keep the first writes it forwards, with
	// their bodies, to show what a write that should not happen changed.
	capturing bool
	captured  []capturedWrite
}

// capturedWrite is one write request as the controller sent it.
type capturedWrite struct {
	At      time.Time `json:"at"`
	Request string    `json:"request"` // "PATCH /api/v1/..."
	Body    string    `json:"body"`
}

// maxCaptured bounds the writes kept, and maxBody each body kept.
const (
	maxCaptured = 10
	maxBody     = 2048
)

// requestKey is one kind of request: the HTTP method, the Kubernetes verb
// (LIST, WATCH, GET, CREATE, UPDATE, PATCH, DELETE, DELETECOLLECTION) and the
// resource as "resource[.group][/subresource]".
type requestKey struct {
	Method, Verb, Resource string
}

func (k requestKey) String() string { return k.Verb + " " + k.Resource }

// dryRun prefixes the verb of a request with dryRun set: it persists
// nothing (the rollout asks the server that way whether it accepts a
// lowered request), so it is no write.
const dryRun = "DRYRUN-"

// write reports whether the request changes state on the server.
func (k requestKey) write() bool {
	if strings.HasPrefix(k.Verb, dryRun) {
		return false
	}
	switch k.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// startProxy listens on a free loopback port and forwards to upstream's
// host with upstream's credentials (a ServiceAccount's token).
func startProxy(upstream *rest.Config) (*apiProxy, error) {
	rp, err := benchkit.NewReverseProxy(upstream)
	if err != nil {
		return nil, err
	}
	cert, caPEM, err := selfSignedCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &apiProxy{
		url:      "https://" + ln.Addr().String(),
		caPEM:    caPEM,
		counts:   map[requestKey]int64{},
		done:     map[requestKey]map[int]int64{},
		latency:  map[requestKey]float64{},
		arrivals: map[string]map[int64]int{},
		shapes:   map[requestKey]map[string]int64{},
		served:   make(chan error, 1),
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := classify(r.Method, r.URL)
			if strings.HasSuffix(k.Verb, "PATCH") || k.write() && p.isCapturing() {
				body := readBody(r)
				if strings.HasSuffix(k.Verb, "PATCH") {
					p.countShape(k, patchShape(body))
				}
				p.capture(r, body)
			}
			began := p.arrived(k)
			sw := benchkit.NewStatusWriter(w)
			rp.ServeHTTP(sw, r)
			if k.Verb != "WATCH" {
				p.completed(k, sw.Code, time.Since(began))
			}
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		// ServeTLS enables HTTP/2, which client-go negotiates like it does with kube-apiserver.
		err := p.srv.ServeTLS(ln, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		p.served <- err
	}()
	return p, nil
}

// readBody reads r's body and puts an identical one back, so the request is
// forwarded unchanged. Controller writes are small objects.
func readBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil // the API server sees the short body and answers for it
	}
	return body
}

// patchShape names the fields a JSON patch body writes: its top-level keys,
// and one level deeper under metadata, spec and status, e.g.
// "metadata{resourceVersion} status{conditions}". Server-side apply bodies
// are JSON too (YAML's subset).
func patchShape(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return "(not a JSON object)"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		sub, ok := m[k].(map[string]any)
		if ok && (k == "metadata" || k == "spec" || k == "status") {
			parts = append(parts, k+"{"+strings.Join(sortedKeys(sub), ",")+"}")
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, " ")
}

func (p *apiProxy) countShape(k requestKey, shape string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shapes[k] == nil {
		p.shapes[k] = map[string]int64{}
	}
	p.shapes[k][shape]++
}

func (p *apiProxy) isCapturing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capturing
}

// capture keeps the write request r and its body while capturing.
func (p *apiProxy) capture(r *http.Request, body []byte) {
	if len(body) > maxBody {
		body = append(body[:maxBody:maxBody], "…"...)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capturing && len(p.captured) < maxCaptured {
		p.captured = append(p.captured, capturedWrite{At: time.Now(), Request: r.Method + " " + r.URL.RequestURI(), Body: string(body)})
	}
}

// setCapturing starts or stops keeping writes; stopping returns those kept.
func (p *apiProxy) setCapturing(on bool) []capturedWrite {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capturing = on
	out := p.captured
	p.captured = nil
	return out
}

// arrived counts a request when it arrives and returns the time.
func (p *apiProxy) arrived(k requestKey) time.Time {
	now := time.Now()
	g := rateGroup(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[k]++
	if k.Verb == "WATCH" {
		return now
	}
	if p.arrivals[g] == nil {
		p.arrivals[g] = map[int64]int{}
	}
	p.arrivals[g][now.Unix()]++
	return now
}

func (p *apiProxy) completed(k requestKey, code int, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done[k] == nil {
		p.done[k] = map[int]int64{}
	}
	p.done[k][code]++
	p.latency[k] += took.Seconds()
}

// proxyCounts is a copy of the proxy's counters.
type proxyCounts struct {
	arrived map[requestKey]int64
	done    map[requestKey]map[int]int64
	latency map[requestKey]float64
	shapes  map[requestKey]map[string]int64
}

func (p *apiProxy) snapshot() proxyCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := proxyCounts{
		arrived: make(map[requestKey]int64, len(p.counts)),
		done:    make(map[requestKey]map[int]int64, len(p.done)),
		latency: make(map[requestKey]float64, len(p.latency)),
		shapes:  make(map[requestKey]map[string]int64, len(p.shapes)),
	}
	for k, shapes := range p.shapes {
		c.shapes[k] = make(map[string]int64, len(shapes))
		for shape, n := range shapes {
			c.shapes[k][shape] = n
		}
	}
	for k, v := range p.counts {
		c.arrived[k] = v
	}
	for k, codes := range p.done {
		c.done[k] = make(map[int]int64, len(codes))
		for code, n := range codes {
			c.done[k][code] = n
		}
	}
	for k, v := range p.latency {
		c.latency[k] = v
	}
	return c
}

// rateGroup is the unit client-side rate limiting applies to, as far as the
// URL tells: controller-runtime gives each resource type its own REST client
// (and token bucket); a subresource shares its resource's.
func rateGroup(k requestKey) string {
	res, _, _ := strings.Cut(k.Resource, "/")
	return res
}

// peakRates returns, per rate group with requests other than watches in
// [from, to], the most requests that arrived in any span of the given
// whole seconds, divided by its length: a sustained rate that sits at a
// round number is a client-side token bucket.
func (p *apiProxy) peakRates(from, to time.Time, span int64) map[string]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]float64{}
	span = max(1, min(span, to.Unix()-from.Unix()+1)) // a short window is one span
	for g, secs := range p.arrivals {
		best := 0
		for start := from.Unix(); start+span-1 <= to.Unix(); start++ {
			n := 0
			for s := start; s < start+span; s++ {
				n += secs[s]
			}
			best = max(best, n)
		}
		if best > 0 {
			out[g] = float64(best) / float64(span)
		}
	}
	return out
}

// close stops serving; the controller must be stopped first.
func (p *apiProxy) close() error {
	err := p.srv.Close()
	return errors.Join(err, <-p.served)
}

// writeKubeconfig writes a kubeconfig that reaches the API server through
// the proxy, trusting only the proxy's certificate. It carries no
// credentials: the proxy authenticates upstream.
func (p *apiProxy) writeKubeconfig(path string) error {
	const name = "claimwarden-scale"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: p.url, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}

// classify maps a request to its Kubernetes verb and resource, the way the
// API server's request info resolver does for the paths a controller uses.
func classify(method string, u *url.URL) requestKey {
	k := requestKey{Method: method, Verb: method}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	var group string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	case len(parts) >= 1 && (parts[0] == "api" || parts[0] == "apis"):
		k.Resource = "(discovery)"
		return k
	default:
		k.Resource = "(non-resource " + u.Path + ")"
		return k
	}
	if len(rest) == 0 {
		k.Resource = "(discovery)"
		return k
	}
	// /namespaces/<ns>/<resource>/... is namespaced; /namespaces/<name> is a Namespace.
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	resource, name, sub := rest[0], "", ""
	if len(rest) > 1 {
		name = rest[1]
	}
	if len(rest) > 2 {
		sub = rest[2]
	}
	if group != "" {
		resource += "." + group
	}
	if sub != "" {
		resource += "/" + sub
	}
	k.Resource = resource
	switch method {
	case http.MethodGet:
		switch {
		case benchkit.IsWatch(u):
			k.Verb = "WATCH"
		case name == "":
			k.Verb = "LIST"
		default:
			k.Verb = "GET"
		}
	case http.MethodPost:
		k.Verb = "CREATE"
	case http.MethodPut:
		k.Verb = "UPDATE"
	case http.MethodPatch:
		k.Verb = "PATCH"
	case http.MethodDelete:
		k.Verb = "DELETE"
		if name == "" {
			k.Verb = "DELETECOLLECTION"
		}
	}
	if method != http.MethodGet && u.Query().Has("dryRun") {
		k.Verb = dryRun + k.Verb
	}
	return k
}

// selfSignedCert returns a serving certificate for 127.0.0.1 that is its own CA.
func selfSignedCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "claimwarden-scale-proxy"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

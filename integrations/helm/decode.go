package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	rcommon "helm.sh/helm/v4/pkg/release/common"
)

// Release is what claimwarden reads of a Helm release record. The record
// also holds the chart (files, templates, values, schema) and the values
// given: claimwarden skips those without building them, since a crafted
// record packs millions of tiny JSON values there, each costing far more
// memory decoded than its bytes.
type Release struct {
	Name, Namespace string
	Version         int
	// Status and Description are the record's info.status and
	// info.description; empty without info.
	Status      rcommon.Status
	Description string
	// ChartName and ChartVersion are chart.metadata.name and .version.
	ChartName, ChartVersion string
	Manifest                string
}

// maxDepth bounds the nesting of skipped values, as encoding/json bounds
// what it decodes: the token stream keeps a word per open level.
const maxDepth = 10000

// decodeRelease is Helm's encoding undone: base64, then gzip, then JSON, with
// at most maxBytes read after unpacking. The JSON is read as a stream:
// besides what Release keeps, one string or number at a time is held whole,
// in the decoder's buffer (which grows to up to twice its length).
func decodeRelease(data []byte, maxBytes int64) (*Release, error) {
	if len(data) == 0 {
		return nil, errors.New("empty")
	}
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(raw, data)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	raw = raw[:n]
	var in io.Reader = bytes.NewReader(raw)
	if bytes.HasPrefix(raw, gzipMagic) {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	u := &unpacked{r: io.LimitReader(in, maxBytes+1), max: maxBytes}
	rel, err := readRecord(json.NewDecoder(u))
	if u.err != nil {
		return nil, u.err
	}
	if err != nil {
		return nil, fmt.Errorf("not a Helm release: %w", err)
	}
	return rel, nil
}

// unpacked reads the unpacked record, at most max bytes of it. Its errors
// are kept: they, not the JSON error they cause, say what went wrong.
type unpacked struct {
	r      io.Reader
	n, max int64
	err    error
}

func (u *unpacked) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	u.n += int64(n)
	switch {
	case u.n > u.max:
		u.err = fmt.Errorf("the record is larger than %d bytes unpacked (maxReleaseBytes)", u.max)
	case err != nil && err != io.EOF:
		u.err = fmt.Errorf("unpacking: %w", err)
	default:
		return n, err
	}
	return n, u.err
}

// readRecord reads the release object and then the end of the stream, so
// that trailing data is an error and gzip's checksum is checked.
func readRecord(dec *json.Decoder) (*Release, error) {
	var rel Release
	err := fields(dec, "", func(key, path string) error {
		switch {
		case is(key, "name"):
			return decode(dec, path, &rel.Name)
		case is(key, "namespace"):
			return decode(dec, path, &rel.Namespace)
		case is(key, "version"):
			return decode(dec, path, &rel.Version)
		case is(key, "manifest"):
			return decode(dec, path, &rel.Manifest)
		case is(key, "info"):
			return fields(dec, path, func(key, path string) error {
				switch {
				case is(key, "status"):
					return decode(dec, path, &rel.Status)
				case is(key, "description"):
					return decode(dec, path, &rel.Description)
				}
				return skip(dec, path)
			})
		case is(key, "chart"):
			return fields(dec, path, func(key, path string) error {
				if !is(key, "metadata") {
					return skip(dec, path)
				}
				return readMetadata(dec, path, &rel)
			})
		}
		return skip(dec, path)
	})
	if err != nil {
		return nil, err
	}
	switch _, err := dec.Token(); err {
	case io.EOF:
		return &rel, nil
	case nil:
		return nil, errors.New("data after the release object")
	default:
		return nil, err
	}
}

func readMetadata(dec *json.Decoder, path string, rel *Release) error {
	return fields(dec, path, func(key, path string) error {
		switch {
		case is(key, "name"):
			return decode(dec, path, &rel.ChartName)
		case is(key, "version"):
			return decode(dec, path, &rel.ChartVersion)
		}
		return skip(dec, path)
	})
}

// is matches a key as encoding/json matches a field's name (exactly, else
// case-insensitively), so the record reads as Helm itself reads it.
func is(key, name string) bool {
	return strings.EqualFold(key, name)
}

// fields calls each with every key of the object next in dec, and the key's
// path; each must read the key's value. A null object has no keys. A key
// given twice is read twice: the last value wins, as with encoding/json.
func fields(dec *json.Decoder, path string, each func(key, path string) error) error {
	t, err := token(dec, path)
	if err != nil || t == nil {
		return err
	}
	if t != json.Delim('{') {
		return fmt.Errorf("%s: %v is not an object", orTop(path), t)
	}
	for dec.More() {
		t, err := token(dec, path)
		if err != nil {
			return err
		}
		key := t.(string) // the decoder allows only strings here
		if err := each(key, join(path, key)); err != nil {
			return err
		}
	}
	_, err = token(dec, path) // the closing brace
	return err
}

// skip reads the value next in dec without keeping it: objects and arrays
// token by token, strings, numbers and literals whole (no long string is
// copied). open holds the levels entered, true for an object.
func skip(dec *json.Decoder, path string) error {
	var open []bool
	afterKey := false
	for {
		atValue := len(open) == 0 || !open[len(open)-1] || afterKey
		afterKey = false
		if atValue && scalarNext(dec) {
			if err := decode(dec, path, &skipped{}); err != nil {
				return err
			}
		} else {
			t, err := token(dec, path)
			if err != nil {
				return err
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				if len(open) == maxDepth {
					return fmt.Errorf("%s: nested deeper than %d levels", path, maxDepth)
				}
				open = append(open, t == json.Delim('{'))
			case json.Delim('}'), json.Delim(']'):
				open = open[:len(open)-1]
			default:
				afterKey = !atValue
			}
		}
		if len(open) == 0 {
			return nil
		}
	}
}

// scalarNext reports whether the value next in dec starts, as far as dec
// has read ahead, with neither a brace nor a bracket. Should the guess be
// wrong, the decoder still checks the syntax.
func scalarNext(dec *json.Decoder) bool {
	r, ok := dec.Buffered().(io.ByteReader)
	for ok {
		c, err := r.ReadByte()
		switch {
		case err != nil:
			return false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':':
			continue
		}
		return c != '{' && c != '[' && c != '}' && c != ']'
	}
	return false
}

// skipped takes a JSON value the decoder has checked and keeps nothing.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// token is dec.Token inside the release object.
func token(dec *json.Decoder, path string) (json.Token, error) {
	t, err := dec.Token()
	return t, inside(path, err)
}

// decode is dec.Decode inside the release object.
func decode(dec *json.Decoder, path string, v any) error {
	return inside(path, dec.Decode(v))
}

// inside names where err happened; the end of the stream is unexpected there.
func inside(path string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("%s: %w", orTop(path), err)
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the record"
	}
	return path
}

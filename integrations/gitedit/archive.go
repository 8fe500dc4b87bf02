package gitedit

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
)

// Bounds of the archives in a chart (subcharts as charts/*.tgz), shared by
// all of them, nested ones included: Helm's loader bounds each archive on
// its own (100 MiB), so a few hundred KiB of archives in Git unpacked to
// over a GiB (issue 39).
const (
	MaxUnpackedBytes = 32 << 20
	maxArchiveFiles  = 10000
	maxArchiveDepth  = 4
)

// errUnpacked says the chart's archives unpack to more than is read.
var errUnpacked = fmt.Errorf("its archives (subcharts) unpack to more than %d MiB", MaxUnpackedBytes>>20)

// unpackBudget is what is left of the bounds while a chart's archives are
// read.
type unpackBudget struct {
	bytes int64
	files int
}

// checkArchives unpacks, without keeping them, the archives among files
// (and the archives inside those) within one shared budget, so that Helm's
// loader, which unpacks them again, reads no more than that.
func checkArchives(files []ChartFile) error {
	b := &unpackBudget{bytes: MaxUnpackedBytes, files: maxArchiveFiles}
	for _, f := range files {
		if path.Ext(f.Name) != ".tgz" {
			continue
		}
		if err := b.read(f.Name, f.Data, 1); err != nil {
			return err
		}
	}
	return nil
}

// read unpacks one archive, counting every byte against the budget.
func (b *unpackBudget) read(name string, data []byte, depth int) error {
	if depth > maxArchiveDepth {
		return fmt.Errorf("%s: archives nested more than %d deep", name, maxArchiveDepth)
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer gz.Close()
	tr := tar.NewReader(&limited{r: gz, b: b})
	for {
		h, err := tr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		}
		if b.files--; b.files < 0 {
			return fmt.Errorf("%s: the chart's archives hold more than %d files", name, maxArchiveFiles)
		}
		if h.Typeflag != tar.TypeReg || path.Ext(h.Name) != ".tgz" {
			if _, err := io.Copy(io.Discard, tr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		inner, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := b.read(name+"/"+h.Name, inner, depth+1); err != nil {
			return err
		}
	}
}

// limited counts what is read from an archive's decompressed stream
// against the shared budget, and fails past it.
type limited struct {
	r io.Reader
	b *unpackBudget
}

func (l *limited) Read(p []byte) (int, error) {
	if l.b.bytes <= 0 {
		return 0, errUnpacked
	}
	if int64(len(p)) > l.b.bytes {
		p = p[:l.b.bytes]
	}
	n, err := l.r.Read(p)
	l.b.bytes -= int64(n)
	return n, err
}

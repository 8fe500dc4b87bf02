package manifests

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Stdin is the path that reads standard input, and the file name its
// objects carry.
const (
	Stdin     = "-"
	StdinName = "stdin"
)

// Read decodes every path in order: "-" reads stdin (once), a file is
// decoded whatever its name, and a directory contributes its *.yaml, *.yml
// and *.json files, recursively, in lexical order. Hidden files and
// directories (".git", ".github") are skipped. A path that does not exist,
// or a directory holding no manifests, is an error: a typo must not pass a
// check by checking nothing. Only regular files are read (a symlink is
// followed to one): a device or a FIFO would never end. The default Limits
// apply; Limits.Read takes others.
func Read(paths []string, stdin io.Reader) ([]Object, error) {
	return Limits{}.Read(paths, stdin)
}

func read[T any](paths []string, stdin io.Reader, b *budget, v visit[T]) error {
	readStdin := false
	for _, p := range paths {
		if p == Stdin {
			if readStdin {
				return errors.New(`"-" (stdin) is given twice`)
			}
			readStdin = true
			if err := decode(stdin, StdinName, b, v); err != nil {
				return err
			}
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		files := []string{p}
		if fi.IsDir() {
			if files, err = manifestFiles(p); err != nil {
				return err
			}
			if len(files) == 0 {
				return fmt.Errorf("%s: no *.yaml, *.yml or *.json files in the directory", p)
			}
		}
		for _, f := range files {
			if err := readFile(f, b, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// readFile reads a regular file. It is opened without blocking, so that a
// FIFO, which would wait for a writer, is refused by the check that follows
// instead; checking the open file, not the path, leaves no time to swap it.
func readFile[T any](path string, b *budget, v visit[T]) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file but %s: only files are read as manifests", path, kindOf(fi.Mode()))
	}
	return decode(f, path, b, v)
}

// manifestFiles lists the manifest files below dir.
func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && isManifestName(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "of mode " + m.String()
}

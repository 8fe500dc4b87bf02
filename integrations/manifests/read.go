package manifests

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Stdin is the path that reads standard input, and the file name its
// objects carry.
const (
	Stdin     = "-"
	stdinName = "stdin"
)

// Read decodes every path in order: "-" reads stdin (once), a file is
// decoded whatever its name, and a directory contributes its *.yaml, *.yml
// and *.json files, recursively, in lexical order. Hidden files and
// directories (".git", ".github") are skipped. A path that does not exist,
// or a directory holding no manifests, is an error: a typo must not pass a
// check by checking nothing.
func Read(paths []string, stdin io.Reader) ([]Object, error) {
	var out []Object
	readStdin := false
	for _, p := range paths {
		if p == Stdin {
			if readStdin {
				return nil, errors.New(`"-" (stdin) is given twice`)
			}
			readStdin = true
			objs, err := Decode(stdin, stdinName)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		files := []string{p}
		if fi.IsDir() {
			if files, err = manifestFiles(p); err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.yaml, *.yml or *.json files in the directory", p)
			}
		}
		for _, f := range files {
			objs, err := readFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func readFile(path string) ([]Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f, path)
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

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// printer writes the story. Colour is used only on a terminal (and never with
// NO_COLOR or TERM=dumb), so a piped or logged run stays plain text.
type printer struct {
	w      io.Writer
	colour bool
	steps  int
}

func newPrinter(f *os.File) *printer {
	return &printer{w: f, colour: isTerminal(f) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

// isTerminal reports whether f is a character device, which is what a
// terminal is; golang.org/x/term is not a direct dependency of the module.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

// paint wraps s in an SGR colour code when colour is on.
func (p *printer) paint(code, s string) string {
	if !p.colour {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) title(s string) { fmt.Fprintln(p.w, p.paint(bold, s)) }

// step starts the next numbered part of the story.
func (p *printer) step(s string) {
	p.steps++
	fmt.Fprintf(p.w, "\n%s\n", p.paint(bold+";"+cyan, fmt.Sprintf("%d. %s", p.steps, s)))
}

func (p *printer) ok(s string)   { fmt.Fprintf(p.w, "   %s %s\n", p.paint(green, "✓"), s) }
func (p *printer) fail(s string) { fmt.Fprintf(p.w, "   %s %s\n", p.paint(red, "✗"), s) }
func (p *printer) warn(s string) { fmt.Fprintf(p.w, "   %s %s\n", p.paint(yellow, "!"), s) }
func (p *printer) note(s string) { fmt.Fprintf(p.w, "   %s\n", s) }
func (p *printer) cmd(s string)  { fmt.Fprintf(p.w, "   %s\n", p.paint(dim, "$ "+s)) }

// quote prints a message from elsewhere (the API server), indented, one
// sentence fragment per line so that long refusals stay readable.
func (p *printer) quote(s string) {
	for _, line := range strings.Split(s, "\n") {
		fmt.Fprintf(p.w, "     %s\n", p.paint(yellow, line))
	}
}

// table prints rows aligned in columns; the first row is the header.
func (p *printer) table(rows [][]string) {
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	for i, r := range rows {
		line := strings.Join(r, "\t")
		if i == 0 {
			// Painting the header would make tabwriter count the escape codes
			// as width, so it stays plain.
			line = strings.ToUpper(line)
		}
		fmt.Fprintf(tw, "     %s\n", line)
	}
	tw.Flush()
}

package policies

import (
	"fmt"
	"maps"
	"slices"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/opa/v1/logging"
)

// opaLogger routes the messages of OPA's downloader, REST client and
// plugins into the controller's logr logger, so they share its format and
// level. OPA's Info and Debug map to logr V(1) (OPA is chatty about every
// poll); Warn to Info; Error to Error. The console logger of OPA's
// decision-log plugin ("console": true) writes each decision at Info, so
// for it (console set) Info stays Info.
type opaLogger struct {
	log     logr.Logger
	fields  map[string]any
	console bool
}

var _ logging.Logger = opaLogger{}

func newOPALogger(l logr.Logger, component string) opaLogger {
	return opaLogger{log: l.WithName("opa"), fields: map[string]any{"component": component}}
}

func (l opaLogger) kv() []any {
	kv := make([]any, 0, 2*len(l.fields))
	for _, k := range slices.Sorted(maps.Keys(l.fields)) {
		kv = append(kv, k, l.fields[k])
	}
	return kv
}

func (l opaLogger) Debug(f string, a ...any) { l.log.V(1).Info(fmt.Sprintf(f, a...), l.kv()...) }
func (l opaLogger) Info(f string, a ...any) {
	if l.console {
		l.log.Info(fmt.Sprintf(f, a...), l.kv()...)
		return
	}
	l.log.V(1).Info(fmt.Sprintf(f, a...), l.kv()...)
}
func (l opaLogger) Warn(f string, a ...any)  { l.log.Info(fmt.Sprintf(f, a...), l.kv()...) }
func (l opaLogger) Error(f string, a ...any) { l.log.Error(nil, fmt.Sprintf(f, a...), l.kv()...) }

func (l opaLogger) WithFields(f map[string]any) logging.Logger {
	merged := maps.Clone(l.fields)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, f)
	return opaLogger{log: l.log, fields: merged, console: l.console}
}

// GetLevel tells OPA whether to build debug messages at all.
func (l opaLogger) GetLevel() logging.Level {
	if l.log.V(1).Enabled() {
		return logging.Debug
	}
	return logging.Warn
}

// SetLevel is ignored: the controller's logger decides.
func (opaLogger) SetLevel(logging.Level) {}

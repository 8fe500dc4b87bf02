package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parsedFlags returns the flags of BindFlags after parsing args.
func parsedFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDefaultIsValid(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	want := Config{
		UpdateStrategy:       v1alpha1.InPlace,
		MaxConcurrentPatches: 1,
		MetricsAddr:          ":8080",
		HealthAddr:           ":8081",
		LeaderElection:       LeaderElection{Enabled: true, Namespace: podNamespace(), ID: "claimwarden.claimwarden.dev"},
		Log:                  Log{Level: "info", Format: "json"},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Default() = %+v, want %+v", d, want)
	}
}

func TestPodNamespace(t *testing.T) {
	old := namespaceFile
	t.Cleanup(func() { namespaceFile = old })

	namespaceFile = filepath.Join(t.TempDir(), "missing")
	if got := podNamespace(); got != DefaultLeaderElectionNamespace {
		t.Errorf("outside a Pod: podNamespace() = %q, want %q", got, DefaultLeaderElectionNamespace)
	}

	namespaceFile = writeConfig(t, "ops\n")
	if got := podNamespace(); got != "ops" {
		t.Errorf("in a Pod: podNamespace() = %q, want ops", got)
	}
	if got := Default().LeaderElection.Namespace; got != "ops" {
		t.Errorf("in a Pod: Default().LeaderElection.Namespace = %q, want ops", got)
	}
}

// TestKeysCoverConfig keeps Keys, BindFlags and the struct tags from drifting apart.
func TestKeysCoverConfig(t *testing.T) {
	var tags []string
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, prefix string) {
		for f := range typ.Fields() {
			name := prefix + f.Tag.Get("mapstructure")
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, name+".")
				continue
			}
			tags = append(tags, name)
		}
	}
	walk(reflect.TypeFor[Config](), "")

	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs)
	flags := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })

	var names []string
	for _, k := range Keys() {
		names = append(names, k.Name)
		if !flags[k.Flag] {
			t.Errorf("key %s: BindFlags registers no flag --%s", k.Name, k.Flag)
		}
		delete(flags, k.Flag)
	}
	if !reflect.DeepEqual(names, tags) {
		t.Errorf("Keys() names = %v, want the struct tags %v", names, tags)
	}
	if len(flags) > 0 {
		t.Errorf("BindFlags registers flags no key lists: %v", flags)
	}
}

func TestKeysEnv(t *testing.T) {
	want := map[string]string{
		"leaderElection.enabled": "CLAIMWARDEN_LEADERELECTION_ENABLED",
		"maxConcurrentPatches":   "CLAIMWARDEN_MAXCONCURRENTPATCHES",
		"log.format":             "CLAIMWARDEN_LOG_FORMAT",
	}
	for _, k := range Keys() {
		if w, ok := want[k.Name]; ok && k.Env != w {
			t.Errorf("key %s: Env = %s, want %s", k.Name, k.Env, w)
		}
	}
}

func TestLoad(t *testing.T) {
	const file = `
namespaces: [apps, data]
labelSelector: tier=db
updateStrategy: OnClaimDelete
maxConcurrentPatches: 2
leaderElection:
  enabled: false
  id: from-file
log:
  level: debug
`
	tests := []struct {
		name  string
		file  string // empty: no file
		env   []string
		flags []string
		check func(t *testing.T, c Config)
	}{{
		name: "defaults",
		check: func(t *testing.T, c Config) {
			if diff := cmp.Diff(Default(), c, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Load differs from Default() (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "file over default",
		file: file,
		check: func(t *testing.T, c Config) {
			want := Default()
			want.Namespaces = []string{"apps", "data"}
			want.LabelSelector = "tier=db"
			want.UpdateStrategy = v1alpha1.OnClaimDelete
			want.MaxConcurrentPatches = 2
			want.LeaderElection.Enabled = false
			want.LeaderElection.ID = "from-file"
			want.Log.Level = "debug"
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "env over file",
		file: file,
		env: []string{
			"CLAIMWARDEN_MAXCONCURRENTPATCHES=3",
			"CLAIMWARDEN_LEADERELECTION_ENABLED=true",
			"CLAIMWARDEN_NAMESPACES=web,cache",
			"CLAIMWARDEN_LOG_FORMAT=console",
			"PATH=/usr/bin", // not ours: ignored
		},
		check: func(t *testing.T, c Config) {
			if c.MaxConcurrentPatches != 3 || !c.LeaderElection.Enabled || c.Log.Format != "console" {
				t.Errorf("env did not win over file: %+v", c)
			}
			if !reflect.DeepEqual(c.Namespaces, []string{"web", "cache"}) {
				t.Errorf("Namespaces = %q, want [web cache]", c.Namespaces)
			}
			if c.LeaderElection.ID != "from-file" || c.Log.Level != "debug" {
				t.Errorf("keys the env does not set lost their file values: %+v", c)
			}
		},
	}, {
		name:  "flag over env over file",
		file:  file,
		env:   []string{"CLAIMWARDEN_MAXCONCURRENTPATCHES=3", "CLAIMWARDEN_UPDATESTRATEGY=InPlace"},
		flags: []string{"--max-concurrent-patches=4", "--leader-election=true", "--namespaces=a", "--namespaces=b"},
		check: func(t *testing.T, c Config) {
			if c.MaxConcurrentPatches != 4 || !c.LeaderElection.Enabled {
				t.Errorf("flags did not win: %+v", c)
			}
			if !reflect.DeepEqual(c.Namespaces, []string{"a", "b"}) {
				t.Errorf("Namespaces = %q, want [a b]", c.Namespaces)
			}
			if c.UpdateStrategy != v1alpha1.InPlace {
				t.Errorf("UpdateStrategy = %s: env (not set by a flag) lost to the file", c.UpdateStrategy)
			}
			if c.LabelSelector != "tier=db" {
				t.Errorf("LabelSelector = %q: unset flag's default overrode the file", c.LabelSelector)
			}
		},
	}, {
		name:  "flag sets a key to empty",
		file:  file,
		flags: []string{"--namespaces=", "--label-selector="},
		check: func(t *testing.T, c Config) {
			if len(c.Namespaces) != 0 || c.LabelSelector != "" {
				t.Errorf("Namespaces = %q, LabelSelector = %q, want both empty", c.Namespaces, c.LabelSelector)
			}
		},
	}, {
		name: "empty env variable counts as unset",
		file: file,
		env:  []string{"CLAIMWARDEN_LEADERELECTION_ENABLED=", "CLAIMWARDEN_MAXCONCURRENTPATCHES="},
		check: func(t *testing.T, c Config) {
			if c.LeaderElection.Enabled || c.MaxConcurrentPatches != 2 {
				t.Errorf("empty variables overrode the file: %+v", c)
			}
		},
	}, {
		name: "keys are case-insensitive in the file",
		file: "LabelSelector: app=x\nLOG:\n  Level: error\n",
		check: func(t *testing.T, c Config) {
			if c.LabelSelector != "app=x" || c.Log.Level != "error" {
				t.Errorf("got %+v", c)
			}
		},
	}, {
		name:  "metrics disabled",
		flags: []string{"--metrics-addr=0", "--health-addr=127.0.0.1:9000"},
		check: func(t *testing.T, c Config) {
			if c.MetricsAddr != "0" || c.HealthAddr != "127.0.0.1:9000" {
				t.Errorf("got %+v", c)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			c, err := Load(parsedFlags(t, tt.flags...), path, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadWithoutFlags(t *testing.T) {
	c, err := Load(nil, "", []string{"CLAIMWARDEN_LOG_LEVEL=error"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "error" || c.MaxConcurrentPatches != 1 {
		t.Errorf("got %+v", c)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   []string
		flags []string
		want  string // the whole error text, or its start when it ends with "..."
	}{{
		name: "unknown top-level key in file",
		file: "labelSelectr: app=db\n",
		want: `unknown key "labelselectr" (known keys: kubeconfig, namespaces, labelSelector, updateStrategy, maxConcurrentPatches, metricsAddr, healthAddr, leaderElection.enabled, leaderElection.namespace, leaderElection.id, log.level, log.format)`,
	}, {
		name: "unknown nested keys in file",
		file: "leaderElection:\n  enable: true\nlog:\n  colour: red\n",
		want: `unknown keys "leaderelection.enable", "log.colour" (known keys: ...`,
	}, {
		name: "map where a value belongs",
		file: "leaderElection: true\n",
		want: `leaderElection: expected a map or struct, got "bool"`,
	}, {
		name: "unknown environment variable",
		env:  []string{"CLAIMWARDEN_UPDATE_STRATEGY=InPlace", "CLAIMWARDEN_LEADER_ELECTION=false"},
		want: "unknown environment variables CLAIMWARDEN_LEADER_ELECTION, CLAIMWARDEN_UPDATE_STRATEGY: no configuration key is named so",
	}, {
		name: "one unknown environment variable",
		env:  []string{"CLAIMWARDEN_LOGLEVEL=debug"},
		want: "unknown environment variable CLAIMWARDEN_LOGLEVEL: no configuration key is named so",
	}, {
		name: "invalid value in file",
		file: "updateStrategy: Sideways\n",
		want: `updateStrategy: "Sideways" is not one of InPlace, OnClaimDelete`,
	}, {
		name: "invalid value in env",
		env:  []string{"CLAIMWARDEN_LOG_LEVEL=warn"},
		want: `log.level: "warn" is not one of debug, info, error`,
	}, {
		name:  "invalid value by flag",
		flags: []string{"--max-concurrent-patches=0"},
		want:  `maxConcurrentPatches: "0" is less than 1`,
	}, {
		name: "not a number in env",
		env:  []string{"CLAIMWARDEN_MAXCONCURRENTPATCHES=many"},
		want: `maxConcurrentPatches: "many" is not a valid int`,
	}, {
		name: "not a boolean in file",
		file: "leaderElection:\n  enabled: maybe\n",
		want: `leaderElection.enabled: "maybe" is not a valid bool`,
	}, {
		name: "several problems at once",
		file: "log:\n  level: trace\n  format: xml\n",
		want: "log.level: \"trace\" is not one of debug, info, error\nlog.format: \"xml\" is not one of json, console",
	}, {
		name: "file that is not YAML",
		file: "log: [\n",
		want: "reading config file ...",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			_, err := Load(parsedFlags(t, tt.flags...), path, tt.env)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			got := err.Error()
			if tt.file != "" {
				// Errors about the file name it first.
				got = strings.TrimPrefix(got, "config file "+path+": ")
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("error = %q, want it to start with %q", got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := Load(nil, path, nil)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want one naming %s", err, path)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"namespace name", func(c *Config) { c.Namespaces = []string{"ok", "Not_OK"} },
			`namespaces: "Not_OK" is not a namespace name: a lowercase RFC 1123 label must consist of ...`},
		{"empty namespace", func(c *Config) { c.Namespaces = []string{""} },
			`namespaces: "" is not a namespace name: ...`},
		{"label selector", func(c *Config) { c.LabelSelector = "app in (db" },
			`labelSelector: "app in (db" is not a label selector: ...`},
		{"update strategy", func(c *Config) { c.UpdateStrategy = "Sideways" },
			`updateStrategy: "Sideways" is not one of InPlace, OnClaimDelete`},
		{"update strategy is case-sensitive", func(c *Config) { c.UpdateStrategy = "inplace" },
			`updateStrategy: "inplace" is not one of InPlace, OnClaimDelete`},
		{"max concurrent patches", func(c *Config) { c.MaxConcurrentPatches = -1 },
			`maxConcurrentPatches: "-1" is less than 1`},
		{"metrics address without port", func(c *Config) { c.MetricsAddr = "8080" },
			`metricsAddr: "8080" is not "0" or host:port: address 8080: missing port in address`},
		{"health address port", func(c *Config) { c.HealthAddr = ":http" },
			`healthAddr: ":http" has no port number between 0 and 65535`},
		{"health address empty", func(c *Config) { c.HealthAddr = "" },
			`healthAddr: "" is not "0" or host:port: missing port in address`},
		{"leader election namespace", func(c *Config) { c.LeaderElection.Namespace = "" },
			`leaderElection.namespace: "" is not a namespace name: ...`},
		{"leader election id", func(c *Config) { c.LeaderElection.ID = "Claim Warden" },
			`leaderElection.id: "Claim Warden" is not a Lease name: ...`},
		{"log level", func(c *Config) { c.Log.Level = "INFO" },
			`log.level: "INFO" is not one of debug, info, error`},
		{"log format", func(c *Config) { c.Log.Format = "text" },
			`log.format: "text" is not one of json, console`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error = %q, want it to start with %q", err, prefix)
				}
			} else if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	c := Default()
	c.Namespaces = []string{"apps", "data-1"}
	c.LabelSelector = "app in (db,cache),tier!=test,!legacy"
	c.UpdateStrategy = v1alpha1.OnClaimDelete
	c.MaxConcurrentPatches = 10
	c.MetricsAddr = "0"
	c.HealthAddr = "0"
	c.LeaderElection.ID = "claimwarden.example.com"
	c.Log = Log{Level: "debug", Format: "console"}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	sel, err := c.Selector()
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set{"app": "db", "tier": "prod"}) || sel.Matches(labels.Set{"app": "web"}) {
		t.Errorf("Selector() = %s does not select as written", sel)
	}
}

// TestShippedConfigFile loads the file the Deployment mounts: it must stay
// valid and spell out the defaults.
func TestShippedConfigFile(t *testing.T) {
	c, err := Load(nil, "manager/config.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), c, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("manager/config.yaml differs from Default() (-want +got):\n%s", diff)
	}
}

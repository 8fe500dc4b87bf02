package invariants_test

import (
	"os"
	"testing"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// etcd and kube-apiserver only: each rule is fed the exact API calls that
// break it, with no controller acting in between.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, testenv.Options{}, &env)) }

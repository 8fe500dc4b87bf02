package check

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// input reads the manifests of one side, proposed or base, keeping of
// them only what check reads: the StatefulSets as keep keeps them, and
// the StorageClasses, Namespaces and ResourceQuotas. Every other object, and the decoded
// form of each StatefulSet, goes as soon as it is read, so that thousands
// of StatefulSets are never held decoded, nor typed.
type input struct {
	// namespaces are set as the GitOps tool sets them.
	namespaces namespacing
	// keep is given each StatefulSet picked, in input order, and the
	// candidate it came from.
	keep   func(manifests.StatefulSet, candidate)
	picker manifests.Picker
	// statefulSets counts the StatefulSets kept.
	statefulSets int
	nameErrs     []error
	// clusterObjects are the StorageClasses, Namespaces and ResourceQuotas,
	// in input order.
	clusterObjects []manifests.Object
	readStdin      bool
}

// read streams the manifests at paths into in; flag names the option that
// gave "-" in messages.
func (in *input) read(limits manifests.Limits, paths []string, stdin io.Reader, flag string) error {
	add := func(o manifests.Object, c candidate) error {
		in.add(o, c)
		return nil
	}
	if err := manifests.Stream(limits, paths, stdin, in.candidate, add); err != nil {
		return err
	}
	// A standard input that held no object is the output of a command
	// (git show) that failed, not manifests without StatefulSets.
	if slices.Contains(paths, manifests.Stdin) && !in.readStdin {
		return fmt.Errorf("stdin (%s) is empty: no manifests were written to it; did the command writing them fail?", flag)
	}
	return nil
}

// candidate is what one object is to StatefulSets, and where its
// namespace came from.
type candidate struct {
	manifests.Candidate
	namespaceFrom namespaceFrom
}

// candidate sets the namespace of o as the GitOps tool will, and types o,
// where it was decoded. This is the one place where check gives objects
// their namespaces.
func (in *input) candidate(o manifests.Object) candidate {
	from := in.namespaces.apply(o)
	return candidate{Candidate: manifests.CandidateOf(o), namespaceFrom: from}
}

// add keeps what check needs of o, in input order.
func (in *input) add(o manifests.Object, c candidate) {
	in.readStdin = in.readStdin || o.File == manifests.StdinName
	if s, ok := in.picker.Pick(c.Candidate); ok {
		in.statefulSets++
		in.nameErrs = append(in.nameErrs, nameErrors(s)...)
		in.keep(s, c)
	}
	if clusterTarget(o) != nil {
		// Without the document it was read from, which only messages
		// about its fields would need.
		in.clusterObjects = append(in.clusterObjects, manifests.Object{Unstructured: o.Unstructured, Location: o.Location})
	}
}

// result is the warnings about the StatefulSets read, or every problem of
// the input: the picker's, else the names'.
func (in *input) result() ([]manifests.Warning, error) {
	warns, err := in.picker.Result()
	if err != nil {
		return nil, err
	}
	if err := errors.Join(in.nameErrs...); err != nil {
		return nil, err
	}
	return warns, nil
}

// proposal is a proposed StatefulSet as check holds it until it is
// evaluated: the JSON it was typed from, typed again then (typed,
// thousands of them would take four times the memory), and its namespace.
type proposal struct {
	manifests.Location
	namespace, name string
	// namespaceFrom says where its namespace came from, for messages.
	namespaceFrom namespaceFrom
	json          []byte
}

// typed is the proposed StatefulSet, typed again.
func (p proposal) typed() (manifests.StatefulSet, error) {
	sts, err := manifests.TypeAgain(p.json)
	return manifests.StatefulSet{StatefulSet: sts, Location: p.Location}, err
}

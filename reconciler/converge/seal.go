package converge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// RecordVersion is the version of the journal record this code writes and
// the only one it accepts; the MAC covers it, so an old format cannot be
// passed off as the current one.
const RecordVersion = 1

// MinKeyLength is the shortest journal key accepted (HMAC-SHA256's block
// size would allow longer; shorter ones weaken the MAC).
const MinKeyLength = 32

// Record renders the journal entry for re-creating obj in place of the
// object with oldUID, sealed with key: an HMAC-SHA256 over the record
// version, obj's namespace and name, oldUID and obj's JSON. Whoever can
// write the journal (VolumeClaimRollout status) but does not hold the key
// cannot make Resume create anything.
func Record(key []byte, oldUID string, obj *appsv1.StatefulSet) (v1alpha1.PendingRecreate, error) {
	if len(key) < MinKeyLength {
		return v1alpha1.PendingRecreate{}, fmt.Errorf("journal key has %d bytes, want at least %d", len(key), MinKeyLength)
	}
	raw, err := json.Marshal(Prepare(obj))
	if err != nil {
		return v1alpha1.PendingRecreate{}, fmt.Errorf("encode statefulset %s/%s for the journal: %w", obj.Namespace, obj.Name, err)
	}
	return v1alpha1.PendingRecreate{
		UID:     oldUID,
		Object:  runtime.RawExtension{Raw: raw},
		Version: RecordVersion,
		MAC:     base64.StdEncoding.EncodeToString(seal(key, RecordVersion, obj.Namespace, obj.Name, oldUID, raw)),
	}, nil
}

// open returns the StatefulSet a record for key asks to create, if the
// record is provably ours: the current version, a StatefulSet named key,
// and a MAC that verifies with key. The MAC is checked over the object as
// it will be created (decoded, Prepare'd and encoded again), not over the
// stored bytes: the API server re-encodes what it stores.
func open(key []byte, sts types.NamespacedName, rec *v1alpha1.PendingRecreate) (*appsv1.StatefulSet, error) {
	if rec.MAC == "" {
		return nil, errors.New("it carries no MAC: written by a claimwarden older than the sealed journal, or not by claimwarden")
	}
	if rec.Version != RecordVersion {
		return nil, fmt.Errorf("record version %d is not %d", rec.Version, RecordVersion)
	}
	got, err := base64.StdEncoding.DecodeString(rec.MAC)
	if err != nil {
		return nil, errors.New("its MAC is not base64")
	}
	obj, err := objectOf(rec)
	if err != nil {
		return nil, err
	}
	if obj.Namespace != sts.Namespace || obj.Name != sts.Name {
		// Bounded: whoever wrote the record chose these.
		return nil, fmt.Errorf("it names statefulset %.63s/%.253s", obj.Namespace, obj.Name)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode journal object: %w", err)
	}
	if len(key) < MinKeyLength || !hmac.Equal(got, seal(key, rec.Version, sts.Namespace, sts.Name, rec.UID, raw)) {
		return nil, errors.New("its MAC does not verify: it was not written by this controller, or was changed since")
	}
	return obj, nil
}

// seal is the MAC of a record. Each field is length-prefixed so that no two
// different records share an input.
func seal(key []byte, version int32, namespace, name, uid string, object []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("claimwarden.dev/pendingRecreate"))
	m.Write(binary.BigEndian.AppendUint32(nil, uint32(version)))
	for _, f := range [][]byte{[]byte(namespace), []byte(name), []byte(uid), object} {
		m.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f))))
		m.Write(f)
	}
	return m.Sum(nil)
}

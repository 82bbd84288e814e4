package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/msgio"
)

// ReadMessage reads the site message in the file at path and checks it
// ([federate.Decode]); the result names the file without its directory,
// with its size and SHA-256.
func ReadMessage(path string) (federate.Incoming, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return federate.Incoming{}, err
	}
	sum := sha256.Sum256(b)
	meta, vecs, err := msgio.Read(path)
	if err != nil {
		return federate.Incoming{}, err
	}
	fv := make([]federate.Vec, len(vecs))
	for i, v := range vecs {
		fv[i] = federate.Vec(v)
	}
	msg, err := federate.Decode(path, meta, fv)
	if err != nil {
		return federate.Incoming{}, err
	}
	return federate.Incoming{File: filepath.Base(path), Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Msg: msg}, nil
}

// ReadMessages reads the message files at paths, in order ([ReadMessage]),
// and returns them with their total size in bytes.
func ReadMessages(paths []string) ([]federate.Incoming, int64, error) {
	var in []federate.Incoming
	var bytes int64
	for _, p := range paths {
		inc, err := ReadMessage(p)
		if err != nil {
			return nil, 0, err
		}
		bytes += inc.Bytes
		in = append(in, inc)
	}
	return in, bytes, nil
}

// WriteMessage writes msg to the file at path (atomically: the file
// appears only when complete) and returns its size in bytes.
func WriteMessage(path string, msg *federate.Message) (int64, error) {
	meta, vecs, err := msg.Encode()
	if err != nil {
		return 0, err
	}
	mv := make([]msgio.Vector, len(vecs))
	for i, v := range vecs {
		mv[i] = msgio.Vector(v)
	}
	if err := msgio.Write(path, meta, mv); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

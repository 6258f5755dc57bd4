package security

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad reads arbitrary bytes as the PEM files of a process (CA,
// certificate and key), as a scheduler, worker or nanny does when it
// starts: ServerOptions, DialOptions and HTTPTLS agree, and fail with an
// error that names the files, never a panic.
func FuzzLoad(f *testing.F) {
	c, err := NewLocal(f.TempDir(), false)
	if err != nil {
		f.Fatal(err)
	}
	var pems [3][]byte
	for i, p := range []string{c.CAFile, c.CertFile, c.KeyFile} {
		if pems[i], err = os.ReadFile(p); err != nil {
			f.Fatal(err)
		}
	}
	ca, cert, key := pems[0], pems[1], pems[2]
	f.Add(ca, cert, key)
	f.Add(ca[:len(ca)/2], cert, key)
	f.Add(ca, cert[:len(cert)-30], key)
	f.Add(ca, cert, bytes.Replace(key, []byte("PRIVATE KEY"), []byte("EC PRIVATE KEY"), 2))
	f.Add(cert, ca, key)
	f.Add(ca, append(append([]byte{}, cert...), ca...), key)
	dir := f.TempDir()
	files := Config{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"),
		KeyFile: filepath.Join(dir, "key.pem")}
	f.Fuzz(func(t *testing.T, ca, cert, key []byte) {
		for _, w := range []struct {
			path string
			data []byte
		}{{files.CAFile, ca}, {files.CertFile, cert}, {files.KeyFile, key}} {
			if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, serr := files.ServerOptions()
		_, derr := files.DialOptions()
		_, herr := files.HTTPTLS()
		if (serr == nil) != (derr == nil) || (serr == nil) != (herr == nil) {
			t.Fatalf("the server, the client and the web server disagree: %v; %v; %v", serr, derr, herr)
		}
		if serr != nil && !strings.Contains(serr.Error(), dir) {
			t.Errorf("the error names no file: %v", serr)
		}
	})
}

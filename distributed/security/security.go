// Package security secures the connections of a Shoal cluster: mutual TLS
// between every process (each presents a certificate signed by the
// cluster's CA and checks the other's), and an optional shared token that
// every call must carry. NewLocal makes temporary certificates for a
// cluster on one machine.
//
// Plaintext is used only when Config.Insecure says so: a zero Config is an
// error, so that a cluster is never left open by omission.
package security

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Config says how a process secures its connections.
type Config struct {
	// CAFile, CertFile and KeyFile are PEM files: the CA that signs every
	// process's certificate, and this process's certificate and key. All
	// three set: mutual TLS.
	CAFile   string `json:"ca_file,omitempty"`
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
	// Token, when set, must be presented by every call (as a bearer
	// token); calls without it, or with another, are refused.
	Token string `json:"token,omitempty"`
	// Insecure allows plaintext connections (no TLS). It must be asked for.
	Insecure bool `json:"insecure,omitempty"`
}

// ErrNoSecurity is the error of a Config that neither sets TLS files nor
// asks for Insecure plaintext.
var ErrNoSecurity = errors.New("security: no TLS certificates given and plaintext not asked for (set Insecure to allow it)")

func (c Config) tls() bool { return c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" }

func (c Config) check() error {
	switch {
	case c.tls() && (c.CAFile == "" || c.CertFile == "" || c.KeyFile == ""):
		return fmt.Errorf("security: mutual TLS needs a CA file, a certificate file and a key file (have %q, %q, %q)",
			c.CAFile, c.CertFile, c.KeyFile)
	case c.tls() && c.Insecure:
		return errors.New("security: both TLS files and Insecure given")
	case !c.tls() && !c.Insecure:
		return ErrNoSecurity
	}
	return nil
}

func (c Config) load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return cert, nil, fmt.Errorf("security: load certificate %s and key %s: %w", c.CertFile, c.KeyFile, err)
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return cert, nil, fmt.Errorf("security: read CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return cert, nil, fmt.Errorf("security: %s holds no PEM certificate", c.CAFile)
	}
	return cert, pool, nil
}

// ServerOptions are the gRPC options of a server (the scheduler, a
// worker's control and Flight services): TLS that requires a client
// certificate signed by the CA, and the token check.
func (c Config) ServerOptions() ([]grpc.ServerOption, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if c.tls() {
		cert, pool, err := c.load()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert},
			ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13})))
	}
	if c.Token != "" {
		want := []byte("Bearer " + c.Token)
		check := func(ctx context.Context) error {
			md, _ := metadata.FromIncomingContext(ctx)
			for _, v := range md.Get("authorization") {
				if subtle.ConstantTimeCompare([]byte(v), want) == 1 {
					return nil
				}
			}
			if len(md.Get("authorization")) == 0 {
				return status.Error(codes.Unauthenticated, "shoal: this cluster requires a token, and the call has none")
			}
			return status.Error(codes.Unauthenticated, "shoal: wrong token")
		}
		opts = append(opts,
			grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				if err := check(ctx); err != nil {
					return nil, err
				}
				return h(ctx, req)
			}),
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				if err := check(ss.Context()); err != nil {
					return err
				}
				return h(srv, ss)
			}))
	}
	return opts, nil
}

// HTTPTLS is the TLS of a process's web servers (the dashboard, /metrics)
// in a cluster with certificates: HTTPS with the process's certificate,
// requiring a client certificate signed by the CA, as the cluster's other
// endpoints do (give one to the browser, or to Prometheus: tls_config's
// cert_file and key_file). Nil without certificates.
func (c Config) HTTPTLS() (*tls.Config, error) {
	if err := c.check(); err != nil || !c.tls() {
		return nil, err
	}
	cert, pool, err := c.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}, nil
}

// DialOptions are the gRPC options of connections to a cluster's
// processes: TLS with this process's certificate, checking the server's
// against the CA, and the token on every call.
func (c Config) DialOptions() ([]grpc.DialOption, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var opts []grpc.DialOption
	if c.tls() {
		cert, pool, err := c.load()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13})))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(token{value: c.Token, secure: c.tls()}))
	}
	return opts, nil
}

type token struct {
	value  string
	secure bool
}

func (t token) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + t.value}, nil
}

func (t token) RequireTransportSecurity() bool { return t.secure }

// Describe says how a connection error may come from security, to add to
// the error of a refused connection.
func Describe(err error) string {
	msg := err.Error()
	switch {
	case status.Code(err) == codes.Unauthenticated:
		return "the cluster refused the token (see security.Config.Token)"
	case strings.Contains(msg, "certificate required"):
		return "the other side wants a client certificate signed by the cluster's CA, and none was sent"
	case strings.Contains(msg, "broken pipe"):
		// With TLS 1.3 a client learns that its certificate was refused
		// (or missing) only when it next uses the connection, which the
		// other side has closed by then.
		return "the other side closed the connection: it may want a client certificate signed by the cluster's CA"
	case strings.Contains(msg, "bad certificate"),
		strings.Contains(msg, "unknown certificate authority"), strings.Contains(msg, "certificate signed by unknown authority"):
		return "TLS certificates do not match: every process needs a certificate signed by the cluster's CA"
	case strings.Contains(msg, "first record does not look like a TLS handshake"),
		strings.Contains(msg, "connection reset by peer"), strings.Contains(msg, "error reading server preface"):
		return "the other side may speak TLS where this one does not, or the other way round"
	}
	return ""
}

// NewLocal makes a CA and one certificate for 127.0.0.1 and localhost,
// valid a week, in dir (ca.pem, cert.pem, key.pem), for every process of a
// cluster on this machine, and a random token when withToken.
func NewLocal(dir string, withToken bool) (Config, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Config{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "shoal local CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Config{}, fmt.Errorf("security: make a CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Config{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Config{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "shoal"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return Config{}, fmt.Errorf("security: make a certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Config{}, err
	}
	c := Config{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"),
		KeyFile: filepath.Join(dir, "key.pem")}
	for _, f := range []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{{c.CAFile, "CERTIFICATE", caDER, 0o644}, {c.CertFile, "CERTIFICATE", der, 0o644}, {c.KeyFile, "PRIVATE KEY", keyDER, 0o600}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), f.mode); err != nil {
			return Config{}, fmt.Errorf("security: %w", err)
		}
	}
	if withToken {
		var b [24]byte
		rand.Read(b[:])
		c.Token = hex.EncodeToString(b[:])
	}
	return c, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// IsLoopback reports whether the host of addr (host:port) is a loopback
// address or "localhost": plaintext to it stays on this machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrPlaintext is the error of plaintext connections or servers that were
// not asked for: a client without security (distributed.Connect), a
// command without TLS flags (shoal scheduler, shoal worker), or a
// scheduler, worker or nanny serving beyond loopback without TLS.
var ErrPlaintext = errors.New("plaintext was not asked for: give TLS certificates, or ask for plaintext explicitly (security.Config{Insecure: true}, --insecure)")

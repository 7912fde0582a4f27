package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// certificate makes a certificate for name signed by parent (self-signed
// when nil).
func certificate(t *testing.T, name string, ca bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, notAfter time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: ca}
	if !ca {
		tmpl.DNSNames = []string{name}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key, der
}

// "UNVERIFIED: data.sf.gov may send an incomplete TLS chain" (evidence
// tls-chain-unverified): a server that sends its certificate
// without the intermediate does not verify in Go, and doctor names the
// missing intermediate; an expired certificate names the clock.
func TestDoctorTLS(t *testing.T) {
	t.Parallel()
	far := time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	root, rootKey, _ := certificate(t, "Test Root", true, nil, nil, far)
	inter, interKey, _ := certificate(t, "Test AlphaSSL CA 2025", true, root, rootKey, far)
	roots := x509.NewCertPool()
	roots.AddCert(root)
	serve := func(chain [][]byte, key *ecdsa.PrivateKey) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: chain, PrivateKey: key}}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	_, leafKey, leafDER := certificate(t, "data.sf.gov", false, inter, interKey, far)
	interDER := inter.Raw
	now := func() time.Time { return time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC) }

	_, status, detail, _ := tlsCheck(t.Context(), "data.sf.gov", serve([][]byte{leafDER, interDER}, leafKey), roots, now)
	if status != "ok" {
		t.Errorf("whole chain: %s %s; want ok", status, detail)
	}
	_, status, detail, fix := tlsCheck(t.Context(), "data.sf.gov", serve([][]byte{leafDER}, leafKey), roots, now)
	if status != "FAIL" || !strings.Contains(detail, "without the intermediate") || !strings.Contains(fix, "intermediate certificate") {
		t.Errorf("leaf alone: %s %s; fix %s; want FAIL naming the missing intermediate", status, detail, fix)
	}
	late := func() time.Time { return time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC) }
	_, status, detail, fix = tlsCheck(t.Context(), "data.sf.gov", serve([][]byte{leafDER, interDER}, leafKey), roots, late)
	if status != "FAIL" || !strings.Contains(fix, "clock") {
		t.Errorf("a clock past the certificate: %s %s; fix %s; want FAIL naming the clock", status, detail, fix)
	}
}

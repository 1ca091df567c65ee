// Command devcerts writes development TLS material for the webhook server: a
// throw-away CA (ca.crt) and a serving certificate and key (tls.crt, tls.key)
// for localhost, 127.0.0.1, ::1 and the in-cluster Service name. Existing
// material is kept while it is valid for more than a day.
//
//	go run ./hack/devcerts [-dir certs] [-force]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

func main() {
	dir := flag.String("dir", "certs", "directory to write ca.crt, tls.crt and tls.key into")
	force := flag.Bool("force", false, "write new material even if the existing one is valid")
	flag.Parse()

	now := time.Now()
	if !*force {
		if err := certgen.Check(*dir, certgen.DefaultHosts, now); err == nil {
			fmt.Printf("devcerts: %s already holds a valid CA and serving certificate\n", *dir)
			return
		}
	}
	if err := certgen.Generate(*dir, certgen.DefaultHosts, now); err != nil {
		fmt.Fprintf(os.Stderr, "devcerts: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("devcerts: wrote %s/{%s,%s,%s}, valid until %s, for %s\n", *dir,
		certgen.CAFile, certgen.CertFile, certgen.KeyFile,
		now.Add(certgen.Validity).Format(time.DateOnly), strings.Join(certgen.DefaultHosts, ", "))
}

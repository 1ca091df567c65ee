package main

import (
	"io"
	stdlog "log"
	"strings"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// newLogger returns a zap-backed logr.Logger honouring log.level and log.format.
// logr's V(1) is zap's debug level. Stack traces only from DPanic up (zap
// would add one to every error): errors any client can provoke must not
// cost 30 lines each, and a recovered panic logs its own stack anyway.
func newLogger(c config.Log, w io.Writer) logr.Logger {
	level := zapcore.InfoLevel
	switch c.Level {
	case "debug":
		level = zapcore.DebugLevel
	case "warn":
		level = zapcore.WarnLevel
	case "error":
		level = zapcore.ErrorLevel
	}
	encoder := zap.JSONEncoder()
	if c.Format == "console" {
		encoder = zap.ConsoleEncoder()
	}
	return zap.New(zap.Level(level), encoder, zap.WriteTo(w), zap.StacktraceLevel(zapcore.DPanicLevel))
}

// setProcessLogger makes l the logger of controller-runtime, client-go
// (klog) and the standard library's log. klog.SetLogger must not race with
// logging goroutines, hence once per process, before serving.
func setProcessLogger(l logr.Logger) {
	ctrl.SetLogger(l)
	klog.SetLogger(l)
	stdlog.SetFlags(0)
	stdlog.SetOutput(newStdLogWriter(l))
}

// stdLogWriter carries the standard library's log into the process's
// logger, thinned out: net/http writes a line there for every failed TLS
// handshake, which any client can provoke (a scanner, a client refused by
// server.clientAuth).
type stdLogWriter struct {
	log  logr.Logger
	thin *ratelog.Log
}

func newStdLogWriter(log logr.Logger) stdLogWriter {
	return stdLogWriter{log: log.WithName("stdlib"), thin: ratelog.New(ratelog.DefaultRate, ratelog.DefaultBurst)}
}

func (w stdLogWriter) Write(p []byte) (int, error) {
	w.thin.Info(w.log, "Go standard library message", "text", strings.TrimSpace(string(p)))
	return len(p), nil
}

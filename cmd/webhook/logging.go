package main

import (
	"io"
	"strings"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// newLogger returns a zap-backed logr.Logger honouring log.level and log.format.
// logr's V(1) is zap's debug level.
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
	return zap.New(zap.Level(level), encoder, zap.WriteTo(w))
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

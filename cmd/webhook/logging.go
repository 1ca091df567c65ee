package main

import (
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seedwarden/seedwarden/internal/config"
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

// loadConfig returns the defaults without a file.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path, configChecks...)
}

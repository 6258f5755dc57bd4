package diagnostics

import (
	"io"
	"log/slog"

	"github.com/lmittmann/tint"
)

// NewConsoleHandler returns a slog handler for people: one short line per
// record, coloured when w is a terminal and plain otherwise. level is the
// least level written (slog.LevelInfo if nil).
func NewConsoleHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return tint.NewHandler(w, &tint.Options{
		Level:      level,
		TimeFormat: "15:04:05.000",
		NoColor:    !isTerminal(w),
	})
}

// NewJSONHandler returns a slog handler for machines: one JSON object per
// record and line, which can be read back as a table. level is the least
// level written (slog.LevelInfo if nil).
func NewJSONHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
}

// DiscardLogger returns a logger that writes nothing, for components that
// were given no logger.
func DiscardLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}
